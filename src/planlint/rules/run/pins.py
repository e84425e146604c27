"""PL902: a submit config that does not pin the rollout code to a commit."""

from __future__ import annotations

from collections.abc import Iterator

from typing import Any

from planlint.core.messages import show
from planlint.rules.base import ERROR, WARNING, Note, PlanContext, Problem, rule
from planlint.rules.run import trainer_checks
from planlint.rules.run.files import ACTIVE_STATUSES, is_placeholder, pinned_commit, plan_status, run_files
from planlint.services.benchmark_config import BENCHMARK
from planlint.services.git_commits import ABSENT, AMBIGUOUS, FOUND, NOT_A_COMMIT, CommitLookup
from planlint.services.run_config import COMMIT_SHA

FULL_SHA = 40


@rule("PL902", "run-code-floating", ERROR)
def run_code_floating(ctx: PlanContext) -> Iterator[Problem | Note]:
    """A submit config does not pin the rollout code to one commit of the repository, in full.

    Without `commit_sha` the platform runs whatever is newest on the default
    branch when the run starts; with `branch` whatever that branch holds
    then. Either way the code that runs is not the code that was reviewed
    with the plan, and a rerun is not a rerun. Pin `commit_sha` to the
    commit that holds the reviewed rollout: it must name exactly one commit
    of the local repository (git's object database, asked without network),
    written as the full 40-character hash (7 characters name one commit
    today, several as history grows). A hash no commit has, or that names
    several objects or no commit, is reported; where planlint cannot tell
    (no git checkout, no git, a shallow clone) a note says so. In diff
    mode, a config the pull request adds or changes must pin a commit of
    the reviewed history (the head or an ancestor of it, not a side
    branch), whose `rollouts/<rollout>/` is the one the head shows; there a
    shallow clone without the commit is a finding (fetch the history:
    `fetch-depth: 0`), never a pass. Error while the plan is `approved` or
    `running` (the run is about to start or has started), warning before that. A trainer's config must pin
    the model's revision, each dataset's revision or data file's version,
    and keep its reward code in the repository; what a trainer has no key
    to pin (TRL: a Hub dataset; verl: the model) is always a warning that
    says how to pin it another way.

    Example (fails):
        metadata: {name: retail-refund-window, owner: "@support-ml", status: approved}
        dataset: {name: retail-refunds, release: "2026.11.03", format: task_metadata, targets: {reviewed: true}, platform: {train: retail-refunds}}
        run: {platform: osmosis, training_config: configs/training/retail-refund-window.toml}
        --- configs/training/retail-refund-window.toml
        [experiment]
        rollout = "retail-refund"
        entrypoint = "main.py"
        model_path = "Qwen/Qwen3-8B"
        dataset = "retail-refunds"
        branch = "main"
        --- rollouts/retail-refund/main.py
        --- configs/eval/
        --- data/
    Example (passes):
        metadata: {name: retail-refund-window, owner: "@support-ml", status: approved}
        dataset: {name: retail-refunds, release: "2026.11.03", format: task_metadata, targets: {reviewed: true}, platform: {train: retail-refunds}}
        run: {platform: osmosis, training_config: configs/training/retail-refund-window.toml}
        --- configs/training/retail-refund-window.toml
        [experiment]
        rollout = "retail-refund"
        entrypoint = "main.py"
        model_path = "Qwen/Qwen3-8B"
        dataset = "retail-refunds"
        commit_sha = "4c1f2a7b9e0d3c5a6b7f8e9d0c1b2a3f4e5d6c7b"
        --- rollouts/retail-refund/main.py
        --- configs/eval/
        --- data/
    """
    yield from trainer_checks.floating(ctx)  # a trainer's config (TRL, verl, axolotl)
    status = plan_status(ctx)
    severity = ERROR if status in ACTIVE_STATUSES else WARNING
    for document in run_files(ctx).documents.values():
        data = document.data
        if data is None or document.kind == BENCHMARK or not isinstance(data.get("experiment"), dict):
            continue  # a benchmark runs no code of the repository
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
        else:
            yield from _pinned(ctx, document, experiment["commit_sha"], what, severity)


def _pinned(ctx: PlanContext, document: Any, sha: Any, what: str, severity: str) -> Iterator[Problem | Note]:
    """The pinned commit must be exactly one commit of the local repository, written in full."""
    if not isinstance(sha, str) or not COMMIT_SHA.match(sha) or is_placeholder(sha):
        return  # not a commit hash at all: PL901's (or PL008's)
    found = pinned_commit(ctx, sha)
    route = ("experiment", "commit_sha")
    if found.state == FOUND and len(sha) == FULL_SHA:
        return
    if found.state == FOUND:
        yield Problem(
            route,
            f"commit_sha {show(sha)} is abbreviated: it names commit {found.full} today, but a longer history can make "
            f"{len(sha)} characters name several objects; write the full 40-character hash",
            document=document, severity=severity,
        )
    elif found.state in (ABSENT, AMBIGUOUS, NOT_A_COMMIT):
        yield Problem(route, _not_one_commit(sha, found, what), document=document, severity=severity)
    else:
        yield Note(f"PL902: cannot tell whether commit_sha {show(sha)} of {document.path} is a commit of this repository: {found.why}")


def _not_one_commit(sha: str, found: CommitLookup, what: str) -> str:
    run = f"the {what} run"
    if found.state == ABSENT:
        return (f"no commit of this repository is {show(sha)}: {run} would fetch code nobody reviewed here, or fail; "
                "pin the reviewed commit (git rev-parse HEAD), in full")
    if found.state == AMBIGUOUS:
        return f"commit_sha {show(sha)} names several objects of this repository: write the full 40-character hash of the reviewed commit"
    return f"commit_sha {show(sha)} is a {found.full} of this repository, not a commit: pin the reviewed commit's full hash"
