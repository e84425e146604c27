"""Baseline presence and comparability: PL401-PL405."""

from __future__ import annotations

from typing import Iterator

from planlint.core.messages import show
from planlint.core.yaml_values import scalar_text
from planlint.rules.base import ERROR, MISSING, WARNING, PlanContext, Problem, rule
from planlint.rules.splits import declared_splits

ACTIVE_STATUSES = ("approved", "running", "completed")


@rule("PL401", "baseline-missing", ERROR)
def baseline_missing(ctx: PlanContext) -> Iterator[Problem]:
    """The plan has no `baseline`.

    Without a measured starting point a training result cannot show
    improvement. Name the model and split of the baseline, and either its
    result or that measuring it is the next step (`status: planned`).

    Example (fails):
        # without: baseline
        decision:
          metric: pass@1
          split: eval
          target_improvement: 0.10
          stopping: {max_steps: 400, patience_evals: 3}
    Example (passes):
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@1, value: 0.41, rollouts: 64}
    """
    if "baseline" not in ctx.data:
        yield Problem(("baseline",), "the plan has no baseline: add baseline with the model, split and result (or status: planned and a next_step)", missing=True)


@rule("PL402", "baseline-is-oracle", ERROR)
def baseline_is_oracle(ctx: PlanContext) -> Iterator[Problem]:
    """`baseline.model.type` is `oracle`.

    A correct verifier alone does not prove the policy can learn: an oracle
    that makes no model calls yields no trajectory, so it says nothing about
    where the model starts. Measure a real model.

    Example (fails):
        baseline:
          model: {name: reference-solver, revision: v3, type: oracle}
          split: eval
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@1, value: 1.0, rollouts: 64}
    Example (passes):
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@1, value: 0.41, rollouts: 64}
    """
    kind = ctx.get("baseline", "model", "type")
    if isinstance(kind, str) and kind.strip().lower() == "oracle":
        yield Problem(("baseline", "model", "type"), "the baseline is an oracle, which makes no model calls and yields no trajectory: measure the base model (or another real policy) instead")


@rule("PL403", "baseline-split-mismatch", ERROR)
def baseline_split_mismatch(ctx: PlanContext) -> Iterator[Problem]:
    """`baseline.split` differs from `decision.split`, or is the train split.

    The decision compares the trained model with the baseline on one split; a
    baseline measured elsewhere (or on training data) is not comparable. When
    the decision itself is on the train split (PL604) or on a split the plan
    does not declare (PL607), that is the problem to fix, and the baseline is
    not compared with it.

    Example (fails):
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: train
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@1, value: 0.41, rollouts: 64}
    Example (passes):
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@1, value: 0.41, rollouts: 64}
    """
    split = ctx.get("baseline", "split")
    if not isinstance(split, str):  # absent or the wrong type: PL003's
        return
    name = split
    decision_split = ctx.get("decision", "split")
    if name == "train":
        yield Problem(("baseline", "split"), "the baseline is measured on the train split: measure it on the held-out split the decision uses")
        return
    if decision_split == "train" or decision_split not in (declared_splits(ctx) or ()):
        return  # a decision on train (PL604) or on no declared split (PL607): that is the problem, not the baseline
    if isinstance(decision_split, str) and name != decision_split:
        yield Problem(("baseline", "split"), f"baseline.split {show(split)} differs from decision.split {show(decision_split)}: measure the baseline on the split the decision compares on")


