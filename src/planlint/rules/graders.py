"""Grader versions, calibration, qualification and use: PL301-PL310."""

from __future__ import annotations

from functools import partial
from typing import Iterator

from planlint.core.floating import dated_snapshot, floating_reason
from planlint.core.messages import show
from planlint.core.yaml_values import scalar_text
from planlint.rules.base import ERROR, MISSING, WARNING, PlanContext, Problem, rule
from planlint.rules.pinning import pin_newest


def _label(index: int, grader: dict) -> str:
    ident = grader.get("id")
    return f"grader {show(ident)}" if isinstance(ident, str) and ident else f"graders[{index}]"


def grader_ids(ctx: PlanContext) -> set[str]:
    return {scalar_text(g["id"]) for _, g in ctx.graders() if "id" in g and not isinstance(g["id"], (dict, list))}


@rule("PL301", "grader-version-missing", ERROR)
def grader_version_missing(ctx: PlanContext) -> Iterator[Problem]:
    """A grader has no `version`.

    Graders change: a fixed bug in a verifier or a reworded judge rubric moves
    every score. Without a version the baseline and the trained model may be
    scored by different graders.

    Example (fails):
        graders:
          - id: db-state
            type: code
            name: tau-retail-db-state
          - id: tone
            type: llm_judge
            name: polite-tone-judge
            version: 3.0.1
            judge_model: {name: gpt-5-mini, revision: "2026-08-07"}
            calibration: {labels: 200, agreement: 0.87}
    Example (passes):
        graders:
          - id: db-state
            type: code
            name: tau-retail-db-state
            version: 1.4.2
          - id: tone
            type: llm_judge
            name: polite-tone-judge
            version: 3.0.1
            judge_model: {name: gpt-5-mini, revision: "2026-08-07"}
            calibration: {labels: 200, agreement: 0.87}
    """
    for index, grader in ctx.graders():
        if "version" not in grader:
            yield Problem(("graders", index, "version"), f"{_label(index, grader)} has no version: pin the exact grader version that scores the run", missing=True)


@rule("PL302", "grader-version-floating", ERROR, fixable=True)
def grader_version_floating(ctx: PlanContext) -> Iterator[Problem]:
    """A grader's `version` is floating.

    `latest` or `^1.4` lets the grader change between the baseline and the
    run. Pin one version; `planlint --fix` can pin it to the newest published
    version when a catalog or registry is configured.

    Example (fails):
        graders:
          - id: db-state
            type: code
            name: tau-retail-db-state
            version: latest
          - id: tone
            type: llm_judge
            name: polite-tone-judge
            version: 3.0.1
            judge_model: {name: gpt-5-mini, revision: "2026-08-07"}
            calibration: {labels: 200, agreement: 0.87}
    Example (passes):
        graders:
          - id: db-state
            type: code
            name: tau-retail-db-state
            version: 1.4.2
          - id: tone
            type: llm_judge
            name: polite-tone-judge
            version: 3.0.1
            judge_model: {name: gpt-5-mini, revision: "2026-08-07"}
            calibration: {labels: 200, agreement: 0.87}
    """
    for index, grader in ctx.graders():
        if "version" in grader:
            reason = floating_reason(grader["version"])
            if reason:
                route = ("graders", index, "version")
                yield Problem(route, f"{_label(index, grader)} version {show(grader['version'])} is floating ({reason}): pin one exact version, e.g. 1.4.2",
                              fix=partial(pin_newest, ctx, "graders", grader.get("name"), route, grader["version"], grader.get("id")))


@rule("PL303", "unknown-grader", ERROR)
def unknown_grader(ctx: PlanContext) -> Iterator[Problem]:
    """`reward.graders` or `baseline.grader_versions` names an id not in `graders`.

    A reward or baseline that refers to a grader the plan does not define is
    scored by something nobody reviewed, or by nothing.

    Example (fails):
        reward:
          graders: [db-state, politeness]
    Example (passes):
        reward:
          graders: [db-state, tone]
    """
    known = grader_ids(ctx)
    reward = ctx.get("reward", "graders")
    if isinstance(reward, list):
        for index, ident in enumerate(reward):
            if isinstance(ident, (dict, list)):
                continue
            if scalar_text(ident) not in known:
                yield Problem(("reward", "graders", index), f"reward.graders names {show(ident)}, which is not a grader id in graders: {_known(known)}")
    versions = ctx.mapping("baseline", "grader_versions")
    if versions is not None:
        for ident in versions:
            if ident not in known and not ident.startswith("x-"):
                yield Problem(("baseline", "grader_versions", ident), f"baseline.grader_versions names {show(ident)}, which is not a grader id in graders: {_known(known)}", at_key=True)


