"""Rules about the file itself and about the run's plans together.

PL001, PL002 and PL006 come from loading the file (the loader finds them
while it streams; these entries document them, see docs/ARCHITECTURE.md for
why). PL003, PL004, PL005, PL009 and PL010 are checks like any other, which
the engine calls at the point of the run where they can be decided: PL003 on
every plan before the plan rules (it validates against rules/schema.py),
PL004 on a file that is not a plan, PL005 once every plan is linted (as PL507
in rules/budget.py and PL904 in rules/run/unplanned.py), PL009 and PL010 once every
finding was matched against the suppression comments.
"""

from __future__ import annotations

from typing import Iterator

from planlint.core.messages import show
from planlint.core.model import PLAN_API_VERSION, PLAN_KIND, is_plan
from planlint.rules.base import ERROR, WARNING, PlanContext, Problem, RepoContext, SuppressionContext, no_check, rule
from planlint.rules.schema import schema_problems

yaml_syntax = rule("PL001", "yaml-syntax", ERROR, scope="file")(no_check)
yaml_syntax.doc = """The file is not valid YAML, or uses YAML the plan format refuses.

    A plan that does not parse cannot be checked at all, so nothing else is
    reported for it. Tags other than the YAML core ones (`!!python/...`, custom
    `!tags`) are refused and never constructed: a plan is data, not code.
    The finding points at the parser's error position.

    Example (fails):
        # whole file
        apiVersion: planlint/v1
        kind: ExperimentPlan
        metadata:
          name: retail-refund-window
           owner: "@support-ml"
    Example (passes):
        metadata:
          name: retail-refund-window
          owner: "@support-ml"
    """

duplicate_key = rule("PL002", "duplicate-key", ERROR, scope="file")(no_check)
duplicate_key.doc = """A mapping repeats a key.

    YAML loaders silently keep one of the two values (which one depends on the
    tool), so a reviewer reading the first value may approve the second. The
    first value is kept and the repeated key is reported.

    Example (fails):
        budget:
          currency: USD
          max_spend: 250
          max_spend: 2500
    Example (passes):
        budget:
          currency: USD
          max_spend: 250
          approved_by: "@ml-leads"
    """

@rule("PL003", "schema", ERROR, scope="file")
def schema(ctx: PlanContext) -> Iterator[Problem]:
    """The plan breaks the JSON Schema of the plan format.

    Unknown keys (typos must not pass silently), wrong types and missing
    required sections are reported at the offending key or value. Keys starting
    with `x-` and anything under `metadata.labels` are allowed. A missing key
    that has a rule of its own (dataset release, eval split, baseline, budget,
    ...) is reported by that rule instead.

    Example (fails):
        dataset:
          name: retail-refunds
          release: "2026.11.03"
          fromat: task_metadata
    Example (passes):
        dataset:
          name: retail-refunds
          release: "2026.11.03"
          format: task_metadata
          x-owner-note: imported from the ticket export
    """
    # The engine calls this before the plan rules, outside their time-budget loop
    # (the schema walk is linear in the capped node count).
    yield from schema_problems(ctx.data)


@rule("PL004", "not-a-plan", ERROR, scope="file")
def not_a_plan(ctx: PlanContext) -> Iterator[Problem]:
    """A file named on the command line is not a v1 experiment plan.

    A plan's top level is a mapping with `apiVersion: planlint/v1` and
    `kind: ExperimentPlan`, decided from the decoded YAML. Files found by
    searching a directory that are not plans are skipped; a file you name
    explicitly is expected to be one.

    Example (fails):
        # whole file
        apiVersion: planlint/v2
        kind: ExperimentPlan
    Example (passes):
        apiVersion: planlint/v1
        kind: ExperimentPlan
    """
    data = ctx.data
    if is_plan(data):
        return
    if not isinstance(data, dict):
        what = "empty" if data is None else f"{'a list' if isinstance(data, list) else 'a scalar'}, not a mapping"
        yield Problem((), f"not a plan: the top level is {what}; a plan is a mapping with apiVersion: {PLAN_API_VERSION} and kind: {PLAN_KIND}")
    elif "apiVersion" not in data:
        yield Problem(("apiVersion",), f"not a plan: apiVersion is missing; a v1 plan starts with apiVersion: {PLAN_API_VERSION}", missing=True)
    elif data["apiVersion"] != PLAN_API_VERSION:
        yield Problem(("apiVersion",), f"not a v1 plan: apiVersion is {show(data['apiVersion'])}, expected {PLAN_API_VERSION}")
    elif "kind" not in data:
        yield Problem(("kind",), f"not a plan: kind is missing; a plan has kind: {PLAN_KIND}", missing=True)
    else:
        yield Problem(("kind",), f"not a plan: kind is {show(data['kind'])}, expected {PLAN_KIND}")

