"""The decision rule, method requirements and open inputs: PL601-PL610."""

from __future__ import annotations

import math
from typing import Any, Iterator

from planlint.core.messages import show
from planlint.core.yaml_values import scalar_text
from planlint.rules.base import ERROR, MISSING, PlanContext, Problem, rule
from planlint.rules.baseline import ACTIVE_STATUSES
from planlint.rules.splits import declared_splits


@rule("PL601", "decision-metric-missing", ERROR)
def decision_metric_missing(ctx: PlanContext) -> Iterator[Problem]:
    """`decision.metric` is absent (or there is no `decision` at all).

    Deciding after the run which number to look at invites picking the one
    that moved. Name the held-out metric before any money is spent.

    Example (fails):
        decision:
          split: eval
          target_improvement: 0.10
          stopping: {max_steps: 400, patience_evals: 3}
    Example (passes):
        decision:
          metric: pass@1
          split: eval
          target_improvement: 0.10
          stopping: {max_steps: 400, patience_evals: 3}
    """
    if "decision" not in ctx.data:
        yield Problem(("decision",), "the plan has no decision: add decision with the held-out metric, split, target_improvement and stopping", missing=True)
        return
    decision = ctx.mapping("decision")
    if decision is None:
        return
    if "metric" not in decision:
        yield Problem(("decision", "metric"), "decision.metric is missing: name the held-out metric that decides the experiment, e.g. metric: pass@1", missing=True)
    elif decision["metric"] is None or (isinstance(decision["metric"], str) and not decision["metric"].strip()):
        yield Problem(("decision", "metric"), "decision.metric is empty: name the held-out metric that decides the experiment, e.g. metric: pass@1")


@rule("PL602", "target-missing", ERROR)
def target_missing(ctx: PlanContext) -> Iterator[Problem]:
    """`decision.target_improvement` is absent or not greater than 0.

    Without a target fixed in advance any improvement, however small or noisy,
    can be declared a success.

    Example (fails):
        decision:
          metric: pass@1
          split: eval
          target_improvement: 0
          stopping: {max_steps: 400, patience_evals: 3}
    Example (passes):
        decision:
          metric: pass@1
          split: eval
          target_improvement: 0.10
          stopping: {max_steps: 400, patience_evals: 3}
    """
    decision = ctx.mapping("decision")
    if decision is None:
        return
    route = ("decision", "target_improvement")
    if "target_improvement" not in decision:
        yield Problem(route, "decision.target_improvement is missing: state the improvement over the baseline that counts as success, in the metric's units (e.g. 0.10)", missing=True)
        return
    target = decision["target_improvement"]
    if isinstance(target, bool) or not isinstance(target, (int, float)) or not math.isfinite(target) or target <= 0:
        yield Problem(route, f"decision.target_improvement {show(target)} is not a number greater than 0: state the improvement that counts as success (e.g. 0.10)")


_STOPPING_KEYS = ("max_steps", "max_epochs", "patience_evals", "max_hours")


@rule("PL603", "stopping-missing", ERROR)
def stopping_missing(ctx: PlanContext) -> Iterator[Problem]:
    """`decision.stopping` is absent or empty.

    A run with no stopping condition runs until the budget does; decide in
    advance after how many steps, or how many evaluations without progress,
    it ends.

    Example (fails):
        decision:
          metric: pass@1
          split: eval
          target_improvement: 0.10
          stopping: {}
    Example (passes):
        decision:
          metric: pass@1
          split: eval
          target_improvement: 0.10
          stopping: {max_steps: 400, patience_evals: 3}
    """
    decision = ctx.mapping("decision")
    if decision is None:
        return
    route = ("decision", "stopping")
    if "stopping" not in decision:
        yield Problem(route, "decision.stopping is missing: say when the run stops, e.g. stopping: {max_steps: 400, patience_evals: 3}", missing=True)
        return
    stopping = decision["stopping"]
    if not isinstance(stopping, dict) and stopping is not None:  # a string, a number, a list: not "empty"
        what = "a list" if isinstance(stopping, list) else f"{show(stopping)}, not a mapping"
        yield Problem(route, f"decision.stopping is {what}: give a mapping with at least one of max_steps, max_epochs, patience_evals or max_hours, e.g. stopping: {{max_steps: 400}}")
        return
    real = isinstance(stopping, dict) and any(key in stopping and stopping[key] is not None for key in _STOPPING_KEYS)
    if not real:
        yield Problem(route, "decision.stopping is empty: give at least one of max_steps, max_epochs, patience_evals or max_hours")


