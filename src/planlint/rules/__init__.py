"""The rule registry: every rule planlint has, in one place."""

from __future__ import annotations

from planlint.rules import approvals, baseline, budget, decision, diff, evaluation, file_level, grader_source, graders, leakage, pinning, placeholders, policy, power, preregistration, profiles, published, run, secrets, splits, verdict
from planlint.rules import recurrence
from planlint.core.config import Config
from planlint.rules.base import ERROR, MISSING, WARNING, PlanContext, Problem, Rule

_ALL: tuple[Rule, ...] = (
    # the file
    file_level.yaml_syntax,
    file_level.duplicate_key,
    file_level.schema,
    file_level.not_a_plan,
    file_level.duplicate_plan_name,
    file_level.unreadable_file,
    file_level.almost_a_plan,
    placeholders.placeholder_value,
    file_level.suppression_without_reason,
    file_level.unused_suppression,
    # pinning
    pinning.dataset_release_missing,
    pinning.dataset_release_floating,
    pinning.model_revision_unpinned,
    pinning.runtime_version_unpinned,
    pinning.split_path_floating,
    evaluation.evaluation_unpinned,
    profiles.profile_unpinned,
    published.release_not_published,
    published.grader_version_not_published,
    # splits
    splits.eval_split_missing,
    splits.splits_identical,
    splits.boundary_missing,
    splits.time_boundary_incomplete,
    splits.eval_not_frozen,
    splits.task_overlap,
    leakage.group_leakage,
    leakage.time_leakage,
    leakage.duplicate_across_splits,
    leakage.boundary_key_missing,
    leakage.time_value_unreadable,
    # graders
    graders.grader_version_missing,
    graders.grader_version_floating,
    graders.unknown_grader,
    graders.judge_model_unpinned,
    graders.judge_uncalibrated,
    graders.baseline_grader_mismatch,
    graders.duplicate_grader_id,
    graders.judge_calibration_weak,
    graders.grader_not_qualified,
    graders.reward_uncalibrated,
    grader_source.grader_source_mismatch,
    profiles.profile_scoring_not_native,
    # baseline
    baseline.baseline_missing,
    baseline.baseline_is_oracle,
    baseline.baseline_split_mismatch,
    baseline.baseline_unmeasured,
    baseline.baseline_metric_mismatch,
    baseline.baseline_model_differs,
    evaluation.evaluation_settings_differ,
    # budget
    budget.max_spend_missing,
    budget.max_spend_invalid,
    budget.currency_invalid,
    budget.estimate_over_cap,
    budget.spend_over_limit,
    budget.committed_spend_over_limit,
    budget.approval_missing,
    # recurring plans (recurrence:): schedule and caps, source, eval
    recurrence.recurrence_spend_unbounded,
    recurrence.recurrence_source_unreviewed,
    recurrence.recurrence_eval_moves,
    # decision and method
    decision.decision_metric_missing,
    decision.target_missing,
    decision.stopping_missing,
    decision.decision_on_train,
    decision.sft_unreviewed_targets,
    decision.grpo_without_reward,
    decision.split_undeclared,
    decision.reward_weights_invalid,
    decision.method_format_mismatch,
    decision.missing_inputs_open,
    # can the eval detect the target, and is the result what the numbers say
    power.eval_underpowered,
    power.target_out_of_range,
    power.rollouts_too_few,
    evaluation.seed_missing,
    verdict.verdict_inconsistent,
    # diff mode (--diff-base): the plan against its base revision
    diff.frozen_eval_changed,
    diff.release_changed_without_rebaseline,
    diff.spend_raised_without_approval,
    diff.active_plan_removed,
    diff.grader_changed_without_rebaseline,
    approvals.approval_not_verified,
    diff.running_data_changed,
    run.run_config_changed_while_running,
    preregistration.grader_code_changed,
    preregistration.decision_changed_after_approval,
    # diff mode: the pull request's change to planlint's configuration
    policy.policy_changed,
    # secrets
    secrets.secret_in_plan,
    # run: the platform's submit configs the plan names
    run.run_config_invalid,
    run.run_code_floating,
    run.run_config_drift,
    run.unplanned_run,
)

RULES: dict[str, Rule] = {r.code: r for r in sorted(_ALL, key=lambda r: r.code)}
BY_NAME: dict[str, Rule] = {r.name: r for r in _ALL}

# Rules run on every plan in lint_file: "data" rules read the split files when present,
# "files" rules other files of the repository the plan names (grader sources, run configs).
PLAN_RULES: tuple[Rule, ...] = tuple(r for r in RULES.values() if r.scope in ("plan", "data", "files"))
# The diff-mode halves of plan rules: the same code, judged against the base revision (PL902: the pinned
# commit is in the reviewed history). Not in RULES: their documentation is the plan rule's.
DIFF_HALVES: tuple[Rule, ...] = (run.pinned_commit_reviewed,)
DIFF_RULES: tuple[Rule, ...] = tuple(r for r in RULES.values() if r.scope == "diff") + DIFF_HALVES


def resolved(config: Config) -> Config:
    """`config` for one run: its select/ignore/severity resolved once against every rule
    (`Config.resolved`; the config lives below the registry, so the codes come from here)."""
    return config.resolved(RULES)


def rule_names() -> dict[str, str]:
    """Rule name -> code, for the config (which lives below the registry)."""
    return {r.name: code for code, r in RULES.items()}


def rule_code(written: str) -> str | None:
    """The code of the rule `written` names, by code (`PL205`, any case) or name (`eval-not-frozen`); None if no rule."""
    upper = written.upper()
    if upper in RULES:
        return upper
    rule = BY_NAME.get(written.lower())
    return rule.code if rule is not None else None

__all__ = ["RULES", "BY_NAME", "rule_code", "rule_names", "resolved", "PLAN_RULES", "DIFF_RULES", "Rule", "Problem", "PlanContext", "MISSING", "ERROR", "WARNING"]
