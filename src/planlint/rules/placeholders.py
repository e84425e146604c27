"""Unfinished values: PL008."""

from __future__ import annotations

import re
from typing import Any, Iterator

from planlint.core.messages import show
from planlint.core.unfilled import PLACEHOLDER_WORDS, placeholder
from planlint.rules.base import ERROR, WARNING, PlanContext, Problem, plan_strings, rule
from planlint.rules.run import placeholder_problems

# What every placeholder holds (a word, `...`, or `<` for one in angle brackets):
# a plan without any of these anywhere has none, and is not walked value by value.
_MAYBE = re.compile("|".join(map(re.escape, (*PLACEHOLDER_WORDS, "...", "<"))))


def _strings(node: Any) -> Iterator[tuple[tuple, str]]:
    """(route, text) for every string value (not key) of the plan, without recursion; aliases once."""
    stack: list[tuple[Any, tuple]] = [(node, ())]
    seen: set[int] = set()
    while stack:
        value, where = stack.pop()
        if isinstance(value, (dict, list)):
            if id(value) in seen:
                continue
            seen.add(id(value))
            items = value.items() if isinstance(value, dict) else enumerate(value)
            stack.extend((item, where + (key,)) for key, item in reversed(list(items)))
        elif type(value) is str:
            yield where, value


@rule("PL008", "placeholder-value", ERROR)
def placeholder_value(ctx: PlanContext) -> Iterator[Problem]:
    """A value is an unfinished placeholder (`TODO-commit`, `TBD`, `...`, `<model revision>`).

    A template's blank that was never filled in passes every other check: it
    is a string, often one that looks pinned (`revision: TODO-commit`). A
    value is a placeholder when one of the words TODO, TBD, FIXME, XXX,
    CHANGEME or REPLACE_ME, in capitals and not touching another letter or
    digit, is a blank of it: it starts the value (`TODO the one behaviour`,
    `TBD`), ends it (`tau-bench tickets, TBD`), or is part of a token
    (`TODO-commit`, `TODO_group_field`, `@TODO-team`, `org/TODO-model`,
    `TODO: decide`); or when the value is `...`, or wholly in angle brackets
    (`<model revision>`). Between the words of a sentence such a word is
    prose (`Answer tickets about the TODO list feature`), and `todo-app`,
    `Todoist` or `XXXL` are no placeholder words at all. An
    error, and a warning while `metadata.status` is `draft`, so the output of
    `planlint init` can be committed as a draft. One finding per value: a
    placeholder is reported by this rule only, not also as floating or
    malformed. The run configs the plan names (`run:`) are checked the
    same way.

    Example (fails):
        metadata:
          name: retail-refund-window
          owner: "@support-ml"
          status: approved
        base_model:
          name: Qwen/Qwen3-8B
          revision: TODO-commit
    Example (passes):
        metadata:
          name: retail-refund-window
          owner: "@support-ml"
          status: approved
        base_model:
          name: Qwen/Qwen3-8B
          revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345
    """
    yield from placeholder_problems(ctx)  # the run configs the plan names
    if not _MAYBE.search(plan_strings(ctx)):
        return
    draft = ctx.get("metadata", "status") == "draft"
    for route, text in _strings(ctx.data):
        why = placeholder(text)
        if why:
            advice = "fill it in before the plan leaves draft" if draft else "fill it in: a plan past draft holds no placeholders"
            yield Problem(route, f"{show(text)} is a placeholder ({why}): {advice}", severity=WARNING if draft else None)