@rule("PL005", "duplicate-plan-name", ERROR, scope="repo")
def duplicate_plan_name(ctx: RepoContext) -> Iterator[Problem]:
    """Two linted plans share `metadata.name`.

    Plan names identify experiments in dashboards, run names and review
    threads; two plans with one name make results attributable to the wrong
    design. Every plan after the first with a given name is reported.
    When files are named (as pre-commit names the staged ones) inside a git
    repository, the repository's other plans under `plans/` count too, so a
    new plan that reuses a committed plan's name fails the hook, not the
    next full run; in diff mode the unchanged plans count.

    Example (fails):
        # two files
        metadata:
          name: retail-refund-window
    Example (passes):
        metadata:
          name: retail-refund-window
    """
    first = dict(ctx.others)
    for plan in ctx.plans:
        if plan.name is None:
            continue
        if plan.name in first:
            yield Problem(
                ("metadata", "name"),
                f"metadata.name {show(plan.name)} is already used by {first[plan.name]}: give each plan a unique name",
                path=plan.path,
            )
        else:
            first[plan.name] = plan.path

unreadable_file = rule("PL006", "unreadable-file", ERROR, scope="file")(no_check)
unreadable_file.doc = """The file cannot be read as a plan: not UTF-8, too large, or unreadable.

    UTF-16 and UTF-32 files are read when they start with a byte order mark
    (a `working-tree-encoding` checkout); without one they are PL006. A YAML
    file found in a linted directory that cannot be read is reported too: a
    plan cannot disappear from the check by being unreadable. Also reported when the file exceeds the parser's safety limits (nesting
    depth, alias expansion, time budget): plan files come from pull requests
    and are treated as untrusted input. For the same reason a file that is a
    symbolic link leading out of the repository (or under a linked
    directory) is not opened at all, and reported here without an excerpt;
    nor is a named pipe or a socket (opening a pipe would wait for a writer
    and hold the run).

    Example (fails):
        # encoding: latin-1
        behavior:
          summary: Refund only eligible orders (café vouchers excluded)
    Example (passes):
        behavior:
          summary: Refund only eligible orders (café vouchers excluded)
    """

@rule("PL007", "almost-a-plan", ERROR, scope="file")
def almost_a_plan(ctx: PlanContext) -> Iterator[Problem]:
    """A YAML file found in a linted directory is almost a plan, but not one.

    A discovered file that is not a plan is skipped, so a typo in a marker
    (`kind: ExperimentPlans`, `apiVersion: planlint/v2`) made a plan vanish
    from the check ("0 files checked") with its problems. Reported when the
    top level is a mapping and its `apiVersion` starts with `planlint/` but
    is not `planlint/v1`, or its `kind` is within edit distance 2 of
    `ExperimentPlan` (in any case) without being it, or exactly one of the
    two markers is right. The finding points at the offending value (1:1
    when it is missing) and says what was expected. A file named on the
    command line that is not a plan is PL004 instead.

    Example (fails):
        # whole file
        # found in a directory
        apiVersion: planlint/v1
        kind: ExperimentPlans
    Example (passes):
        apiVersion: planlint/v1
        kind: ExperimentPlan
    """
    data = ctx.data
    if not isinstance(data, dict) or is_plan(data):
        return
    api, kind = data.get("apiVersion"), data.get("kind")
    api_right, kind_right = api == PLAN_API_VERSION, kind == PLAN_KIND
    api_near = isinstance(api, str) and api.startswith("planlint/") and not api_right
    kind_near = isinstance(kind, str) and not kind_right and _edit_distance(kind.lower(), PLAN_KIND.lower(), 2) <= 2
    if not (api_near or kind_near or api_right != kind_right):
        return
    wrong = []
    if not api_right:
        wrong.append(f"apiVersion is {show(api)}, expected {PLAN_API_VERSION}" if "apiVersion" in data else f"apiVersion is missing, expected apiVersion: {PLAN_API_VERSION}")
    if not kind_right:
        wrong.append(f"kind is {show(kind)}, expected {PLAN_KIND}" if "kind" in data else f"kind is missing, expected kind: {PLAN_KIND}")
    # At the first wrong marker written down; at 1:1 when the wrong ones are all missing.
    candidates = [k for k, right in (("apiVersion", api_right), ("kind", kind_right)) if not right]
    key = next((k for k in candidates if k in data), candidates[0])
    yield Problem((key,), f"almost a plan, so it is not linted as one: {' and '.join(wrong)}", missing=key not in data)


