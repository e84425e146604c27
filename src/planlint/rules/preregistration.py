"""Diff-mode rules of a pre-registered experiment: PL710 (grader code) and PL711 (the decision).

What an approved plan promises cannot move after the fact without saying
so: the code that scores (a grader's version is the promise its scoring did
not change) and the decision that judges the result (metric, split, target,
stopping). Like the other diff rules these never touch git: diff mode hands
them the base version of the plan (`ctx.base`) and a reader of the base
revision's files (`ctx.base_text`); the working tree's files are read here,
confined to the repository as `rules/grader_source.py` confines them.
"""

from __future__ import annotations

from typing import Any, Iterator

from planlint.core.loader import DEFAULT_MAX_FILE_SIZE, read_text
from planlint.core.messages import show
from planlint.core.yaml_values import scalar_text
from planlint.rules.base import ERROR, MISSING, PlanContext, Problem, lookup, rule
from planlint.rules.diff import same
from planlint.rules.grader_source import recorded_hash, resolve_source
from planlint.rules.run.files import plan_repository

# The decision a plan is approved with, in the order a reader meets it.
DECISION_KEYS = ("metric", "split", "target_improvement", "stopping", "alpha", "power", "discordance")
PREREGISTERED_STATUSES = ("approved", "running", "completed")


def _graders(plan: Any) -> dict[str, tuple[int, dict]]:
    graders = lookup(plan, ("graders",))
    out: dict[str, tuple[int, dict]] = {}
    if isinstance(graders, list):
        for index, grader in enumerate(graders):
            if isinstance(grader, dict) and isinstance(grader.get("id"), str):
                out.setdefault(grader["id"], (index, grader))
    return out


def _head_text(ctx: PlanContext, value: str) -> str | None:
    path, problem = resolve_source(value, plan_repository(ctx))
    if path is None or problem is not None:
        return None  # PL311 says why
    text, unreadable = read_text(path, getattr(ctx.config, "max_file_size", DEFAULT_MAX_FILE_SIZE))
    return text if unreadable is None else None


def _source(grader: dict) -> str | None:
    value = grader.get("source")
    return value if isinstance(value, str) and value.strip() else None


@rule("PL710", "grader-code-changed", ERROR, scope="diff")
def grader_code_changed(ctx: PlanContext) -> Iterator[Problem]:
    """A grader's source code changed in the pull request, but its `version` did not.

    The version is the promise that scoring did not change: PL706 asks for
    a new baseline when it changes, and PL306 for the baseline's versions
    to match it. Code edited under the same version breaks that promise
    silently: the baseline was scored by the old code, the trained model
    will be scored by the new one, and the plan says both are 1.4.2. A
    grader that records `source:` is compared: its file at the base revision
    and in the pull request (as text, up to `max_file_size`), and its
    recorded `sha256`. When either changed and `version` did not, give the
    grader a new version (then re-measure the baseline, PL706) or revert
    the code. At the head grader's `version`.

    Example (fails):
        # base
        graders:
          - {id: db-state, type: code, name: tau-retail-db-state, version: 1.4.2, source: graders/db_state.py}
          - {id: tone, type: llm_judge, name: polite-tone-judge, version: 3.0.1, judge_model: {name: gpt-5-mini, revision: "2026-08-07"}, calibration: {labels: 200, agreement: 0.87}}
        --- graders/db_state.py
        def score(state, expected):
            return 1.0 if state == expected else 0.0
        # head
        --- graders/db_state.py
        def score(state, expected):
            return 1.0 if state.items() >= expected.items() else 0.0
    Example (passes):
        # base
        graders:
          - {id: db-state, type: code, name: tau-retail-db-state, version: 1.4.2, source: graders/db_state.py}
          - {id: tone, type: llm_judge, name: polite-tone-judge, version: 3.0.1, judge_model: {name: gpt-5-mini, revision: "2026-08-07"}, calibration: {labels: 200, agreement: 0.87}}
        --- graders/db_state.py
        def score(state, expected):
            return 1.0 if state == expected else 0.0
        # head
        graders:
          - {id: db-state, type: code, name: tau-retail-db-state, version: 1.5.0, source: graders/db_state.py}
          - {id: tone, type: llm_judge, name: polite-tone-judge, version: 3.0.1, judge_model: {name: gpt-5-mini, revision: "2026-08-07"}, calibration: {labels: 200, agreement: 0.87}}
        baseline:
          model: {name: Qwen/Qwen3-8B, revision: 9f1c2a7b3d4e5f60718293a4b5c6d7e8f9012345}
          split: eval
          grader_versions: {db-state: 1.5.0, tone: 3.0.1}
          result: {metric: pass@1, value: 0.39, rollouts: 64}
        --- graders/db_state.py
        def score(state, expected):
            return 1.0 if state.items() >= expected.items() else 0.0
    """
    base = ctx.base
    if not isinstance(base, dict) or not ctx.data:
        return
    before = _graders(base)
    for ident, (index, grader) in _graders(ctx.data).items():
        if ident not in before:
            continue
        old = before[ident][1]
        version, old_version = grader.get("version", MISSING), old.get("version", MISSING)
        if version is MISSING or old_version is MISSING or not same(version, old_version):
            continue  # a new version is the honest change (PL706 asks for the baseline); none at all is PL301's
        changed = []
        old_hash, new_hash = recorded_hash(old.get("sha256")), recorded_hash(grader.get("sha256"))
        if old_hash is not None and new_hash is not None and old_hash != new_hash:
            changed.append(f"its recorded sha256 changed from {old_hash[:12]}… to {new_hash[:12]}…")
        head_path = _source(grader)
        base_path = _source(old) or head_path
        if head_path is not None and base_path is not None and ctx.base_text is not None:
            old_text = ctx.base_text(base_path)
            new_text = _head_text(ctx, head_path)
            if old_text is not None and new_text is not None and old_text != new_text:
                where = show(head_path) if base_path == head_path else f"{show(base_path)} -> {show(head_path)}"
                changed.append(f"its source {where} changed")
        if not changed:
            continue
        yield Problem(
            ("graders", index, "version"),
            f"grader {show(ident)} is still version {show(scalar_text(version))}, but {' and '.join(changed)} in this pull request: "
            f"the version promises its scoring did not change; give it a new version (and re-measure the baseline with it), or revert the code",
        )