def _known(known: set[str]) -> str:
    return "known ids are " + ", ".join(show(k) for k in sorted(known)) if known else "the plan defines no graders"


@rule("PL304", "judge-model-unpinned", ERROR)
def judge_model_unpinned(ctx: PlanContext) -> Iterator[Problem]:
    """An `llm_judge` grader lacks `judge_model.name` or has an absent or floating `judge_model.revision`.

    An LLM judge is only as stable as the model behind it: a judge model that
    moves to a new snapshot changes every score it gives. A name that is a
    provider's dated snapshot is a pin by itself, and needs no revision:
    OpenAI's `-YYYY-MM-DD` (`gpt-4.1-mini-2025-04-14`), Anthropic's
    `-YYYYMMDD` (`claude-3-5-sonnet-20241022`, `@YYYYMMDD` on Vertex AI) and
    Google's `-NNN` for Gemini (`gemini-1.5-pro-002`).

    Example (fails):
        graders:
          - id: db-state
            type: code
            name: tau-retail-db-state
            version: 1.4.2
          - id: tone
            type: llm_judge
            name: polite-tone-judge
            version: 3.0.1
            judge_model: {name: gpt-5-mini, revision: latest}
            calibration: {labels: 200, agreement: 0.87}
    Example (passes):
        graders:
          - id: db-state
            type: code
            name: tau-retail-db-state
            version: 1.4.2
          - id: tone
            type: llm_judge
            name: polite-tone-judge
            version: 3.0.1
            judge_model: {name: gpt-5-mini, revision: "2026-08-07"}
            calibration: {labels: 200, agreement: 0.87}
    """
    for index, grader in ctx.graders():
        if grader.get("type") != "llm_judge":
            continue
        label = _label(index, grader)
        route = ("graders", index, "judge_model")
        if "judge_model" not in grader:
            yield Problem(route, f"{label} is an llm_judge without judge_model: name the judge model and pin its revision", missing=True)
            continue
        judge = grader["judge_model"]
        if not isinstance(judge, dict):
            yield Problem(route, f"{label} judge_model must be a mapping with name and revision")
            continue
        if "name" not in judge or not _text(judge.get("name")):
            yield Problem(route + ("name",), f"{label} judge_model has no name: name the model that judges", missing="name" not in judge)
        if "revision" not in judge:
            if not dated_snapshot(judge.get("name")):  # a dated snapshot's name is its pin
                yield Problem(
                    route + ("revision",),
                    f"{label} judge_model has no revision: pin the exact judge model snapshot, with a revision or a dated snapshot "
                    "name (OpenAI gpt-4.1-mini-2025-04-14, Anthropic claude-3-5-sonnet-20241022, Google gemini-1.5-pro-002)",
                    missing=True,
                )
        else:
            reason = floating_reason(judge["revision"])
            if reason:
                yield Problem(route + ("revision",), f"{label} judge_model.revision {show(judge['revision'])} is floating ({reason}): pin an exact snapshot, e.g. \"2026-08-07\"")


def _text(value) -> bool:
    return value is not None and not isinstance(value, (dict, list)) and scalar_text(value).strip() != ""


@rule("PL305", "judge-uncalibrated", WARNING)
def judge_uncalibrated(ctx: PlanContext) -> Iterator[Problem]:
    """An `llm_judge` grader has no `calibration`.

    A judge whose agreement with human labels was never measured may reward
    the wrong thing, and GRPO will optimise whatever it rewards. Record how
    many labels it was checked against and the agreement.

    Example (fails):
        graders:
          - id: db-state
            type: code
            name: tau-retail-db-state
            version: 1.4.2
          - id: tone
            type: llm_judge
            name: polite-tone-judge
            version: 3.0.1
            judge_model: {name: gpt-5-mini, revision: "2026-08-07"}
    Example (passes):
        graders:
          - id: db-state
            type: code
            name: tau-retail-db-state
            version: 1.4.2
          - id: tone
            type: llm_judge
            name: polite-tone-judge
            version: 3.0.1
            judge_model: {name: gpt-5-mini, revision: "2026-08-07"}
            calibration: {labels: 200, agreement: 0.87}
    """
    reported = _reported_by_pl310(ctx)
    for index, grader in ctx.graders():
        if grader.get("type") == "llm_judge" and "calibration" not in grader and index not in reported:
            yield Problem(("graders", index, "calibration"), f"{_label(index, grader)} is an llm_judge with no calibration: measure agreement with human labels and record calibration: {{labels, agreement}}", missing=True)


