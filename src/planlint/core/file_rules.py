"""Settings that change the rules for some files only: `per-file-ignores` and severity by plan status.

    per-file-ignores:
      "plans/archive/**": "PL205, PL305 -- archived plans are kept as they ran"
    severity:
      PL205: error                           # every plan
      PL404: {draft: warning}                # by metadata.status; other statuses keep the rule's own

`per-file-ignores` maps a glob (gitignore-style, relative to the config file,
as `exclude`) to the rules to turn off for the files it matches, in the form
of a suppression comment: codes or names, then `--` and the reason, which is
required. A `severity:` entry may map a code to a level, or to a mapping of
plan statuses to levels. `Config.narrowed` applies both to one file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

STATUSES = ("draft", "approved", "running", "completed", "abandoned")
LEVELS = ("error", "warning")


@dataclass(frozen=True)
class PerFileIgnore:
    """One `per-file-ignores` entry: the glob as written, the codes it turns off, and why."""

    pattern: str
    codes: tuple[str, ...]
    reason: str


def parse_per_file_ignores(
    value: Any, fail: Callable[[str, str], Exception], selector: Callable[[str], str], codes: Iterable[str] | None,
) -> list[PerFileIgnore]:
    """The entries of a `per-file-ignores` mapping.

    `fail(key, problem)` builds the error to raise; `selector` turns a rule
    name into its code; `codes` is every rule code (None: not checked).
    """
    if not isinstance(value, dict):
        raise fail("per-file-ignores", 'expected a mapping of glob to "CODES -- reason", e.g. {"plans/archive/**": "PL205 -- archived as run"}')
    known = set(codes) if codes is not None else None
    entries: list[PerFileIgnore] = []
    for pattern, written in value.items():
        key = f"per-file-ignores: {str(pattern)[:80]!r}"
        if not isinstance(pattern, str) or not pattern.strip():
            raise fail(key, "expected a glob, e.g. plans/archive/**")
        if not isinstance(written, str):
            raise fail(key, 'expected "CODES -- reason" (codes or rule names, then the reason after --)')
        named, dashes, reason = written.partition("--")
        if not dashes or not reason.strip():
            raise fail(key, 'give the reason after " -- ", as a suppression comment does: "PL205 -- archived plans are kept as they ran"')
        parts = [selector(part) for part in re.split(r"[\s,]+", named) if part]
        if not parts:
            raise fail(key, "name at least one rule before --")
        for code in parts:
            if not re.fullmatch(r"PL[0-9]{3}", code) or (known is not None and code not in known):
                raise fail(key, f"{code[:40]!r} is not a rule code or name (planlint rules lists them)")
        entries.append(PerFileIgnore(pattern, tuple(dict.fromkeys(parts)), " ".join(reason.split())))
    return entries


def parse_status_levels(written: str, value: Mapping[Any, Any], fail: Callable[[str], Exception]) -> dict[str, str]:
    """`{approved: error, running: error}`: a `severity:` entry given per plan status."""
    levels: dict[str, str] = {}
    for status, level in value.items():
        if status not in STATUSES:
            raise fail(f"{written}: {str(status)[:40]!r} is not a plan status (expected {', '.join(STATUSES)})")
        if level not in LEVELS:
            raise fail(f"{written}: {status}: {level!r}: expected error or warning")
        levels[str(status)] = str(level)
    if not levels:
        raise fail(f"{written}: expected error, warning, or a mapping of plan status to error or warning")
    return levels
