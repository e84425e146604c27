"""The placeholder test (PL008's): a value that is a template's blank, never filled in.

Kept in core so that every rule family can ask it: PL008 reports placeholders
in a plan and in the run configs it names, and the run rules (rules/run/)
leave a placeholder alone rather than also calling it drift or a missing file
(one problem, one finding).
"""

from __future__ import annotations

import re

PLACEHOLDER_WORDS = ("TODO", "TBD", "FIXME", "XXX", "CHANGEME", "REPLACE_ME")
# In capitals, not touching another letter or digit: `TODO-commit`,
# `TODO_group_field`, `@TODO-team` count; `todo-app`, `Todoist`, `XXXL` do not.
_WORD = re.compile(r"(?<![A-Za-z0-9])(" + "|".join(PLACEHOLDER_WORDS) + r")(?![A-Za-z0-9])")
_ANGLED = re.compile(r"<[^<>]+>")


def placeholder(text: str) -> str | None:
    """What makes `text` a placeholder (for a message), or None."""
    match = _WORD.search(text)
    if match:
        return f"it holds the placeholder word {match.group(1)}"
    stripped = text.strip()
    if stripped == "...":
        return "it is '...'"
    if _ANGLED.fullmatch(stripped):
        return "it is wholly in angle brackets, as a template's blank is"
    return None