@rule("PL306", "baseline-grader-mismatch", ERROR)
def baseline_grader_mismatch(ctx: PlanContext) -> Iterator[Problem]:
    """`baseline.grader_versions[id]` differs from that grader's `version`, or a reward grader is missing from it.

    A baseline scored by grader 1.4.1 cannot be compared with a run scored by
    1.4.2. When a grader version changes, the baseline must be measured again
    (a human decision, so planlint never rewrites it).

    Example (fails):
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.1, tone: 3.0.1}
          result: {metric: pass@1, value: 0.41, rollouts: 64}
    Example (passes):
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.2, tone: 3.0.1}
          result: {metric: pass@1, value: 0.41, rollouts: 64}
    """
    baseline = ctx.mapping("baseline")
    if baseline is None:
        return
    versions = {}
    for _, grader in ctx.graders():
        if "id" in grader and "version" in grader:  # a duplicated id is PL307's; the first one counts here
            versions.setdefault(scalar_text(grader["id"]), grader["version"])
    reward = ctx.get("reward", "graders")
    reward_ids = [scalar_text(i) for i in reward if not isinstance(i, (dict, list))] if isinstance(reward, list) else []
    recorded = baseline.get("grader_versions", MISSING)
    if recorded is MISSING:
        # A planned baseline may record its grader versions once measured; a
        # measured one must say what scored it.
        needed = [i for i in reward_ids if i in versions]
        if needed and "result" in baseline:
            yield Problem(("baseline", "grader_versions"), f"baseline has a result but no grader_versions: record the versions of {', '.join(show(n) for n in needed)} it was scored with", missing=True)
        return
    if not isinstance(recorded, dict):
        return
    repinned = ctx.services.repinned.get(ctx.path, {})  # set by --fix
    for ident, version in recorded.items():
        if ident in versions and scalar_text(version) != scalar_text(versions[ident]):
            why = ""
            if ident in repinned:
                old, new = repinned[ident]
                why = f" (--fix just pinned {show(ident)} from {show(old)} to {show(new)} and left the baseline alone: re-baselining is a human decision)"
            current = versions[ident]
            if floating_reason(current):  # never suggest a floating value as the fix
                fix = f"pin {ident}'s version in graders first (it is floating: PL302), then re-measure the baseline with that exact version and update grader_versions"
            else:
                fix = f"re-measure the baseline with {show(current)} (then update grader_versions)"
            yield Problem(
                ("baseline", "grader_versions", ident),
                f"baseline was scored with {ident} {show(version)} but the plan uses {show(current)}{why}: {fix}",
            )
    for ident in reward_ids:
        if ident in versions and ident not in recorded:
            yield Problem(("baseline", "grader_versions", ident), f"reward grader {show(ident)} is missing from baseline.grader_versions: record the version the baseline was scored with", missing=True)


@rule("PL307", "duplicate-grader-id", ERROR)
def duplicate_grader_id(ctx: PlanContext) -> Iterator[Problem]:
    """Two graders share an `id`.

    Reward and baseline refer to graders by id; with two graders behind one id
    nobody can tell which one scored what.

    Example (fails):
        graders:
          - id: db-state
            type: code
            name: tau-retail-db-state
            version: 1.4.2
          - id: db-state
            type: code
            name: tau-retail-db-audit
            version: 2.0.0
          - id: tone
            type: llm_judge
            name: polite-tone-judge
            version: 3.0.1
            judge_model: {name: gpt-5-mini, revision: "2026-08-07"}
            calibration: {labels: 200, agreement: 0.87}
    Example (passes):
        graders:
          - id: db-state
            type: code
            name: tau-retail-db-state
            version: 1.4.2
          - id: db-audit
            type: code
            name: tau-retail-db-audit
            version: 2.0.0
          - id: tone
            type: llm_judge
            name: polite-tone-judge
            version: 3.0.1
            judge_model: {name: gpt-5-mini, revision: "2026-08-07"}
            calibration: {labels: 200, agreement: 0.87}
    """
    seen: dict[str, int] = {}
    for index, grader in ctx.graders():
        ident = grader.get("id")
        if ident is None or isinstance(ident, (dict, list)):
            continue
        key = scalar_text(ident)
        if key in seen:
            yield Problem(("graders", index, "id"), f"grader id {show(ident)} is already used by graders[{seen[key]}]: give each grader a unique id")
        else:
            seen[key] = index


# Defaults of the config's `calibration` thresholds (docs/plan-format.md, section 4).
MIN_LABELS = 50
MIN_AGREEMENT = 0.8


