"""Can the eval detect the target? PL611 (power), PL612 (bounds), PL613 (rollouts).

A decision is only as good as the eval behind it: a target the eval's items
cannot tell from noise, a target the metric cannot reach, or a baseline that
never scored every item decides nothing. The statistics are in
`planlint.core.power`; what planlint knows about metrics (which are
proportions, and pass@k's k) is here, as is the number of eval items.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any, Iterator

from planlint.core.messages import show
from planlint.core.power import ALPHA, POWER, Design, detectable, items_needed, largest_difference, whole_items
from planlint.core.yaml_values import scalar_text
from planlint.rules.base import ERROR, WARNING, Note, PlanContext, Problem, rule

#: ctx.memo key under which a data check that read the eval split leaves the number of
#: its rows (an int). The data rules run before PL611 (registry order), so a counted size
#: there wins over the declared `splits.eval.size`.
COUNTED_EVAL_ITEMS = "eval_items_counted"

# Proportions of items (higher is better, from 0 to 1): pass@k and tau-bench's pass^k,
# accuracy, exact match and success, pass, solve, resolve or win rates.
_PASS_AT = re.compile(r"^pass[@^]([1-9][0-9]{0,5})$")
_PROPORTION = re.compile(r"^(?:[a-z0-9]+_)*(?:accuracy|acc|exact_match|success_rate|pass_rate|solve_rate|resolve_rate|resolved_rate|win_rate)$")
STRICT_STATUSES = ("approved", "running")  # PL611 is an error once the plan is approved or running


def proportion_metric(name: Any) -> bool:
    """Is `name` a metric planlint knows to be a proportion of items, from 0 to 1, higher is better?"""
    if not isinstance(name, str):
        return False
    key = re.sub(r"[\s-]+", "_", name.strip().lower())
    return bool(_PASS_AT.match(key) or _PROPORTION.match(key))


def samples_per_item(name: Any) -> int:
    """The k of pass@k (or pass^k): the samples of each item the metric needs; 1 otherwise."""
    match = _PASS_AT.match(name.strip().lower()) if isinstance(name, str) else None
    return int(match.group(1)) if match else 1


def number(value: Any) -> float | None:
    """A plan value that is a finite number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def exact(value: Any) -> Decimal | None:
    """A plan number as written (`0.93` is 0.93, not 0.9300000000000000488), else None."""
    if number(value) is None:
        return None
    try:
        return Decimal(scalar_text(value).strip().replace("_", ""))
    except InvalidOperation:
        return Decimal(repr(float(value)))


def whole(value: Any) -> int | None:
    """A plan value that is a whole number >= 1, else None."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return None
    return int(value)


def eval_items(ctx: PlanContext) -> tuple[int, str] | None:
    """(the number of eval items, where it comes from), or None when it is not known.

    Counted by a data check that read the split (COUNTED_EVAL_ITEMS in ctx.memo), else
    the eval split's task list, else its declared `size`."""
    counted = whole(ctx.memo.get(COUNTED_EVAL_ITEMS))
    if counted is not None:
        return counted, "counted in the eval split"
    tasks = ctx.get("splits", "eval", "tasks")
    if isinstance(tasks, list) and tasks:
        return len(tasks), "splits.eval.tasks"
    size = whole(ctx.get("splits", "eval", "size"))
    if size is not None:
        return size, "splits.eval.size"
    return None


def _probability(value: Any) -> float | None:
    found = number(value)
    return found if found is not None and 0 < found < 1 else None


def design(ctx: PlanContext) -> Design | None:
    """How the decision will be tested, from the plan (None when `decision.alpha`, `power` or
    `discordance` is given but not a usable number: PL003 says so, and nothing is guessed).

    Paired when the same items are re-scored: the eval split is frozen and the baseline
    was measured on the decision's split."""
    decision = ctx.mapping("decision") or {}
    alpha, power = decision.get("alpha", ALPHA), decision.get("power", POWER)
    if _probability(alpha) is None or _probability(power) is None:
        return None
    baseline_split, decision_split = ctx.get("baseline", "split"), decision.get("split", "eval")
    paired = ctx.get("splits", "eval", "frozen") is True and (not isinstance(baseline_split, str) or baseline_split == decision_split)
    declared = decision.get("discordance")
    share = number(declared)
    if declared is not None and (share is None or not 0 < share <= 1):
        return None
    return Design(float(alpha), float(power), paired, share if paired else None)


def describe(design: Design) -> str:
    """The test, as a message says it."""
    if not design.paired:
        how = "unpaired, as the eval split is not frozen and the run may be scored on other items: the two-proportion z-test, sized as Fleiss does"
    elif design.discordance is not None:
        how = f"paired, the same items re-scored: McNemar's test, sized as Connor (1987) does, with decision.discordance {design.discordance:g}"
    else:
        how = "paired, the same items re-scored: McNemar's test, sized as Connor (1987) does"
    return f"two-sided alpha {design.alpha:g} and power {design.power:g} ({how})"


