"""Plans that start from a benchmark profile: PL109 (pinned, cases said) and PL312 (its native scoring).

The platform's guide: "A benchmark Profile can provide tasks, environment
instructions and native scoring. Inspect the source, selected cases, grader
and execution requirements before running it. Reuse its native scoring
rather than recreating it." `dataset.profile: {name, version, cases}` names
the profile, its exact version and the cases the plan selected; a `native`
grader names the profile (its `profile:` or its `name`).
"""

from __future__ import annotations

from typing import Any, Iterator

from planlint.core.floating import floating_reason
from planlint.core.messages import show
from planlint.core.yaml_values import scalar_text
from planlint.rules.base import ERROR, WARNING, PlanContext, Problem, rule


def profile_name(ctx: PlanContext) -> str | None:
    name = ctx.get("dataset", "profile", "name")
    return name.strip() if isinstance(name, str) and name.strip() else None


@rule("PL109", "profile-unpinned", ERROR)
def profile_unpinned(ctx: PlanContext) -> Iterator[Problem]:
    """`dataset.profile` has no version, a floating one, or does not say which cases the plan selected.

    A benchmark profile brings its tasks, environment and scoring, and each
    of them changes between the profile's versions: tau-bench's tasks and
    its retail database have been corrected more than once. A result on
    "tau-retail" is only comparable with another one on the same version
    and the same cases. Pin `version` like a dataset release (PL102), and
    say in `cases` which cases were selected (a list of ids, or the text
    naming the selection, e.g. "official test split, all 115 tasks").

    Example (fails):
        dataset:
          name: tau-retail-tasks
          release: "2026.10.01"
          format: task_metadata
          profile: {name: tau-retail, version: latest}
        graders:
          - {id: outcome, type: native, name: tau-retail, version: 1.0.2, profile: tau-retail}
        reward:
          graders: [outcome]
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {outcome: 1.0.2}
          result: {metric: pass@1, value: 0.41, rollouts: 64}
    Example (passes):
        dataset:
          name: tau-retail-tasks
          release: "2026.10.01"
          format: task_metadata
          profile: {name: tau-retail, version: 1.0.2, cases: "official test split, all 115 tasks"}
        graders:
          - {id: outcome, type: native, name: tau-retail, version: 1.0.2, profile: tau-retail}
        reward:
          graders: [outcome]
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {outcome: 1.0.2}
          result: {metric: pass@1, value: 0.41, rollouts: 64}
    """
    profile = ctx.mapping("dataset", "profile")
    if profile is None:
        return
    label = f"dataset.profile {show(profile['name'])}" if isinstance(profile.get("name"), str) else "dataset.profile"
    route = ("dataset", "profile")
    if "version" not in profile:
        yield Problem(route + ("version",), f"{label} has no version: pin the exact version of the benchmark profile "
                                            f"(its tasks, environment and scoring change between versions)", missing=True)
    else:
        reason = floating_reason(profile["version"])
        if reason:
            yield Problem(route + ("version",), f"{label} version {show(profile['version'])} is floating ({reason}): pin one exact version of the profile")
    if "cases" not in profile:
        yield Problem(route + ("cases",), f"{label} does not say which cases the plan selected: list their ids in cases, "
                                          f"or name the selection (e.g. cases: \"official test split, all 115 tasks\")", missing=True)


def _names_profile(grader: dict, name: str) -> bool:
    if grader.get("type") != "native":
        return False
    return any(isinstance(grader.get(key), str) and grader[key].strip() == name for key in ("profile", "name"))


def _scoring(ctx: PlanContext) -> list[tuple[int, dict]]:
    """The graders that score the experiment: the reward's for a plan with one, else every grader."""
    graders = list(ctx.graders())
    reward = ctx.get("reward", "graders")
    if isinstance(reward, list) and reward:
        ids = {scalar_text(i) for i in reward if i is not None and not isinstance(i, (dict, list))}
        in_reward = [(index, g) for index, g in graders if not isinstance(g.get("id"), (dict, list)) and scalar_text(g.get("id")) in ids]
        if in_reward:
            return in_reward
    return graders


@rule("PL312", "profile-scoring-not-native", WARNING)
def profile_scoring_not_native(ctx: PlanContext) -> Iterator[Problem]:
    """The plan starts from a benchmark profile but scores it with something other than the profile's native scoring.

    The guide says to "reuse its native scoring rather than recreating it":
    a re-implemented checker drifts from the benchmark's own (a missed
    database field, a looser string match), and its numbers are then
    neither the benchmark's nor comparable with anyone else's on it. Score
    with a `native` grader that names the profile (`profile: NAME`, or
    `name: NAME`). Reported at the `type` of the first grader that scores
    the plan (the reward's, else the first).

    Example (fails):
        dataset:
          name: tau-retail-tasks
          release: "2026.10.01"
          format: task_metadata
          profile: {name: tau-retail, version: 1.0.2, cases: "official test split, all 115 tasks"}
        graders:
          - {id: db-state, type: code, name: tau-retail-db-state, version: 1.4.2}
        reward:
          graders: [db-state]
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.4.2}
          result: {metric: pass@1, value: 0.41, rollouts: 64}
    Example (passes):
        dataset:
          name: tau-retail-tasks
          release: "2026.10.01"
          format: task_metadata
          profile: {name: tau-retail, version: 1.0.2, cases: "official test split, all 115 tasks"}
        graders:
          - {id: db-state, type: native, name: tau-retail-db-state, version: 1.0.2, profile: tau-retail}
        reward:
          graders: [db-state]
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.0.2}
          result: {metric: pass@1, value: 0.41, rollouts: 64}
    """
    name = profile_name(ctx)
    if name is None:
        return
    scoring = _scoring(ctx)
    if not scoring or any(_names_profile(grader, name) for _, grader in scoring):
        return
    index, grader = scoring[0]
    kind: Any = grader.get("type")
    ident = grader.get("id")
    label = f"grader {show(ident)}" if isinstance(ident, str) else f"graders[{index}]"
    what = f"a {kind} grader" if isinstance(kind, str) else "not a native grader"
    yield Problem(("graders", index, "type") if "type" in grader else ("graders", index),
                  f"the plan starts from the benchmark profile {show(name)} (dataset.profile), but {label} is {what}, not the profile's "
                  f"native scoring: reuse it (type: native, profile: {name}) rather than recreating it")
