"""The spec's test for a floating reference (section 1, "Pinned versus floating"), and the providers'
dated model snapshots, whose name alone pins them."""

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


# A provider's dated snapshot never changes, so its name alone pins the model
# (docs/plan-format.md, "Pinned versus floating references"). The forms the
# providers document: OpenAI `-YYYY-MM-DD`, Anthropic `-YYYYMMDD` (`@YYYYMMDD`
# on Vertex AI), Google Gemini's stable versions `-NNN`.
_DATE = r"(?:19|20)\d\d"
_MONTH, _DAY = r"(?:0[1-9]|1[0-2])", r"(?:0[1-9]|[12]\d|3[01])"
SNAPSHOT_FORMS = (
    ("OpenAI", "-YYYY-MM-DD", re.compile(rf"-{_DATE}-{_MONTH}-{_DAY}$")),  # gpt-4.1-mini-2025-04-14
    ("Anthropic", "-YYYYMMDD", re.compile(rf"[-@]{_DATE}{_MONTH}{_DAY}$")),  # claude-3-5-sonnet-20241022
    ("Google", "-NNN", re.compile(r"^gemini-.+-\d{3}$", re.IGNORECASE)),  # gemini-1.5-pro-002
)


def dated_snapshot(name: Any) -> str | None:
    """The provider whose dated snapshot form `name` has (the model cannot move under it), or None.

    >>> dated_snapshot("gpt-4.1-mini-2025-04-14")
    'OpenAI'
    >>> dated_snapshot("gpt-5-mini") is None
    True
    """
    if not isinstance(name, str) or floating_reason(name):
        return None
    for provider, _, form in SNAPSHOT_FORMS:
        if form.search(name.strip()):
            return provider
    return None
