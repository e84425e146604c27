"""The spec's test for a floating reference (section 1, "Pinned versus floating")."""

from __future__ import annotations

import re
from typing import Any

FLOATING_WORDS = frozenset(
    "latest current stable head main master default newest dev nightly next tip edge".split()
)
_RANGE_CHARS = re.compile(r"[*^~><|,\s]")


def floating_reason(value: Any) -> str | None:
    """Why `value` does not pin one exact artifact, or None when it is pinned.

    >>> floating_reason("1.4.2") is None
    True
    >>> floating_reason("^1.4")
    "a range ('^'), not one version"
    """
    if value is None:
        return "empty"
    if isinstance(value, bool) or isinstance(value, (dict, list)):
        return "not a version string"
    if isinstance(value, (int, float)):
        return None  # `version: 3` is pinned
    text = str(value)
    if text == "":
        return "empty"
    lowered = text.lower()
    if lowered in FLOATING_WORDS:
        return f"the moving name {text!r}"
    if lowered.endswith("-latest"):
        return "a '-latest' alias that moves"
    match = _RANGE_CHARS.search(text)
    if match:
        char = match.group(0)
        if char.isspace():
            return "contains whitespace"
        return f"a range ({char!r}), not one version"
    if text.startswith("="):
        return "a constraint ('='), not a version"
    if any(part in ("x", "X") for part in text.split(".")):
        return "a wildcard component ('x')"
    return None


def is_floating(value: Any) -> bool:
    return floating_reason(value) is not None