def _describe(key: str, old: Any, new: Any) -> str:
    if old is MISSING:
        return f"decision.{key} was added ({show(scalar_text(new)) if not isinstance(new, (dict, list)) else show(new)})"
    if new is MISSING:
        return f"decision.{key} was removed"
    if isinstance(old, (dict, list)) or isinstance(new, (dict, list)):
        return f"decision.{key} changed"
    return f"decision.{key} changed from {show(scalar_text(old))} to {show(scalar_text(new))}"


@rule("PL711", "decision-changed-after-approval", ERROR, scope="diff")
def decision_changed_after_approval(ctx: PlanContext) -> Iterator[Problem]:
    """The decision of a plan that was approved, running or completed at the base revision changed.

    The decision rule is written before the run so that the result cannot
    be argued afterwards: moving the goalposts after seeing results (another
    metric, another split, a smaller target, a later stop) is how a run
    that failed becomes a success. `decision.metric`, `split`,
    `target_improvement`, `stopping`, and the `alpha`, `power` and
    `discordance` PL611 sizes the eval with, are frozen once the plan is
    approved. A changed decision needs the plan to go back to draft in the
    same pull request (`metadata.status: draft`, which the change card
    shows) and a new approval (PL707) before it runs again. One finding, at
    the first changed field, listing every change.

    Example (fails):
        # base
        metadata: {name: retail-refund-window, owner: "@support-ml", status: running}
        # head
        decision:
          metric: pass@1
          split: eval
          target_improvement: 0.04
          stopping: {max_steps: 400, patience_evals: 3}
    Example (passes):
        # base
        metadata: {name: retail-refund-window, owner: "@support-ml", status: running}
        # head
        metadata: {name: retail-refund-window, owner: "@support-ml", status: draft}
        decision:
          metric: pass@1
          split: eval
          target_improvement: 0.04
          stopping: {max_steps: 400, patience_evals: 3}
    """
    base = ctx.base
    if not isinstance(base, dict) or not ctx.data:
        return
    status = lookup(base, ("metadata", "status"))
    if not isinstance(status, str) or status not in PREREGISTERED_STATUSES or ctx.get("metadata", "status") == "draft":
        return
    old, new = lookup(base, ("decision",)), ctx.get("decision")
    if not isinstance(old, dict):
        return  # there was no decision to keep (PL601 said so at the base)
    advice = (f"the plan was {status} at the base revision, so its decision is pre-registered: revert the change, or set "
              f"metadata.status back to draft in this pull request and have the new decision approved (PL707)")
    if not isinstance(new, dict):
        yield Problem(("decision",), f"decision was removed; {advice}", missing=new is MISSING)
        return
    changes = []
    order = [key for key in new if key in DECISION_KEYS] + [key for key in DECISION_KEYS if key not in new]  # the head's order
    for key in order:
        before, after = old.get(key, MISSING), new.get(key, MISSING)
        if before is MISSING and after is MISSING:
            continue
        if before is not MISSING and after is not MISSING and same(before, after):
            continue
        changes.append((key, _describe(key, before, after), after is MISSING))
    if not changes:
        return
    key, _, removed = changes[0]
    listed = "; ".join(description for _, description, _ in changes)
    yield Problem(("decision", key), f"{listed}; {advice}", missing=removed)