def calibration_thresholds(config) -> tuple[float, float]:
    settings = getattr(config, "calibration", None) or {}
    return settings.get("min_labels", MIN_LABELS), settings.get("min_agreement", MIN_AGREEMENT)


def _number(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float))


@rule("PL308", "judge-calibration-weak", WARNING)
def judge_calibration_weak(ctx: PlanContext) -> Iterator[Problem]:
    """An `llm_judge` grader's `calibration.labels` is below `calibration.min_labels` or its `calibration.agreement` below `calibration.min_agreement`.

    The planning guide asks to qualify a judgment-based reward: "Resolve
    execution and calibration blockers before approving training." A judge
    checked against
    5 labels, or one that agrees with people 30% of the time, is not good
    enough to train against: GRPO learns whatever the judge gets wrong. The
    thresholds are config settings (`calibration: {min_labels: 50,
    min_agreement: 0.8}` by default).

    Example (fails):
        graders:
          - id: db-state
            type: code
            name: tau-retail-db-state
            version: 1.4.2
          - id: tone
            type: llm_judge
            name: polite-tone-judge
            version: 3.0.1
            judge_model: {name: gpt-5-mini, revision: "2026-08-07"}
            calibration:
              labels: 5
              agreement: 0.3
    Example (passes):
        graders:
          - id: db-state
            type: code
            name: tau-retail-db-state
            version: 1.4.2
          - id: tone
            type: llm_judge
            name: polite-tone-judge
            version: 3.0.1
            judge_model: {name: gpt-5-mini, revision: "2026-08-07"}
            calibration:
              labels: 200
              agreement: 0.87
    """
    min_labels, min_agreement = calibration_thresholds(ctx.config)
    for index, grader in ctx.graders():
        calibration = grader.get("calibration")
        if grader.get("type") != "llm_judge" or not isinstance(calibration, dict):
            continue  # no calibration at all is PL305's
        label = _label(index, grader)
        route = ("graders", index, "calibration")
        labels, agreement = calibration.get("labels"), calibration.get("agreement")
        if _number(labels) and labels < min_labels:
            yield Problem(route + ("labels",), f"{label} was calibrated on {show(labels)} labels, fewer than calibration.min_labels {min_labels:g}: measure its agreement on more human labels before training against it")
        if _number(agreement) and agreement < min_agreement:
            yield Problem(route + ("agreement",), f"{label} agrees with human labels {show(agreement)} of the time, below calibration.min_agreement {min_agreement:g}: improve the judge (rubric, model, examples) and re-calibrate before training against it")


@rule("PL309", "grader-not-qualified", WARNING)
def grader_not_qualified(ctx: PlanContext) -> Iterator[Problem]:
    """A `code` reward grader's `qualified_on` does not list `runtime.name` while the plan is approved or running.

    The planning guide: "A local verifier check does not qualify execution in
    another hosted environment." A verifier that passed on a laptop can time
    out, lack a dependency or see another sandbox on the training runtime,
    and every reward it gives there is then wrong. List in `qualified_on` the
    runtimes where the grader's execution has been checked.

    Example (fails):
        metadata:
          name: retail-refund-window
          owner: "@support-ml"
          status: approved
        runtime: {name: verl, version: 0.5.0}
        graders:
          - id: db-state
            type: code
            name: tau-retail-db-state
            version: 1.4.2
            qualified_on: [local]
          - id: tone
            type: llm_judge
            name: polite-tone-judge
            version: 3.0.1
            judge_model: {name: gpt-5-mini, revision: "2026-08-07"}
            calibration: {labels: 200, agreement: 0.87}
    Example (passes):
        metadata:
          name: retail-refund-window
          owner: "@support-ml"
          status: approved
        runtime: {name: verl, version: 0.5.0}
        graders:
          - id: db-state
            type: code
            name: tau-retail-db-state
            version: 1.4.2
            qualified_on: [local, verl]
          - id: tone
            type: llm_judge
            name: polite-tone-judge
            version: 3.0.1
            judge_model: {name: gpt-5-mini, revision: "2026-08-07"}
            calibration: {labels: 200, agreement: 0.87}
    """
    runtime = ctx.get("runtime", "name")
    if not isinstance(runtime, str) or not runtime.strip() or ctx.get("metadata", "status") not in ("approved", "running"):
        return
    reward = ctx.get("reward", "graders")
    if not isinstance(reward, list):
        return
    in_reward = {scalar_text(i) for i in reward if i is not None and not isinstance(i, (dict, list))}
    seen: set[str] = set()
    for index, grader in ctx.graders():
        ident = grader.get("id")
        if grader.get("type") != "code" or ident is None or isinstance(ident, (dict, list)):
            continue
        key = scalar_text(ident)
        if key not in in_reward or key in seen:  # a duplicated id is PL307's
            continue
        seen.add(key)
        label = _label(index, grader)
        route = ("graders", index, "qualified_on")
        if "qualified_on" not in grader:
            yield Problem(route, f"reward {label} has no qualified_on: check its execution on the runtime {show(runtime)} and list that runtime in qualified_on", missing=True)
            continue
        qualified = grader["qualified_on"]
        names = {scalar_text(n) for n in qualified if n is not None and not isinstance(n, (dict, list))} if isinstance(qualified, list) else set()
        if isinstance(qualified, list) and runtime not in names:
            yield Problem(route, f"reward {label} is not qualified on the runtime {show(runtime)} (qualified_on lists {', '.join(show(n) for n in qualified) or 'nothing'}): a check elsewhere does not qualify execution there; check it on {show(runtime)} and add it")