def _edit_distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance, or limit + 1 once it is certainly over `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


@rule("PL009", "suppression-without-reason", ERROR, scope="file")
def suppression_without_reason(ctx: SuppressionContext) -> Iterator[Problem]:
    """A suppression comment gives no reason after `--`.

    A suppression is a decision someone made; the reason is what lets the next
    reviewer judge whether it still holds.

    Example (fails):
        splits:
          train:
            path: data/retail/train.jsonl
          eval:
            path: data/retail/eval.jsonl
            frozen: false  # planlint: disable=PL205
          boundary:
            group_key: customer_id
    Example (passes):
        splits:
          train:
            path: data/retail/train.jsonl
          eval:
            path: data/retail/eval.jsonl
            frozen: false  # planlint: disable=PL205 -- eval rotates weekly by design
          boundary:
            group_key: customer_id
    """
    for s in ctx.suppressions:
        if not s.reason:
            yield Problem((), f"suppression of {', '.join(s.codes) or 'nothing'} gives no reason: add one after --, e.g. '# planlint: {s.kind}={','.join(s.codes)} -- why this is fine'", span=s.span)

@rule("PL010", "unused-suppression", WARNING, scope="file")
def unused_suppression(ctx: SuppressionContext) -> Iterator[Problem]:
    """A suppression comment suppresses nothing, or names no rule.

    Stale suppressions hide the next real problem on that line. Remove the
    comment, or the codes in it that no longer fire. A suppression naming
    something that is neither a rule code nor a rule name (`disable=PL999`,
    a misspelt name) silences nothing and is reported as naming no rule.

    Example (fails):
        splits:
          train:
            path: data/retail/train.jsonl
          eval:
            path: data/retail/eval.jsonl
            frozen: true  # planlint: disable=PL205 -- eval rotates weekly
          boundary:
            group_key: customer_id
    Example (passes):
        splits:
          train:
            path: data/retail/train.jsonl
          eval:
            path: data/retail/eval.jsonl
            frozen: true
          boundary:
            group_key: customer_id
    """
    # Read lazily: the engine marks a suppression of PL010 itself as used
    # between two of these problems.
    for s in ctx.suppressions:
        message = _unused_message(s, ctx.judged)
        if message:
            yield Problem((), message, span=s.span)


def _unused_message(s, judged) -> str | None:
    """What PL010 says about one suppression, or None when all it names is needed."""
    if not s.codes and not s.unknown:
        return "this suppression names no rule: write rule codes or names after '=', e.g. disable=PL205 or disable=eval-not-frozen"
    parts = []
    if s.unknown:
        listed = ", ".join(show(u) for u in s.unknown)
        parts.append(f"names no rule: {listed} {'is' if len(s.unknown) == 1 else 'are'} neither a rule code nor a rule name (planlint rules lists them)")
    unused = [c for c in s.codes if c not in s.used and judged(c)]
    if unused:
        if not s.unknown and len(unused) == len(s.codes):
            parts.append("suppresses nothing: remove it")
        else:
            parts.append(f"does not need {', '.join(unused)}: remove {'it' if len(unused) == 1 else 'them'}")
    return "this suppression " + "; it ".join(parts) if parts else None
