"""Split boundaries: PL201-PL206 (the data-aware PL207-PL209 live in split_data_rules)."""

from __future__ import annotations

import datetime as _dt
import posixpath
from typing import Any, Iterator

from planlint.core.messages import show
from planlint.core.model import is_recurring
from planlint.core.yaml_values import scalar_text
from planlint.rules.base import ERROR, WARNING, PlanContext, Problem, rule


def declared_splits(ctx: PlanContext) -> list[str] | None:
    """The split names declared under `splits` (not `boundary`, not `x-` extensions), or None without splits."""
    splits = ctx.mapping("splits")
    if splits is None:
        return None
    return [name for name in splits if name != "boundary" and not name.startswith("x-")]


@rule("PL201", "eval-split-missing", ERROR)
def eval_split_missing(ctx: PlanContext) -> Iterator[Problem]:
    """`splits.eval` is absent.

    Without a held-out evaluation split there is nothing to measure the
    baseline and the trained model on that the model did not train on.

    Example (fails):
        splits:
          train:
            path: data/retail/train.jsonl
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
    if "splits" not in ctx.data:  # the section is absent: one finding, this one
        yield Problem(("splits",), "the plan has no splits: declare train and a held-out eval split, and the boundary between them", missing=True)
        return
    splits = ctx.mapping("splits")
    if splits is not None and "eval" not in splits:
        yield Problem(("splits", "eval"), "splits.eval is missing: declare a held-out evaluation split (path, selector or tasks) separate from train", missing=True)


def _normalized_path(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return posixpath.normpath(value.strip().replace("\\", "/"))


@rule("PL202", "splits-identical", ERROR)
def splits_identical(ctx: PlanContext) -> Iterator[Problem]:
    """Train and eval have the same `path`, or the same `selector`.

    Evaluating on the training data measures memorisation, not learning; the
    result looks like progress and is worthless.

    Example (fails):
        splits:
          train:
            path: data/retail/tasks.jsonl
          eval:
            path: data/retail/tasks.jsonl
            frozen: true
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
    train, held_out = ctx.mapping("splits", "train"), ctx.mapping("splits", "eval")
    if train is None or held_out is None:
        return
    train_path, eval_path = _normalized_path(train.get("path")), _normalized_path(held_out.get("path"))
    if train_path is not None and train_path == eval_path:
        yield Problem(("splits", "eval", "path"), f"splits.eval.path {show(held_out['path'])} is the same file as splits.train.path: evaluate on a separate held-out file")
    selector = held_out.get("selector")
    if isinstance(selector, dict) and selector and selector == train.get("selector"):
        yield Problem(("splits", "eval", "selector"), "splits.eval.selector selects the same rows as splits.train.selector: select a separate held-out split")


@rule("PL203", "boundary-missing", ERROR)
def boundary_missing(ctx: PlanContext) -> Iterator[Problem]:
    """`splits.boundary` is absent, or has none of `group_key`, `time_key` and `predefined`.

    Separate files are not separate data: the same customer, conversation or
    week can sit on both sides and leak. The boundary says what must not be
    shared (a group key) or when the eval period starts (a time key and
    cutoff), so it can be checked. A benchmark profile's own test tasks
    have no such key: `predefined` names the benchmark's official split
    instead (the data-aware checks PL207-PL211 need a key, so they do not
    run on it, and a note says so).

    Example (fails):
        splits:
          train:
            path: data/retail/train.jsonl
          eval:
            path: data/retail/eval.jsonl
            frozen: true
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
    splits = ctx.mapping("splits")
    if splits is None:
        return
    if "boundary" not in splits:
        yield Problem(("splits", "boundary"), "splits.boundary is missing: declare the group_key that must not cross splits and/or a time_key with a cutoff", missing=True)
        return
    boundary = splits["boundary"]
    if not isinstance(boundary, dict):
        yield Problem(("splits", "boundary"), "splits.boundary must be a mapping with a group_key and/or a time_key and cutoff")
    elif not (_present(boundary.get("group_key")) or _present(boundary.get("time_key")) or _present(boundary.get("predefined"))):
        # The keys are missing: point at the mapping that should hold them.
        yield Problem(("splits", "boundary", "group_key"), "splits.boundary has neither group_key nor time_key: name the field that separates train from eval (or, for a benchmark's own fixed split, predefined: the split's official name)", missing=True)


def predefined_only(boundary: Any) -> bool:
    """A boundary given only as a benchmark's predefined split: no key a data check could use."""
    return (
        isinstance(boundary, dict)
        and _present(boundary.get("predefined"))
        and not _present(boundary.get("group_key"))
        and not _present(boundary.get("time_key"))
    )


def _present(value: Any) -> bool:
    return value is not None and scalar_text(value).strip() != ""


def parse_cutoff(value: Any) -> _dt.datetime | None:
    """An ISO date or datetime as an aware UTC datetime, or None."""
    if isinstance(value, bool) or value is None:
        return None
    text = scalar_text(value).strip()
    if len(text) < 10:
        return None
    try:
        if len(text) == 10:
            day = _dt.date.fromisoformat(text)
            return _dt.datetime(day.year, day.month, day.day, tzinfo=_dt.timezone.utc)
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        moment = _dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_dt.timezone.utc)
    return moment


