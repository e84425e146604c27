"""PL902 in diff mode: a run config the pull request adds or changes pins a commit of the reviewed history.

The platform fetches the pinned `commit_sha` and runs `rollouts/<rollout>/`
as that commit holds it; reviewers read the pull request. So for a config
the pull request adds or changes (its content differs from the one the base
revision's plan named, links followed on both sides), the pinned commit
must be an ancestor of the head, and the rollout's directory at that commit
must be the one the head shows. A config the pull request does not touch is
not judged again when later commits edit its rollout.

The rule never touches git: diff mode hands it `ctx.history`, which answers
`reviewed(sha)` and `rollout_differs(sha, rollout)` with None (fine) or why
not; a shallow clone where the commit is absent is a why, never a pass.
This is the diff-mode half of PL902, registered in `DIFF_RULES` under
PL902's code (its documentation is PL902's); the plain lint's half is
`rules/run/pins.py`.
"""

from __future__ import annotations

from collections.abc import Iterator

from planlint.rules.base import ERROR, MISSING, WARNING, PlanContext, Problem, lookup, rule
from planlint.rules.run.files import ACTIVE_STATUSES, CONFIG_KEYS, experiment_table, is_placeholder, plan_status, run_files
from planlint.services.run_config import COMMIT_SHA, rollout_problem


@rule("PL902", "run-code-floating", ERROR, scope="diff")
def pinned_commit_reviewed(ctx: PlanContext) -> Iterator[Problem]:
    """A run config the pull request adds or changes pins a commit outside the reviewed history.

    The diff-mode half of PL902 (see PL902 for the rule's documentation).
    """
    history = ctx.history
    if history is None or not ctx.data:
        return
    severity = ERROR if plan_status(ctx) in ACTIVE_STATUSES else WARNING
    for key, _ in CONFIG_KEYS:
        document = run_files(ctx).documents.get(key)
        if document is None or document.data is None:
            continue
        experiment = experiment_table(document)
        sha = experiment.get("commit_sha")
        if "branch" in experiment or not isinstance(sha, str) or is_placeholder(sha) or not COMMIT_SHA.match(sha):
            continue  # no commit_sha, a branch, or no SHA: PL902's plain half, PL901 or PL008 say so
        if not _added_or_changed(ctx, key, document.text):
            continue
        why = history.reviewed(sha)
        if why is not None:
            yield Problem(("experiment", "commit_sha"), f"commit_sha {sha[:12]} {why}", document=document, severity=severity)
            continue
        rollout = experiment.get("rollout")
        if not isinstance(rollout, str) or is_placeholder(rollout) or rollout_problem(rollout) is not None:
            continue  # PL901's
        why = history.rollout_differs(sha, rollout)
        if why is not None:
            yield Problem(
                ("experiment", "commit_sha"),
                f"rollouts/{rollout}/ at commit {sha[:12]} {why}: the platform runs the pinned commit's code, not the code "
                f"under review; pin the commit that holds the reviewed rollout",
                document=document, severity=severity,
            )


def _added_or_changed(ctx: PlanContext, key: str, text: str | None) -> bool:
    """Does the config the plan names under run.`key` differ from the one its base version named (by content)?"""
    if not isinstance(ctx.base, dict) or ctx.base_text is None:
        return True  # a new plan: every config it names is new to review
    base_path = lookup(ctx.base, ("run", key))
    if base_path is MISSING or not isinstance(base_path, str):
        return True
    return ctx.base_text(base_path) != text
