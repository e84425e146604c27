"""Test-only fixable rules whose fixes enable one another, never settle, or undo each other.

No two of planlint's own fixes enable one another: the one data dependency
between them is PL502 reading `budget.currency`, which PL503 writes, and PL502
normalises it exactly as PL503 does. So the chain `--fix`'s passes are tested
with is made here, the way the issue describes one: a grader renamed (its
publisher retired the old name), then PL302's own fix, whose catalog lookup of
the newest version finds nothing under the old name and pins by the new one.
`installed()` registers such rules for the length of a test, in this process.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from planlint.core.yaml_values import parse_number
from planlint.rules.base import ERROR, Fix, PlanContext, Problem, Replace, Rule, rule

# Retired grader names -> the names the catalog (tests/fixtures/fix/catalog.yaml) publishes them under.
RETIRED = {"polite-tone-judge-2025": "polite-tone-judge", "tau-retail-db-state-v1": "tau-retail-db-state"}


@rule("PL991", "grader-renamed", ERROR, fixable=True)
def grader_renamed(ctx: PlanContext) -> Iterator[Problem]:
    """A grader goes by a name its publisher has retired (test-only)."""
    for index, grader in ctx.graders():
        new = RETIRED.get(grader.get("name"))  # type: ignore[arg-type]
        if new is not None:
            route = ("graders", index, "name")
            yield Problem(route, f"grader name {grader['name']!r} is retired: it is {new!r} now",
                          fix=Fix(f"graders[{index}].name {grader['name']!r} -> {new!r}", (Replace(route, new),)))


@rule("PL992", "steps-below-a-thousand", ERROR, fixable=True)
def steps_below_a_thousand(ctx: PlanContext) -> Iterator[Problem]:
    """`decision.stopping.max_steps` is below 1000; its fix adds one step, so it never settles in ten passes (test-only)."""
    route = ("decision", "stopping", "max_steps")
    steps = ctx.get(*route)
    if isinstance(steps, int) and not isinstance(steps, bool) and steps < 1000:
        yield Problem(route, "fewer than 1000 steps", fix=Fix(f"max_steps {steps} -> {steps + 1}", (Replace(route, parse_number(str(steps + 1))),)))


@rule("PL993", "summary-flip", ERROR, fixable=True)
def summary_flip(ctx: PlanContext) -> Iterator[Problem]:
    """`behavior.summary` is `ping` or `pong`; its fix writes the other, so two passes undo each other (test-only)."""
    route = ("behavior", "summary")
    other = {"ping": "pong", "pong": "ping"}.get(ctx.get(*route))  # type: ignore[arg-type]
    if other is not None:
        yield Problem(route, "ping or pong", fix=Fix(f"behavior.summary -> {other}", (Replace(route, other),)))


@contextmanager
def installed(*rules: Rule) -> Iterator[None]:
    """Register `rules` as plan rules that --fix may fix, for the `with` block (this process only)."""
    import planlint.engine.lint as lint
    import planlint.modes.fixes as fixes
    import planlint.rules as registry

    saved = (lint.PLAN_RULES, fixes.FIXING_RULES)
    registry.RULES.update({r.code: r for r in rules})
    lint.PLAN_RULES = saved[0] + rules
    fixes.FIXING_RULES = saved[1] + rules
    try:
        yield
    finally:
        lint.PLAN_RULES, fixes.FIXING_RULES = saved
        for r in rules:
            del registry.RULES[r.code]
