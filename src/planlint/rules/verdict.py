"""The result a completed plan reports: PL615, its recorded verdict against the one its numbers give.

A completed plan records `outcome: {value, verdict}`. The verdict follows from
the baseline, the target and the recorded value: `met` when the improvement
reaches the target, `not_met` when it does not, and, where the number of eval
items is known and the metric is a proportion, `inconclusive` whenever the
difference is within noise at the decision's alpha (the same test PL611 sizes).
The change cards of diff mode show both (`modes/changes.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from planlint.core.messages import show
from planlint.core.power import significant
from planlint.rules.base import ERROR, PlanContext, Problem, rule
from planlint.rules.power import describe, design, eval_items, exact, proportion_metric

VERDICTS = ("met", "not_met", "inconclusive")


@dataclass(frozen=True)
class Verdict:
    """The verdict a plan's numbers give, and why, as a message says it."""

    verdict: str
    why: str


def computed_verdict(ctx: PlanContext) -> Verdict | None:
    """What `outcome.verdict` must be, from the baseline, the target and `outcome.value`;
    None when one of them is missing or not a number (PL003, PL404, PL602 say so)."""
    value, baseline, target = ctx.get("outcome", "value"), ctx.get("baseline", "result", "value"), ctx.get("decision", "target_improvement")
    outcome, start, goal = exact(value), exact(baseline), exact(target)
    if outcome is None or start is None or goal is None or goal <= 0:
        return None
    improvement = outcome - start
    metric = ctx.get("decision", "metric")
    if proportion_metric(metric) and not (0 <= start <= 1 and 0 <= outcome <= 1):
        return None  # outside the metric's range: PL612
    found = eval_items(ctx)
    tested = design(ctx)
    if proportion_metric(metric) and found is not None and tested is not None:
        n, source = found
        if not significant(float(start), float(outcome), n, tested):
            return Verdict("inconclusive", f"the difference {improvement} from the baseline {show(baseline)} is within noise on {n} eval items ({source}) at {describe(tested)}")
    if improvement >= goal:
        return Verdict("met", f"the improvement {improvement} from the baseline {show(baseline)} reaches decision.target_improvement {show(target)}")
    return Verdict("not_met", f"the improvement {improvement} from the baseline {show(baseline)} is below decision.target_improvement {show(target)}")


@rule("PL615", "verdict-inconsistent", ERROR)
def verdict_inconsistent(ctx: PlanContext) -> Iterator[Problem]:
    """A completed plan's recorded `outcome.verdict` disagrees with the one its numbers give, or it records no outcome.

    A run that failed becomes a success when its report says so: the
    decision rule was written before the run so that the result could not
    be argued afterwards. A completed plan records `outcome: {value,
    verdict}`, and planlint computes the verdict from `baseline.result.value`,
    `decision.target_improvement` and `outcome.value`: `met` when the
    improvement reaches the target, `not_met` when it does not. When the
    metric is a proportion and the number of eval items is known, a
    difference within noise (the test PL611 sizes, at `decision.alpha`) is
    `inconclusive`, and only that verdict is consistent. A recorded verdict
    that disagrees is reported at `outcome.verdict`, naming both; a completed
    plan without `outcome` at line 1.

    Example (fails):
        metadata: {name: retail-refund-window, owner: "@support-ml", status: completed}
        splits:
          train: {path: data/retail/train.jsonl}
          eval: {path: data/retail/eval.jsonl, frozen: true, size: 400}
          boundary: {group_key: customer_id}
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@1, value: 0.41, rollouts: 1600}
        outcome: {value: 0.47, verdict: met}
    Example (passes):
        metadata: {name: retail-refund-window, owner: "@support-ml", status: completed}
        splits:
          train: {path: data/retail/train.jsonl}
          eval: {path: data/retail/eval.jsonl, frozen: true, size: 400}
          boundary: {group_key: customer_id}
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@1, value: 0.41, rollouts: 1600}
        outcome: {value: 0.53, verdict: met}
    """
    outcome = ctx.get("outcome")
    if not isinstance(outcome, dict):
        if ctx.get("metadata", "status") == "completed" and "outcome" not in ctx.data:
            yield Problem(("outcome",), "the plan is completed but records no outcome: add outcome: {value, verdict} "
                                        "with the measured value and met, not_met or inconclusive", missing=True)
        return
    recorded = outcome.get("verdict")
    if recorded not in VERDICTS:
        return  # absent or not one of them: PL003
    computed = computed_verdict(ctx)
    if computed is None or computed.verdict == recorded:
        return
    yield Problem(("outcome", "verdict"), f"outcome.verdict is {show(recorded)}, but the plan's numbers give {computed.verdict}: {computed.why}; "
                                          f"record {computed.verdict} (the decision was fixed before the run)")


def card_verdict(data: Any) -> dict | None:
    """{"recorded", "computed"} for a change card: a plan that is completed or records an outcome."""
    if not isinstance(data, dict):
        return None
    ctx = PlanContext(data=data, path="")
    outcome = ctx.get("outcome")
    if not isinstance(outcome, dict) and ctx.get("metadata", "status") != "completed":
        return None
    recorded = outcome.get("verdict") if isinstance(outcome, dict) else None
    computed = computed_verdict(ctx)
    return {"recorded": recorded if isinstance(recorded, str) and recorded in VERDICTS else None,
            "computed": computed.verdict if computed is not None else None}