def _rounded_up(delta: float) -> str:
    return f"{math.ceil(delta * 1000 - 1e-9) / 1000:.3f}"


@rule("PL611", "eval-underpowered", ERROR)
def eval_underpowered(ctx: PlanContext) -> Iterator[Problem | Note]:
    """`decision.target_improvement` is smaller than the eval's items can tell from noise.

    A target the eval cannot detect decides nothing: with 300 items a pass@1
    of 0.41 moves by several points between two runs of the same model, so a
    0.03 improvement is as likely to be luck as learning. For a metric that
    is a proportion of items (pass@k, accuracy, a success, pass or win rate)
    planlint computes the minimal detectable improvement over
    `baseline.result.value` from the number of eval items (`splits.eval.size`,
    or the length of `splits.eval.tasks`) at two-sided alpha 0.05 and power
    0.8 (`decision.alpha` and `decision.power` override them): paired when
    the eval split is frozen, so the same items are re-scored (McNemar's
    test, sized as Connor 1987 does, with `decision.discordance` when a pilot
    measured it), unpaired otherwise (Fleiss). The finding gives the items
    the target needs and the smallest target the current items can show. A
    warning while the plan is a draft, an error once it is approved or
    running. A metric planlint does not know is a note, not a guess.

    Example (fails):
        splits:
          train: {path: data/retail/train.jsonl}
          eval: {path: data/retail/eval.jsonl, frozen: true, size: 120}
          boundary: {group_key: customer_id}
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@1, value: 0.41, rollouts: 480}
    Example (passes):
        splits:
          train: {path: data/retail/train.jsonl}
          eval: {path: data/retail/eval.jsonl, frozen: true, size: 400}
          boundary: {group_key: customer_id}
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@1, value: 0.41, rollouts: 1600}
    """
    metric, target_value = ctx.get("decision", "metric"), ctx.get("decision", "target_improvement")
    p0, target = number(ctx.get("baseline", "result", "value")), number(target_value)
    found = eval_items(ctx)
    if p0 is None or target is None or target <= 0 or found is None or not isinstance(metric, str) or not metric.strip():
        return  # nothing measured, no target (PL602), or no count of items: nothing to compute
    if not proportion_metric(metric):
        yield Note(f"{ctx.path}: PL611 did not check whether decision.target_improvement can be told from noise: planlint does not know "
                   f"the metric {show(metric)} (it knows proportions of items: pass@k, accuracy, exact_match, and success, pass, solve or win rates)")
        return
    if not 0 <= p0 <= 1 or p0 + target > 1 + 1e-12:
        return  # outside the metric's range: PL612
    tested = design(ctx)
    if tested is None:
        return
    n, source = found
    if tested.discordance is not None and tested.discordance < target:
        yield Problem(("decision", "discordance"), f"decision.discordance {show(ctx.get('decision', 'discordance'))} is below decision.target_improvement "
                                                   f"{show(target_value)}: an improvement of {target:g} changes the outcome of at least that share of "
                                                   f"the items, so both cannot hold; re-measure the discordance, or revisit the target",
                      severity=None if ctx.get("metadata", "status") in STRICT_STATUSES else WARNING)
        return
    needed = whole_items(items_needed(p0, target, tested))
    if needed is None or needed <= n:
        return  # None: no number of items at all, only for a declared discordance below the target (above)
    severity = None if ctx.get("metadata", "status") in STRICT_STATUSES else WARNING
    items = f"{n} eval item{'s' if n != 1 else ''} ({source})"
    smallest = detectable(p0, n, tested)
    if smallest is None:
        top = largest_difference(p0, tested)
        most = whole_items(items_needed(p0, top, tested))
        can = (f"{items} cannot show any improvement of {metric} over the baseline {show(ctx.get('baseline', 'result', 'value'))}: "
               f"even the largest there is ({top:.3g}) needs {most if most is not None else 'more'} items")
    else:
        can = f"{items} can show an improvement of {_rounded_up(smallest)} or more"
    need = f"it needs {needed} items"
    yield Problem(
        ("decision", "target_improvement"),
        f"decision.target_improvement {show(target_value)} cannot be told from noise: from a {metric} baseline of "
        f"{show(ctx.get('baseline', 'result', 'value'))}, {need} at {describe(tested)}; {can}. "
        f"Add eval items, or aim for a larger improvement",
        severity=severity,
    )


