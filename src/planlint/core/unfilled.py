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
_OPENING = " \t\"'([{<@#*-"  # what may come before a placeholder that starts a value
_CLOSING = " \t.,;:!?)]}>\"'*"  # what may come after one that ends it
_JOINERS_BEFORE = "-_/@."  # a template's token: org/TODO-model, @TODO-team, v1.TODO
_JOINERS_AFTER = "-_/:"  # TODO-commit, TODO_group_field, "TODO: say why"


def _as_placeholder(text: str, match: re.Match) -> bool:
    """Is this placeholder word a blank of the value, not a word of its prose?

    It is when it starts the value (`TODO the one behaviour`, `TBD`), ends it
    (`tau-bench tickets, TBD`), or is part of a token (`TODO-commit`,
    `org/TODO-model`, `TODO: decide`). In the middle of a sentence, between
    words, it is a word like any other: `Answer tickets about the TODO list feature`.
    """
    before, after = text[: match.start()], text[match.end():]
    if not before.strip(_OPENING) or not after.strip(_CLOSING):
        return True
    return before[-1] in _JOINERS_BEFORE or after[0] in _JOINERS_AFTER


def placeholder(text: str) -> str | None:
    """What makes `text` a placeholder (for a message), or None."""
    for match in _WORD.finditer(text):
        if _as_placeholder(text, match):
            return f"it holds the placeholder word {match.group(1)}"
    stripped = text.strip()
    if stripped == "...":
        return "it is '...'"
    if _ANGLED.fullmatch(stripped):
        return "it is wholly in angle brackets, as a template's blank is"
    return None
