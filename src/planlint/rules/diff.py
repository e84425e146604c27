"""Diff-mode rules: PL701-PL704, PL706 and PL709, a plan compared with its version at the base revision.

These rules run only with `--diff-base REV`. They never touch git: diff mode
(`planlint.modes.diff`) reads the base version of each changed plan and hands
it to them as fields of the context:

* `ctx.base`: the plan's data at the merge-base (a dict), or None
  when the plan is new or its base version was not a readable plan;
* `ctx.change`: a `PlanChange` saying how the file changed.

PL707, which judges the pull request's reviews, is in `rules/approvals.py`.

For a deleted plan `ctx.data` is empty: only PL704 has something to say.

Values are compared as data, not text: key order, quoting, comments and
layout do not count as changes, and numbers compare by how they are written
(`release: 2026.10` differs from `release: 2026.1`), like everywhere else in
planlint.

Docstring examples show both sides: the fragment after `# base` is laid over
the reference plan and committed at the base revision; the fragment after
`# head` is laid over that base version and committed on the branch.
`# head: deleted` deletes the plan; `# head: renamed` moves it to another file
(with the head fragment applied).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from planlint.core.messages import sanitize, show
from planlint.core.positions import yaml_path
from planlint.core.yaml_values import YamlFloat, YamlInt, scalar_text
from planlint.rules.base import ERROR, MISSING, WARNING, PlanContext, Problem, lookup, rule
from planlint.rules.budget import currency_code, spend_amount
from planlint.rules.recurrence import Rise, spend_rises
from planlint.rules.run import trainer_running

FROZEN_STATUSES = ("approved", "running", "completed")


@dataclass(frozen=True)
class PlanChange:
    """How one plan file changed between the base revision and the working tree.

    `kind` is "added", "modified", "renamed" or "deleted". `path` is where the
    plan is now (for a deleted plan: where it was); `base_path` where it was at
    the base revision (None for an added plan). Both are display paths.
    """

    kind: str
    path: str
    base_path: str | None = None
    no_longer_a_plan: str | None = None  # for a file still there: what it is now, when not a readable plan
    splits: tuple[SplitChange, ...] = ()  # splits whose path stayed while their data changed (diff mode reads git)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


@dataclass(frozen=True)
class SplitChange:
    """A split whose `path` is the same at the base and at head, but whose data differ.

    `files_base`/`files_head`: how many files the path names on each side
    (a glob's matches); `added`/`removed`: rows added and removed over the
    changed files, or None when they could not be counted (not text, or too large).
    """

    split: str  # "eval" or "train"
    path: str  # the split's path, as the plan writes it
    files_base: int
    files_head: int
    added: int | None = None
    removed: int | None = None

    def words(self) -> str:
        """"15 rows removed and 0 added", or what changed when rows were not counted."""
        if self.added is not None and self.removed is not None:
            return f"{_plural(self.removed, 'row')} removed and {self.added} added"
        if self.files_base != self.files_head:
            return f"it names {_plural(self.files_head, 'file')} where it named {self.files_base}, rows not counted"
        return "its files were rewritten (rows not counted: not JSON Lines, JSON, CSV or TSV text of at most 64 MiB)"


# --------------------------------------------------------------------------- comparing


def _scalar(value: Any) -> Any:
    return scalar_text(value) if isinstance(value, (YamlInt, YamlFloat)) else value


def same(a: Any, b: Any) -> bool:
    """Whether two versions of a value are the same data.

    Mappings compare without regard to key order; numbers by their source
    text, so `2026.10` and `2026.1` differ, while `3` equals `"3"` (quoting
    alone is not a change). Iterative: hostile nesting cannot exhaust the stack.
    """
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, dict) and isinstance(y, dict):
            if x.keys() != y.keys():
                return False
            stack.extend((x[key], y[key]) for key in x)
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif isinstance(x, (dict, list)) or isinstance(y, (dict, list)):
            return False
        elif type(x) is bool or type(y) is bool:
            if x is not y:  # True is not 1
                return False
        elif _scalar(x) != _scalar(y):
            return False
    return True


def first_change(base: Any, head: Any, route: tuple) -> tuple[tuple, str] | None:
    """Where `head` first differs from `base`, as (route, "changed" | "added" | "removed").

    Walks in the head's key order, so the finding points at the first changed
    value a reader meets in the head plan; keys removed from a mapping come
    after that mapping's changed values. Iterative: hostile nesting cannot
    exhaust the stack.
    """
    stack: list[tuple[str, Any, Any, tuple]] = [("compare", base, head, route)]
    while stack:
        task, old, new, at = stack.pop()
        if task != "compare":
            return at, task  # "added" or "removed"
        if isinstance(old, dict) and isinstance(new, dict):
            tasks = [("added", None, None, at + (key,)) if key not in old else ("compare", old[key], item, at + (key,)) for key, item in new.items()]
            tasks += [("removed", None, None, at + (key,)) for key in old if key not in new]
            stack.extend(reversed(tasks))
        elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
            stack.extend(reversed([("compare", o, n, at + (i,)) for i, (o, n) in enumerate(zip(old, new))]))
        elif not same(old, new):  # scalars, or a change of kind or length
            return at, "changed"
    return None


def _describe(base_value: Any, head_value: Any, kind: str, route: tuple) -> str:
    where = sanitize(yaml_path(route))  # keys come from the plan
    if len(where) > 120:
        where = where[:119] + "…"
    if kind == "removed":
        return f"{where} was removed"
    if kind == "added":
        return f"{where} was added"
    if isinstance(head_value, (dict, list)) or isinstance(base_value, (dict, list)):
        return f"{where} changed"
    return f"{where} changed from {show(scalar_text(base_value))} to {show(scalar_text(head_value))}"


# --------------------------------------------------------------------------- rules


@rule("PL701", "frozen-eval-changed", ERROR, scope="diff")
def frozen_eval_changed(ctx: PlanContext) -> Iterator[Problem]:
    """`splits.eval` or `splits.boundary`, or the eval data, changed in a plan already approved, running or completed.

    Once a plan is approved (or running, or completed) its held-out evaluation
    is the yardstick every result is read against. Moving the eval set, or the
    boundary that keeps it apart from training, after approval silently makes
    the old baseline and the new results incomparable; so does rewriting the
    eval file in place under the same path (drop the hard rows and the
    metric goes up). Keep the evaluation frozen; a new evaluation is a new
    plan with its own name and baseline. The plan's keys are compared, and,
    in diff mode, the data the eval path names: a local file by its content
    (links followed), a glob by the set of files it matches and their
    contents; a remote object by its pinned version, which is part of the
    path (`?versionId=`, `#generation`, `@revision`). The finding points at
    the first changed value in the head plan (for rewritten data, at
    `splits.eval.path`); for a removed key, at the key of the mapping that
    held it (the `splits` key when `eval` or `boundary` itself is gone).

    Example (fails):
        # base
        metadata: {name: retail-refund-window, owner: "@support-ml", status: running}
        # head
        splits:
          train: {path: data/retail/train.jsonl}
          eval: {path: data/retail/eval-v2.jsonl, frozen: true}
          boundary: {group_key: customer_id, time_key: created_at, cutoff: 2026-08-01}
    Example (passes):
        # base
        metadata: {name: retail-refund-window, owner: "@support-ml", status: running}
        # head
        splits:
          train: {path: data/retail/train-v2.jsonl}
          eval: {path: data/retail/eval.jsonl, frozen: true}
          boundary: {group_key: customer_id, time_key: created_at, cutoff: 2026-08-01}
    """
    base = ctx.base
    if not isinstance(base, dict) or not ctx.data:
        return
    status = lookup(base, ("metadata", "status"))
    if not isinstance(status, str) or status not in FROZEN_STATUSES:
        return
    for section in ("eval", "boundary"):
        route = ("splits", section)
        old, new = lookup(base, route), ctx.get(*route)
        if old is MISSING or same(old, new):
            continue  # adding a missing eval or boundary is a fix, not a change
        if new is MISSING:
            yield Problem(
                route,
                f"splits.{section} was removed, but the plan was already {status} at the base revision: "
                f"restore it; a new evaluation belongs in a new plan with its own baseline",
                missing=True,
            )
            continue
        where, kind = first_change(old, new, route) or (route, "changed")
        what = _describe(lookup(old, where[2:]) if kind != "added" else MISSING, ctx.get(*where), kind, where)
        yield Problem(
            where,
            f"{what}, but the plan was already {status} at the base revision, so its evaluation is frozen: "
            f"restore splits.{section}; a new evaluation belongs in a new plan with its own baseline",
            missing=kind == "removed",
        )

    change = ctx.change
    if not isinstance(change, PlanChange) or not same(lookup(base, ("splits", "eval")), ctx.get("splits", "eval")):
        return  # a changed eval key is reported above
    for split in change.splits:
        if split.split == "eval":
            yield Problem(
                ("splits", "eval", "path"),
                f"the data of splits.eval ({show(split.path)}) changed under the same path: {split.words()}, but the plan was "
                f"already {status} at the base revision, so its evaluation is frozen: restore the eval data; a new evaluation "
                f"belongs in a new plan with its own baseline",
            )


@rule("PL709", "running-data-changed", WARNING, scope="diff")
def running_data_changed(ctx: PlanContext) -> Iterator[Problem]:
    """The train data of a plan that was running changed under the same path.

    A running experiment trains on the data its plan named when it was
    approved. Rewriting the train file in place (or adding shards a glob
    now matches) while the run goes on means the next submission trains on
    other data under the old plan's name, baseline and approval, and nothing
    in the plan says so. A warning: data pipelines append on purpose, and a
    reviewer decides; the change card shows the rows added and removed. In
    diff mode the data is compared as for PL701: a local file by its
    content, a glob by its matches and their contents.

    Example (fails):
        # base
        metadata: {name: retail-refund-window, owner: "@support-ml", status: running}
        --- data/retail/train.jsonl
        {"id": "t1", "customer_id": "c-1", "created_at": "2026-05-01", "prompt": "refund my order"}
        --- data/retail/eval.jsonl
        {"id": "e1", "customer_id": "c-9", "created_at": "2026-08-10", "prompt": "refund order 12"}
        # head
        --- data/retail/train.jsonl
        {"id": "t1", "customer_id": "c-1", "created_at": "2026-05-01", "prompt": "refund my order"}
        {"id": "t2", "customer_id": "c-2", "created_at": "2026-05-02", "prompt": "cancel and refund"}
    Example (passes):
        # base
        metadata: {name: retail-refund-window, owner: "@support-ml", status: approved}
        --- data/retail/train.jsonl
        {"id": "t1", "customer_id": "c-1", "created_at": "2026-05-01", "prompt": "refund my order"}
        --- data/retail/eval.jsonl
        {"id": "e1", "customer_id": "c-9", "created_at": "2026-08-10", "prompt": "refund order 12"}
        # head
        --- data/retail/train.jsonl
        {"id": "t1", "customer_id": "c-1", "created_at": "2026-05-01", "prompt": "refund my order"}
        {"id": "t2", "customer_id": "c-2", "created_at": "2026-05-02", "prompt": "cancel and refund"}
    """
    base, change = ctx.base, ctx.change
    if not isinstance(base, dict) or not ctx.data or not isinstance(change, PlanChange):
        return
    if lookup(base, ("metadata", "status")) != "running":
        return
    for split in change.splits:
        if split.split == "train":
            yield Problem(
                ("splits", "train", "path"),
                f"the data of splits.train ({show(split.path)}) changed under the same path while the plan was running at the "
                f"base revision: {split.words()}; the next submission trains on other data than the one approved: revert it, "
                f"or stop this plan and start a new one for the new data",
            )


def _measured_baseline(base: dict, ctx: PlanContext) -> Any:
    """The base revision's `baseline.result` when the head kept it unchanged, else MISSING.

    "The baseline changed" means its result changed: a re-measurement. Editing
    `baseline.notes` or `grader_versions` alone is not one. A base baseline
    without a result (`status: planned`) was never measured, so nothing was
    measured on the old release or grader either.
    """
    result = lookup(base, ("baseline", "result"))
    if result is MISSING or result is None or result == {} or ctx.get("baseline") is MISSING:
        return MISSING  # never measured; no baseline at all is PL401
    if not same(result, ctx.get("baseline", "result")):
        return MISSING  # re-measured (or its result removed: PL404's business)
    return result


@rule("PL702", "release-changed-without-rebaseline", ERROR, scope="diff")
def release_changed_without_rebaseline(ctx: PlanContext) -> Iterator[Problem]:
    """`dataset.release` changed but `baseline.result` did not.

    A baseline is a measurement on one exact data release. When the plan moves
    to another release, the old baseline no longer says where the new run
    starts, and any improvement read against it may be the data's doing.
    Re-measure the baseline on the new release in the same change. Only a
    changed `baseline.result` is a re-measurement (adding `baseline.notes` is
    not), and only a baseline that had a result at the base revision was
    measured on the old release (`status: planned` was not).

    Example (fails):
        # base
        dataset: {name: retail-refunds, release: "2026.10.01", format: task_metadata, targets: {reviewed: true}}
        # head
        dataset: {name: retail-refunds, release: "2026.11.03", format: task_metadata, targets: {reviewed: true}}
    Example (passes):
        # base
        dataset: {name: retail-refunds, release: "2026.10.01", format: task_metadata, targets: {reviewed: true}}
        # head
        dataset: {name: retail-refunds, release: "2026.11.03", format: task_metadata, targets: {reviewed: true}}
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@1, value: 0.44, rollouts: 64}
    """
    base = ctx.base
    if not isinstance(base, dict) or not ctx.data:
        return
    old, new = lookup(base, ("dataset", "release")), ctx.get("dataset", "release")
    if old is MISSING or new is MISSING or same(old, new):
        return  # a release added or removed is PL101's business
    if _measured_baseline(base, ctx) is MISSING:
        return
    yield Problem(
        ("dataset", "release"),
        f"dataset.release changed from {show(scalar_text(old))} to {show(scalar_text(new))} but baseline.result did not: "
        f"the baseline was measured on the old release; re-measure it on {show(scalar_text(new))} and update baseline.result",
    )


def _graders_by_id(plan: Any) -> dict[str, tuple[int, dict]]:
    graders = lookup(plan, ("graders",))
    out: dict[str, tuple[int, dict]] = {}
    if isinstance(graders, list):
        for index, grader in enumerate(graders):
            if isinstance(grader, dict) and isinstance(grader.get("id"), str):
                out.setdefault(grader["id"], (index, grader))
    return out


@rule("PL706", "grader-changed-without-rebaseline", ERROR, scope="diff")
def grader_changed_without_rebaseline(ctx: PlanContext) -> Iterator[Problem]:
    """The version of a reward grader changed but `baseline.result` did not.

    The baseline's score was given by the reward graders at their versions of
    the time. Re-pinning a grader (even back to an older version, and even
    when `baseline.grader_versions` is edited to match) changes what a score
    means, so the old result no longer says where the new run starts.
    Re-measure the baseline with the new grader version in the same change.
    Only graders listed in `reward.graders` count, and only when the base
    revision's baseline had a result.

    Example (fails):
        # base
        metadata: {name: retail-refund-window, owner: "@support-ml", status: approved}
        # head
        graders:
          - {id: db-state, type: code, name: tau-retail-db-state, version: 1.4.1}
          - id: tone
            type: llm_judge
            name: polite-tone-judge
            version: 3.0.1
            judge_model: {name: gpt-5-mini, revision: "2026-08-07"}
            calibration: {labels: 200, agreement: 0.87}
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.1, tone: 3.0.1}
          result: {metric: pass@1, value: 0.41, rollouts: 64}
    Example (passes):
        # base
        metadata: {name: retail-refund-window, owner: "@support-ml", status: approved}
        # head
        graders:
          - {id: db-state, type: code, name: tau-retail-db-state, version: 1.4.1}
          - id: tone
            type: llm_judge
            name: polite-tone-judge
            version: 3.0.1
            judge_model: {name: gpt-5-mini, revision: "2026-08-07"}
            calibration: {labels: 200, agreement: 0.87}
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.1, tone: 3.0.1}
          result: {metric: pass@1, value: 0.38, rollouts: 64}
    """
    yield from trainer_running.reward_code_changed(ctx)  # a trainer's reward code changed, its grader's version did not
    base = ctx.base
    if not isinstance(base, dict) or not ctx.data:
        return
    reward = ctx.get("reward", "graders")
    if not isinstance(reward, list) or _measured_baseline(base, ctx) is MISSING:
        return
    before, after = _graders_by_id(base), _graders_by_id(ctx.data)
    reported: set[str] = set()
    for grader_id in reward:
        if not isinstance(grader_id, str) or grader_id in reported or grader_id not in before or grader_id not in after:
            continue
        old, (index, grader) = before[grader_id][1].get("version", MISSING), after[grader_id]
        new = grader.get("version", MISSING)
        if old is MISSING or new is MISSING or same(old, new):
            continue  # a version added or removed is PL301's business
        reported.add(grader_id)
        yield Problem(
            ("graders", index, "version"),
            f"the version of reward grader {show(grader_id)} changed from {show(scalar_text(old))} to {show(scalar_text(new))} "
            f"but baseline.result did not: the baseline was scored with {show(scalar_text(old))}; "
            f"re-measure it with {show(scalar_text(new))} and update baseline.result",
        )


@rule("PL703", "spend-raised-without-approval", ERROR, scope="diff")
def spend_raised_without_approval(ctx: PlanContext) -> Iterator[Problem]:
    """`max_spend` rose, or its currency changed, and `budget.approved_by` is absent or unchanged.

    Raising a spending cap is a decision about money, and the plan records who
    made it. A higher cap with no approver, or with the approver of the old
    cap, looks approved when it is not. Name who approved the new amount.
    A cap is an amount in a currency: 900 USD -> 900 KWD is about three
    times the money, so a change of `budget.currency` is a cap change too,
    whatever the amounts (currencies compare by ISO code: `usd` is USD). The
    finding is at `max_spend` when the amount rose, else at `currency`. For
    a recurring plan the caps are its schedule and `recurrence.budget`: more
    runs a month, a higher per-run or per-month cap, or a one-off plan
    becoming recurring is a raised cap as well (`rules/recurrence.spend_rises`).

    Example (fails):
        # base
        budget: {currency: USD, max_spend: 250, estimated_cost: 180, approved_by: "@ml-leads"}
        # head
        budget: {currency: USD, max_spend: 400, estimated_cost: 180, approved_by: "@ml-leads"}
    Example (passes):
        # base
        budget: {currency: USD, max_spend: 250, estimated_cost: 180, approved_by: "@ml-leads"}
        # head
        budget: {currency: USD, max_spend: 400, estimated_cost: 180, approved_by: "@finance-ml"}
    """
    base = ctx.base
    if not isinstance(base, dict) or not ctx.data:
        return
    old = spend_amount(lookup(base, ("budget", "max_spend")))
    new = spend_amount(ctx.get("budget", "max_spend"))
    what: list[str] = []
    route: tuple = ("budget", "max_spend")
    currency_change = None
    if old is not None and new is not None:  # an invalid or missing cap is PL501/PL502's business
        currency_change = currency_changed(base, ctx.data)
        if currency_change is not None:
            what.append(f"{currency_change} (a cap in another currency is another cap)")
        if new > old:
            what.append(f"budget.max_spend rose from {scalar_text(lookup(base, ('budget', 'max_spend')))} to {scalar_text(ctx.get('budget', 'max_spend'))}")
        elif currency_change is not None:
            route = ("budget", "currency")
    # A recurring plan's schedule and caps (a change of budget.currency is said above already).
    rises: list[Rise] = [rise for rise in spend_rises(base, ctx.data) if not (rise.currency and currency_change is not None)]
    if not what and not rises:
        return
    at_key = False
    if not what:
        route, at_key = rises[0].route, rises[0].at_key
    what += [rise.words for rise in rises]
    caps = "caps" if rises else "cap"
    approver = ctx.get("budget", "approved_by")
    if approver is MISSING or approver is None or scalar_text(approver).strip() == "":
        why = "budget.approved_by is absent"
    elif same(approver, lookup(base, ("budget", "approved_by"))):
        why = f"budget.approved_by is still {show(scalar_text(approver))}, who approved the old {caps}"
    else:
        return
    yield Problem(
        route,
        f"{' and '.join(what)} and {why}: set budget.approved_by to whoever approved the new {caps}",
        at_key=at_key,
    )


def currency_changed(base: Any, head: Any) -> str | None:
    """"budget.currency changed from 'USD' to 'KWD'" when both name valid currencies and they differ, else None."""
    old, new = currency_code(lookup(base, ("budget", "currency"))), currency_code(lookup(head, ("budget", "currency")))
    if old is None or new is None or old == new:
        return None
    return f"budget.currency changed from {show(old)} to {show(new)}"


@rule("PL704", "active-plan-removed", ERROR, scope="diff")
def active_plan_removed(ctx: PlanContext) -> Iterator[Problem]:
    """A plan whose base status was `running` is deleted, renamed, or no longer a readable plan.

    A running experiment is tied to its plan: run records, dashboards and
    review threads point at the file. Deleting or moving it mid-run leaves the
    run without its design, and so does keeping the file but making it
    something planlint cannot check: emptying it, replacing it with a symbolic
    link to nothing, making it unreadable or unparseable, or changing its
    `kind` or `apiVersion` so it is no longer a plan. Finish the run first:
    set `metadata.status` to `completed` or `abandoned`, then retire the plan
    in a later change. The finding points at line 1 of the renamed file, of
    the deleted path, or of the file that is no longer a plan.

    Example (fails):
        # base
        metadata: {name: retail-refund-window, owner: "@support-ml", status: running}
        # head: deleted
    Example (passes):
        # base
        metadata: {name: retail-refund-window, owner: "@support-ml", status: completed}
        # head: deleted
    """
    change = ctx.change
    base = ctx.base
    if not isinstance(change, PlanChange) or not isinstance(base, dict):
        return
    if lookup(base, ("metadata", "status")) != "running":
        return
    if change.kind not in ("deleted", "renamed") and change.no_longer_a_plan is None:
        return
    name = lookup(base, ("metadata", "name"))
    plan = f"plan {show(name)}" if isinstance(name, str) else "plan"
    if change.kind == "deleted":
        yield Problem((), f"this {plan} was deleted while running (status: running at the base revision): "
                          f"keep it until the run ends, then set metadata.status to completed or abandoned")
    elif change.kind == "renamed":
        yield Problem((), f"this {plan} was renamed from {show(change.base_path)} while running (status: running at the base revision): "
                          f"keep its path until the run ends, then move it in a later change")
    else:
        yield Problem((), f"this {plan} was running at the base revision and is now {change.no_longer_a_plan}: "
                          f"a running plan must stay a readable plan; restore it, and retire it only after the run ends "
                          f"(metadata.status: completed or abandoned)")