@rule("PL604", "decision-on-train", ERROR)
def decision_on_train(ctx: PlanContext) -> Iterator[Problem]:
    """`decision.split` is `train`.

    Training reward always goes up on the training data; only a held-out split
    can show the behaviour was learned.

    Example (fails):
        decision:
          metric: pass@1
          split: train
          target_improvement: 0.10
          stopping: {max_steps: 400, patience_evals: 3}
    Example (passes):
        decision:
          metric: pass@1
          split: eval
          target_improvement: 0.10
          stopping: {max_steps: 400, patience_evals: 3}
    """
    if ctx.get("decision", "split") == "train":
        yield Problem(("decision", "split"), "the decision is made on the train split: decide on the held-out eval split")


@rule("PL605", "sft-unreviewed-targets", ERROR)
def sft_unreviewed_targets(ctx: PlanContext) -> Iterator[Problem]:
    """`method.type: sft` without `dataset.targets.reviewed: true`.

    SFT copies its targets. A corrected answer needs explicit review and
    admission before it becomes a training target; unreviewed targets teach
    whatever mistakes they hold.

    Example (fails):
        method:
          type: sft
          adapter: lora
        dataset:
          name: support-replies
          release: "2026.10.14"
          format: prompt_answer
    Example (passes):
        method:
          type: sft
          adapter: lora
        dataset:
          name: support-replies
          release: "2026.10.14"
          format: prompt_answer
          targets: {reviewed: true}
    """
    if ctx.get("method", "type") != "sft":
        return
    dataset = ctx.mapping("dataset")
    if dataset is None:
        return
    reviewed = ctx.get("dataset", "targets", "reviewed")
    route = ("dataset", "targets", "reviewed")
    if reviewed is MISSING:
        yield Problem(route, "an SFT plan must use reviewed targets: review and admit the answers, then set dataset.targets.reviewed: true", missing=True)
    elif reviewed is not True:
        yield Problem(route, f"dataset.targets.reviewed is {show(reviewed)}: SFT trains on its targets verbatim, so review and admit them first")


@rule("PL606", "grpo-without-reward", ERROR)
def grpo_without_reward(ctx: PlanContext) -> Iterator[Problem]:
    """`method.type: grpo` and `reward.graders` is absent or empty.

    GRPO learns only from scored fresh attempts: without an executable reward
    there is nothing to optimise.

    Example (fails):
        method:
          type: grpo
          adapter: lora
        reward:
          graders: []
    Example (passes):
        method:
          type: grpo
          adapter: lora
        reward:
          graders: [db-state, tone]
    """
    if ctx.get("method", "type") != "grpo":
        return
    reward = ctx.get("reward")
    if reward is MISSING:
        yield Problem(("reward",), "a GRPO plan needs a reward: add reward.graders naming the graders that score each attempt", missing=True)
        return
    if not isinstance(reward, dict):
        return
    graders = reward.get("graders", MISSING)
    if graders is MISSING:
        yield Problem(("reward", "graders"), "reward.graders is missing: name the graders that score each GRPO attempt", missing=True)
    elif not graders:
        yield Problem(("reward", "graders"), "reward.graders is empty: name the graders that score each GRPO attempt")


@rule("PL607", "split-undeclared", ERROR)
def split_undeclared(ctx: PlanContext) -> Iterator[Problem]:
    """`decision.split` or `baseline.split` names no split declared under `splits`.

    The planning guide asks to "identify the training distribution and a
    separate evaluation set or split", and to define the held-out metric on
    it. A decision or baseline on `heldout` when the plan only declares
    `train` and `eval` is measured on data nobody described, froze or checked
    for leakage. (A missing `splits.eval` is PL201's.)

    Example (fails):
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: heldout
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@1, value: 0.41, rollouts: 64}
        decision:
          metric: pass@1
          split: heldout
          target_improvement: 0.10
          stopping: {max_steps: 400, patience_evals: 3}
    Example (passes):
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@1, value: 0.41, rollouts: 64}
        decision:
          metric: pass@1
          split: eval
          target_improvement: 0.10
          stopping: {max_steps: 400, patience_evals: 3}
    """
    declared = declared_splits(ctx)
    if declared is None:
        return  # no splits section: PL201
    for section in ("decision", "baseline"):
        name = ctx.get(section, "split")
        if not isinstance(name, str) or not name.strip() or name in declared:
            continue  # absent, empty or the wrong type: PL003's
        if name in ("train", "eval"):
            continue  # a required split that is missing: PL201 / PL003 report the splits section
        known = ", ".join(show(n) for n in declared) if declared else "none"
        yield Problem((section, "split"), f"{section}.split {show(name)} is not a split declared under splits (declared: {known}): name one of them, or declare the split")