@rule("PL404", "baseline-unmeasured", ERROR)
def baseline_unmeasured(ctx: PlanContext) -> Iterator[Problem]:
    """The baseline has neither a `result` nor `status: planned`, or is still planned while the plan is approved, running or completed.

    A plan may be drafted before its baseline is measured, but measuring it is
    then the next step, and the plan may not be approved or run until the
    result is recorded.

    Example (fails):
        metadata:
          name: retail-refund-window
          owner: "@support-ml"
          status: approved
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          status: planned
          next_step: "64 rollouts on eval"
    Example (passes):
        metadata:
          name: retail-refund-window
          owner: "@support-ml"
          status: draft
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          status: planned
          next_step: "64 rollouts on eval"
    """
    baseline = ctx.mapping("baseline")
    if baseline is None:
        return
    status = baseline.get("status", MISSING)
    if status != "planned":
        if "result" in baseline:
            return
        if status is MISSING:
            yield Problem(("baseline", "result"), "the baseline has no result: record result {metric, value, rollouts}, or set status: planned with a next_step", missing=True)
        else:
            yield Problem(("baseline", "status"), f"baseline.status is {show(status)} and there is no result: record result {{metric, value, rollouts}}, or set status: planned with a next_step")
        return
    plan_status = ctx.get("metadata", "status")
    if plan_status in ACTIVE_STATUSES:
        yield Problem(("baseline", "status"), f"the baseline is still planned but the plan is {plan_status}: measure the baseline and record its result before approving or running")


@rule("PL405", "baseline-metric-mismatch", WARNING)
def baseline_metric_mismatch(ctx: PlanContext) -> Iterator[Problem]:
    """`baseline.result.metric` differs from `decision.metric`.

    The decision rule reads one metric; a baseline recorded in another one
    (pass@1 against pass@8, say) cannot be compared with the result.

    Example (fails):
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@8, value: 0.63, rollouts: 64}
    Example (passes):
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@1, value: 0.41, rollouts: 64}
    """
    metric = ctx.get("baseline", "result", "metric")
    decision_metric = ctx.get("decision", "metric")
    if not isinstance(metric, str) or not isinstance(decision_metric, str) or not decision_metric.strip():
        return  # absent, null or the wrong type: PL601 / PL003 report it
    if metric != decision_metric:
        yield Problem(("baseline", "result", "metric"), f"baseline.result.metric {show(metric)} differs from decision.metric {show(decision_metric)}: record the baseline in the metric the decision uses")


@rule("PL406", "baseline-model-differs", WARNING)
def baseline_model_differs(ctx: PlanContext) -> Iterator[Problem]:
    """`baseline.model.name` or `baseline.model.revision` differs from `base_model`'s.

    The baseline measures the model being trained: the planning guide asks
    for "a small rollout evaluation that can establish whether the reward and
    trajectory are usable" for the policy being trained. An improvement
    measured against another model
    (or another revision of it) mixes the effect of training with the
    difference between two models. An oracle baseline is PL402's.

    Example (fails):
        base_model:
          name: Qwen/Qwen3-8B
          revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345
        baseline:
          model: {name: meta-llama/Llama-3.1-8B-Instruct, revision: 262e1c79d2757d92ae45a238e44598ea577f299a}
          split: eval
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@1, value: 0.41, rollouts: 64}
    Example (passes):
        base_model:
          name: Qwen/Qwen3-8B
          revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@1, value: 0.41, rollouts: 64}
    """
    model, base = ctx.mapping("baseline", "model"), ctx.mapping("base_model")
    if model is None or base is None:
        return
    kind = model.get("type")
    if isinstance(kind, str) and kind.strip().lower() == "oracle":
        return  # PL402
    name, base_name = model.get("name"), base.get("name")
    if isinstance(name, str) and isinstance(base_name, str) and name.strip() and base_name.strip():
        if name.strip() != base_name.strip():
            yield Problem(("baseline", "model", "name"), f"the baseline measures {show(name)} but the plan trains {show(base_name)} (base_model.name): measure the baseline on the model being trained, at base_model.revision")
            return
    revision, base_revision = model.get("revision"), base.get("revision")
    if not _scalar(revision) or not _scalar(base_revision):
        return  # absent, null or the wrong type: PL103 / PL003 report it
    if scalar_text(revision).strip() != scalar_text(base_revision).strip():
        yield Problem(("baseline", "model", "revision"), f"baseline.model.revision {show(revision)} differs from base_model.revision {show(base_revision)}: measure the baseline on the revision being trained")


def _scalar(value) -> bool:
    return value is not None and not isinstance(value, (dict, list, bool)) and scalar_text(value).strip() != ""
