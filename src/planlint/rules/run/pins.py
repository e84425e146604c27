"""PL902: a submit config that does not pin the rollout code to a commit."""

from __future__ import annotations

from collections.abc import Iterator

from planlint.core.messages import show
from planlint.rules.base import ERROR, WARNING, PlanContext, Problem, rule
from planlint.rules.run.files import ACTIVE_STATUSES, plan_status, run_files


@rule("PL902", "run-code-floating", ERROR)
def run_code_floating(ctx: PlanContext) -> Iterator[Problem]:
    """A submit config does not pin the rollout code to a commit (`commit_sha` absent, or a `branch`).

    Without `commit_sha` the platform runs whatever is newest on the default
    branch when the run starts; with `branch` whatever that branch holds
    then. Either way the code that runs is not the code that was reviewed
    with the plan, and a rerun is not a rerun. Pin `commit_sha` to the
    commit that holds the reviewed rollout. Error while the plan is
    `approved` or `running` (the run is about to start or has started),
    warning before that.

    Example (fails):
        metadata: {name: retail-refund-window, owner: "@support-ml", status: approved}
        run: {platform: osmosis, training_config: configs/training/retail-refund-window.toml}
        --- configs/training/retail-refund-window.toml
        [experiment]
        rollout = "retail-refund"
        entrypoint = "main.py"
        model_path = "Qwen/Qwen3-8B"
        dataset = "retail-refunds"
        branch = "main"
        --- rollouts/retail-refund/main.py
    Example (passes):
        metadata: {name: retail-refund-window, owner: "@support-ml", status: approved}
        run: {platform: osmosis, training_config: configs/training/retail-refund-window.toml}
        --- configs/training/retail-refund-window.toml
        [experiment]
        rollout = "retail-refund"
        entrypoint = "main.py"
        model_path = "Qwen/Qwen3-8B"
        dataset = "retail-refunds"
        commit_sha = "4c1f2a7b9e0d3c5a6b7f8e9d0c1b2a3f4e5d6c7b"
        --- rollouts/retail-refund/main.py
    """
    status = plan_status(ctx)
    severity = ERROR if status in ACTIVE_STATUSES else WARNING
    for document in run_files(ctx).documents.values():
        data = document.data
        if data is None or not isinstance(data.get("experiment"), dict):
            continue
        experiment = data["experiment"]
        branch = experiment.get("branch")
        if "branch" in experiment and ("commit_sha" in experiment or not isinstance(branch, str) or not branch or any(c.isspace() for c in branch)):
            continue  # PL901: the SDK refuses both, or a branch that is no branch name
        what = "training" if document.kind == "training" else "evaluation"
        if "branch" in experiment:
            yield Problem(
                ("experiment", "branch"),
                f"the {what} run follows branch {show(experiment['branch'])}, so it runs whatever that branch holds when it starts: "
                "replace branch with commit_sha = the reviewed commit",
                document=document, severity=severity,
            )
        elif "commit_sha" not in experiment:
            yield Problem(
                ("experiment", "commit_sha"),
                f"no commit_sha: the {what} run takes the latest commit on the default branch when it starts, not the reviewed code; "
                "add commit_sha = the reviewed commit",
                missing=True, document=document, severity=severity,
            )