@rule("PL608", "reward-weights-invalid", ERROR)
def reward_weights_invalid(ctx: PlanContext) -> Iterator[Problem]:
    """`reward.weights` names an id not in `reward.graders`, leaves one of them out, or gives a weight that is not a number > 0.

    Weights say how the reward graders add up to one reward. A weight for a
    grader that is not in the reward scores nothing, a reward grader without
    a weight has an unstated share, and a zero or negative weight rewards
    the opposite of what the grader checks (GRPO optimises whatever the
    reward says). The planning guide: "If the signal rewards a shortcut,
    revise it before proposing training." Without `weights` every reward
    grader counts equally.

    Example (fails):
        reward:
          graders: [db-state, tone]
          weights: {db-state: 0.8, politeness: 0.2}
    Example (passes):
        reward:
          graders: [db-state, tone]
          weights: {db-state: 0.8, tone: 0.2}
    """
    weights = ctx.mapping("reward", "weights")
    if weights is None:
        return
    graders = ctx.get("reward", "graders")
    reward_ids = [scalar_text(g) for g in graders if not isinstance(g, (dict, list)) and g is not None] if isinstance(graders, list) else None
    for ident, weight in weights.items():
        if ident.startswith("x-"):
            continue
        if reward_ids is not None and ident not in reward_ids:
            listed = ", ".join(show(i) for i in reward_ids) if reward_ids else "none"
            yield Problem(("reward", "weights", ident), f"reward.weights names {show(ident)}, which is not in reward.graders (reward graders: {listed}): weigh only the graders that form the reward", at_key=True)
        elif not _positive(weight):
            yield Problem(("reward", "weights", ident), f"reward.weights {show(ident)} is {show(weight)}: a weight must be a number greater than 0")
    for ident in dict.fromkeys(reward_ids or ()):
        if ident not in weights:
            yield Problem(("reward", "weights", ident), f"reward grader {show(ident)} has no weight in reward.weights: give every reward grader a weight (or drop weights to count them equally)", missing=True)


def _positive(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value) and value > 0


# The dataset formats that carry what each method learns from (docs/plan-format.md).
METHOD_FORMATS = {
    "sft": ("prompt_answer",),  # reviewed desired answers to copy
    "grpo": ("task_metadata",),  # tasks a fresh attempt can be made on and scored by an executable reward
}


@rule("PL609", "method-format-mismatch", ERROR)
def method_format_mismatch(ctx: PlanContext) -> Iterator[Problem]:
    """`method.type` does not fit `dataset.format`: SFT with `task_metadata`, or GRPO with a format that carries no task for a fresh attempt.

    The planning guide: "SFT needs reviewed desired answers; GRPO needs tasks
    whose fresh attempts can be scored by an executable reward." SFT fits
    `prompt_answer` (prompts with reviewed target answers); task metadata has
    no answer to copy. GRPO fits `task_metadata` (instructions, environment
    seed, expected outcome); prompt/answer pairs are demonstrations, with no
    task a fresh attempt can be made on and checked.

    Example (fails):
        method:
          type: sft
          adapter: lora
        dataset:
          name: retail-refunds
          release: "2026.11.03"
          format: task_metadata
          targets: {reviewed: true}
    Example (passes):
        method:
          type: sft
          adapter: lora
        dataset:
          name: support-replies
          release: "2026.10.14"
          format: prompt_answer
          targets: {reviewed: true}
    """
    method, fmt = ctx.get("method", "type"), ctx.get("dataset", "format")
    if not isinstance(method, str) or method not in METHOD_FORMATS or not isinstance(fmt, str):
        return  # absent or unknown: PL003's
    fits = METHOD_FORMATS[method]
    if fmt in fits or fmt not in {f for formats in METHOD_FORMATS.values() for f in formats}:
        return
    if method == "sft":
        why = "SFT needs reviewed desired answers, and task metadata has no answer to copy"
    else:
        why = "GRPO needs tasks whose fresh attempts an executable reward can score, and prompt/answer pairs carry no such task"
    yield Problem(("dataset", "format"), f"method.type {method} does not fit dataset.format {show(fmt)}: {why}; use format {' or '.join(fits)}, or another method")


@rule("PL610", "missing-inputs-open", ERROR)
def missing_inputs_open(ctx: PlanContext) -> Iterator[Problem]:
    """`missing_inputs` is not empty while `metadata.status` is approved, running or completed.

    The planning guide: "Return a concrete experiment and the missing inputs
    that affect it." A draft lists what it still needs (a baseline
    on the new release, a price quote); a plan is approved, run or reported
    only once that list is empty. The finding points at the first open item.

    Example (fails):
        metadata:
          name: retail-refund-window
          owner: "@support-ml"
          status: approved
        missing_inputs:
          - baseline on release 2026.11.03
    Example (passes):
        metadata:
          name: retail-refund-window
          owner: "@support-ml"
          status: draft
        missing_inputs:
          - baseline on release 2026.11.03
    """
    items = ctx.get("missing_inputs")
    status = ctx.get("metadata", "status")
    if not isinstance(items, list) or not items or status not in ACTIVE_STATUSES:
        return
    more = f" and {len(items) - 1} more" if len(items) > 1 else ""
    yield Problem(("missing_inputs", 0), f"the plan is {status} but missing_inputs still lists {show(items[0])}{more}: provide them (and empty the list) before approving, or set the status back to draft")