@rule("PL612", "target-out-of-range", ERROR)
def target_out_of_range(ctx: PlanContext) -> Iterator[Problem]:
    """A bounded metric's baseline, baseline plus target, or recorded outcome leaves its range.

    A proportion of items (pass@1, accuracy, a success rate) lies between 0
    and 1. A baseline of 0.93 with a target improvement of 0.5 asks for a
    pass@1 of 1.43, which no model reaches: the decision can never be met,
    and was probably written in another unit (percentage points) or against
    another baseline. A baseline or outcome outside 0 to 1 (`value: 41` for
    41%) is the same mistake. Reported at the baseline's value, at the target,
    or at `outcome.value`.

    Example (fails):
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@1, value: 0.93, rollouts: 64}
        decision:
          metric: pass@1
          split: eval
          target_improvement: 0.5
          stopping: {max_steps: 400, patience_evals: 3}
    Example (passes):
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@1, value: 0.93, rollouts: 64}
        decision:
          metric: pass@1
          split: eval
          target_improvement: 0.05
          stopping: {max_steps: 400, patience_evals: 3}
    """
    metric = ctx.get("decision", "metric")
    recorded = ctx.get("baseline", "result", "metric")
    if not proportion_metric(metric) or (isinstance(recorded, str) and recorded != metric):
        return  # unknown or unbounded, or the baseline is in another metric (PL405)
    value = ctx.get("baseline", "result", "value")
    baseline = exact(value)
    outside = f"{metric} is a proportion of items, from 0 to 1"
    if baseline is not None and not 0 <= baseline <= 1:
        yield Problem(("baseline", "result", "value"), f"baseline.result.value {show(value)} is outside the range of {metric}: {outside} (for 41% write 0.41)")
        baseline = None
    target_value = ctx.get("decision", "target_improvement")
    target = exact(target_value)
    if baseline is not None and target is not None and target > 0 and baseline + target > 1:
        yield Problem(
            ("decision", "target_improvement"),
            f"the baseline {show(value)} plus decision.target_improvement {show(target_value)} is {baseline + target}, "
            f"which {metric} cannot reach ({outside}): at most {1 - baseline} is left to improve; state the target in the metric's units",
        )
    outcome_value = ctx.get("outcome", "value")
    outcome = exact(outcome_value)
    if outcome is not None and not 0 <= outcome <= 1:
        yield Problem(("outcome", "value"), f"outcome.value {show(outcome_value)} is outside the range of {metric}: {outside}")


@rule("PL613", "rollouts-too-few", WARNING)
def rollouts_too_few(ctx: PlanContext) -> Iterator[Problem]:
    """`baseline.result.rollouts` (or the samples per item) is below what the metric needs to be estimated at all.

    A pass rate over the eval split needs every item scored at least once:
    64 rollouts on 300 items left most of them unscored, and the baseline
    describes some other, smaller eval. pass@k needs at least k samples of
    each item (the unbiased estimator of Chen et al., 2021, is defined only
    for n >= k), so pass@8 on 300 items needs 2,400 rollouts, and
    `decoding.samples` (of `evaluation` or `baseline.evaluation`) below k
    cannot estimate it. Reported at the value that is too small.

    Example (fails):
        splits:
          train: {path: data/retail/train.jsonl}
          eval: {path: data/retail/eval.jsonl, frozen: true, size: 48}
          boundary: {group_key: customer_id}
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@4, value: 0.41, rollouts: 64}
        decision:
          metric: pass@4
          split: eval
          target_improvement: 0.30
          stopping: {max_steps: 400, patience_evals: 3}
    Example (passes):
        splits:
          train: {path: data/retail/train.jsonl}
          eval: {path: data/retail/eval.jsonl, frozen: true, size: 48}
          boundary: {group_key: customer_id}
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@4, value: 0.41, rollouts: 192}
        decision:
          metric: pass@4
          split: eval
          target_improvement: 0.30
          stopping: {max_steps: 400, patience_evals: 3}
    """
    metric = ctx.get("baseline", "result", "metric")
    if not isinstance(metric, str):
        metric = ctx.get("decision", "metric")
    if not proportion_metric(metric):
        return
    k = samples_per_item(metric)
    for section in (("evaluation",), ("baseline", "evaluation")):
        route = section + ("decoding", "samples")
        samples = whole(ctx.get(*route))
        if k > 1 and samples is not None and samples < k:
            yield Problem(route, f"{'.'.join(route)} is {samples}, but {metric} needs at least {k} samples of each item "
                                 f"(its unbiased estimator is defined only for n >= k): sample {k} or more")
    rollouts = whole(ctx.get("baseline", "result", "rollouts"))
    if rollouts is None:
        return
    found = eval_items(ctx)
    route = ("baseline", "result", "rollouts")
    if found is None:
        if k > 1 and rollouts < k:
            yield Problem(route, f"baseline.result.rollouts {rollouts} is fewer than the {k} samples of an item that {metric} needs: "
                                 f"record at least {k} rollouts of each eval item")
        return
    n, source = found
    if rollouts < k * n:
        if k > 1:
            why = f"{metric} needs at least {k} samples of each of the {n} eval items ({source}), {k * n} rollouts in all"
        else:
            why = f"{metric} over the eval split needs every one of its {n} items ({source}) scored at least once"
        yield Problem(route, f"baseline.result.rollouts {rollouts} is too few: {why}; with fewer, the baseline describes a smaller eval than the decision's")