@rule("PL204", "time-boundary-incomplete", ERROR)
def time_boundary_incomplete(ctx: PlanContext) -> Iterator[Problem]:
    """`time_key` without a valid `cutoff` date, or `cutoff` without `time_key`.

    A time boundary needs both halves: the field that dates each row and the
    date at which evaluation begins (train rows < cutoff <= eval rows). A
    recurring plan moves the cutoff with each run instead
    (`splits.boundary.rolling`, whose windows PL510 checks), which needs the
    `time_key` too; a plan that does not recur has one fixed cutoff.

    Example (fails):
        splits:
          train:
            path: data/retail/train.jsonl
          eval:
            path: data/retail/eval.jsonl
            frozen: true
          boundary:
            time_key: created_at
            cutoff: next month
    Example (passes):
        splits:
          train:
            path: data/retail/train.jsonl
          eval:
            path: data/retail/eval.jsonl
            frozen: true
          boundary:
            time_key: created_at
            cutoff: 2026-08-01
    """
    boundary = ctx.mapping("splits", "boundary")
    if boundary is None:
        return
    has_time_key = _present(boundary.get("time_key"))
    route = ("splits", "boundary", "cutoff")
    if "rolling" in boundary:
        rolling = ("splits", "boundary", "rolling")
        if not is_recurring(ctx.data):
            yield Problem(rolling, "splits.boundary.rolling moves the cutoff with each run of a recurring plan, but this plan has no recurrence: "
                                   "give one fixed cutoff (an ISO date) instead, or add the recurrence block", at_key=True)
        elif not has_time_key:
            yield Problem(rolling, "splits.boundary.rolling is given without a time_key: name the field that dates each row, e.g. time_key: created_at", at_key=True)
        return  # a fixed cutoff beside the rolling one is PL510's
    if "cutoff" not in boundary:
        if has_time_key:
            yield Problem(route, "splits.boundary has a time_key but no cutoff: add the ISO date where evaluation begins, e.g. cutoff: 2026-08-01", missing=True)
        return
    cutoff = boundary["cutoff"]
    if not has_time_key:
        yield Problem(route, "splits.boundary.cutoff is given without a time_key: name the field that dates each row, e.g. time_key: created_at")
    elif parse_cutoff(cutoff) is None:
        yield Problem(route, f"splits.boundary.cutoff {show(cutoff)} is not an ISO date or datetime: write it as YYYY-MM-DD")


@rule("PL205", "eval-not-frozen", WARNING)
def eval_not_frozen(ctx: PlanContext) -> Iterator[Problem]:
    """`splits.eval.frozen` is not `true`.

    An evaluation set that may change between the baseline and the final
    measurement makes the comparison meaningless. Freeze it, or suppress this
    with a reason if it rotates by design. A recurring plan's eval split is
    PL510's (an error: frozen, or a declared rolling window).

    Example (fails):
        splits:
          train:
            path: data/retail/train.jsonl
          eval:
            path: data/retail/eval.jsonl
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
    held_out = ctx.mapping("splits", "eval")
    if held_out is None or is_recurring(ctx.data):  # one problem, one finding: PL510 speaks for recurring plans
        return
    if "frozen" not in held_out:
        yield Problem(("splits", "eval", "frozen"), "splits.eval is not marked frozen: set frozen: true so the eval set cannot change between baseline and result", missing=True)
    elif held_out["frozen"] is not True:
        yield Problem(("splits", "eval", "frozen"), f"splits.eval.frozen is {show(held_out['frozen'])}, not true: freeze the eval set so baseline and result are measured on the same data")


@rule("PL206", "task-overlap", ERROR)
def task_overlap(ctx: PlanContext) -> Iterator[Problem]:
    """A task id is listed in both `splits.train.tasks` and `splits.eval.tasks`.

    A task the model trained on cannot tell you whether it generalises. The
    finding points at the eval item. (The examples are drafts whose baseline
    is still to be measured: an approved plan's eval of two tasks could not
    tell any target from noise, PL611.)

    Example (fails):
        splits:
          train:
            tasks: [refund-001, refund-002, refund-003]
          eval:
            tasks: [refund-003, refund-104]
            frozen: true
          boundary:
            group_key: customer_id
        metadata: {name: retail-refund-window, owner: "@support-ml", status: draft}
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          status: planned
          next_step: "4 rollouts of each eval task"
    Example (passes):
        splits:
          train:
            tasks: [refund-001, refund-002, refund-003]
          eval:
            tasks: [refund-103, refund-104]
            frozen: true
          boundary:
            group_key: customer_id
        metadata: {name: retail-refund-window, owner: "@support-ml", status: draft}
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          status: planned
          next_step: "4 rollouts of each eval task"
    """
    train_tasks, eval_tasks = ctx.get("splits", "train", "tasks"), ctx.get("splits", "eval", "tasks")
    if not isinstance(train_tasks, list) or not isinstance(eval_tasks, list):
        return
    # A plain str is its own scalar_text (task lists run to hundreds of ids).
    trained = {task if type(task) is str else scalar_text(task) for task in train_tasks if not isinstance(task, (dict, list))}
    for index, task in enumerate(eval_tasks):
        if not isinstance(task, (dict, list)) and (task if type(task) is str else scalar_text(task)) in trained:
            yield Problem(("splits", "eval", "tasks", index), f"task {show(task)} is in both splits.train.tasks and splits.eval.tasks: remove it from one of them")
