"""The decision rule and method requirements: PL601-PL606."""

from __future__ import annotations

import math
from typing import Iterator

from planlint.core.messages import show
from planlint.rules.base import ERROR, MISSING, PlanContext, Problem, rule


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