def uncalibrated_reward(ctx: PlanContext) -> list[tuple[int, dict]] | None:
    """The reward's graders when every one is an `llm_judge` without `calibration` in an approved or
    running GRPO plan (PL310's case), else None. An id no grader has is PL303's: then None."""
    if ctx.get("method", "type") != "grpo" or ctx.get("metadata", "status") not in ("approved", "running"):
        return None
    reward = ctx.get("reward", "graders")
    if not isinstance(reward, list) or not reward:
        return None
    by_id: dict[str, tuple[int, dict]] = {}
    for index, grader in ctx.graders():
        ident = grader.get("id")
        if ident is not None and not isinstance(ident, (dict, list)):
            by_id.setdefault(scalar_text(ident), (index, grader))  # a duplicated id is PL307's
    found = []
    for ident in reward:
        if ident is None or isinstance(ident, (dict, list)) or scalar_text(ident) not in by_id:
            return None
        index, grader = by_id[scalar_text(ident)]
        if grader.get("type") != "llm_judge" or "calibration" in grader:
            return None
        found.append((index, grader))
    return found


def _reported_by_pl310(ctx: PlanContext) -> set[int]:
    """The graders PL310 reports (so PL305 does not report them again), when it is enabled."""
    rules = getattr(ctx.config, "_rules", None)  # the run's resolved selection; a caller without one runs every rule
    if rules is not None and "PL310" not in rules:
        return set()
    return {index for index, _ in uncalibrated_reward(ctx) or ()}


@rule("PL310", "reward-uncalibrated", ERROR)
def reward_uncalibrated(ctx: PlanContext) -> Iterator[Problem]:
    """An approved or running GRPO plan's whole reward comes from `llm_judge` graders that were never calibrated.

    GRPO optimises whatever the reward says, and a judge whose agreement
    with human labels was never measured may reward confident wrong answers,
    length or flattery. With a code grader beside it, the verifier keeps
    the judge in check; when uncalibrated judges are the whole reward,
    nothing does. The guide: "Resolve execution and calibration blockers
    before approving training." Calibrate the judges (`calibration: {labels,
    agreement}`) or add an executable grader to the reward before the plan
    is approved. Reported at `reward.graders`; PL305 then does not report
    those judges again.

    Example (fails):
        metadata: {name: retail-refund-window, owner: "@support-ml", status: approved}
        graders:
          - id: tone
            type: llm_judge
            name: polite-tone-judge
            version: 3.0.1
            judge_model: {name: gpt-5-mini, revision: "2026-08-07"}
        reward:
          graders: [tone]
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {tone: 3.0.1}
          result: {metric: pass@1, value: 0.41, rollouts: 64}
    Example (passes):
        metadata: {name: retail-refund-window, owner: "@support-ml", status: approved}
        graders:
          - id: tone
            type: llm_judge
            name: polite-tone-judge
            version: 3.0.1
            judge_model: {name: gpt-5-mini, revision: "2026-08-07"}
            calibration: {labels: 200, agreement: 0.87}
        reward:
          graders: [tone]
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {tone: 3.0.1}
          result: {metric: pass@1, value: 0.41, rollouts: 64}
    """
    judges = uncalibrated_reward(ctx)
    if not judges:
        return
    names = ", ".join(_label(index, grader) for index, grader in judges)
    what = "an llm_judge" if len(judges) == 1 else "llm_judge graders"
    status = ctx.get("metadata", "status")
    yield Problem(("reward", "graders"), f"the plan is {status}, and its whole reward comes from {names}, {what} with no calibration: "
                                         f"measure agreement with human labels (calibration: {{labels, agreement}}) or add an executable grader "
                                         f"to the reward before training against it")
