"""PL901: a submit config named in `run:` that cannot be found, read or submitted."""

from __future__ import annotations

from collections.abc import Iterator

from planlint.core.messages import show
from planlint.rules.base import ERROR, PlanContext, Problem, lookup, rule
from planlint.rules.run.files import experiment_table, inside, is_placeholder, run_files
from planlint.services.run_config import (
    check_format,
    entrypoint_problem,
    rollout_problem,
)


@rule("PL901", "run-config-invalid", ERROR)
def run_config_invalid(ctx: PlanContext) -> Iterator[Problem]:
    """A submit config named in `run:` is missing, outside the repository, not TOML, or one the SDK would reject.

    A plan is approved in a pull request, but on the platform the run starts
    from a TOML file (`osmosis train submit configs/training/NAME.toml`). The
    guide asks to "review the compatible base, method, runtime, prepared
    inputs, price and maximum spend before Start": a config that cannot be
    found, read, or submitted means the reviewed plan and the run are not
    tied together. planlint applies the osmosis-ai SDK's own checks (the
    `[experiment]` keys, unknown sections and keys, value types, the
    commit SHA, `[env]` names, `[secrets]`) and also requires the rollout's
    entrypoint, `rollouts/<rollout>/<entrypoint>`, to exist in the
    repository. Findings point at the offending key in the TOML file; a
    missing or unreachable file is reported at the plan's `run` value.

    Example (fails):
        run: {platform: osmosis, training_config: configs/training/retail-refund-window.toml}
        --- configs/training/retail-refund-window.toml
        [experiment]
        rollout = "retail-refund"
        entrypoint = "main.py"
        model_path = "Qwen/Qwen3-8B"
        dataset = "retail-refunds"
        commit_sha = "4c1f2a7b9e0d3c5a6b7f8e9d0c1b2a3f4e5d6c7b"
        [training]
        learning_rate = 1e-5
        --- rollouts/retail-refund/main.py
    Example (passes):
        run: {platform: osmosis, training_config: configs/training/retail-refund-window.toml}
        --- configs/training/retail-refund-window.toml
        [experiment]
        rollout = "retail-refund"
        entrypoint = "main.py"
        model_path = "Qwen/Qwen3-8B"
        dataset = "retail-refunds"
        commit_sha = "4c1f2a7b9e0d3c5a6b7f8e9d0c1b2a3f4e5d6c7b"
        [training]
        lr = 1e-5
        --- rollouts/retail-refund/main.py
    """
    files = run_files(ctx)
    yield from files.problems
    for document in files.documents.values():
        if document.data is None:
            continue
        for problem in check_format(document.data, document.kind):
            if not problem.at_key and is_placeholder(lookup(document.data, problem.route)):
                continue  # a blank still to fill in is PL008's (one problem, one finding)
            yield Problem(problem.route, problem.message, missing=problem.missing, at_key=problem.at_key, document=document)
        experiment = experiment_table(document)
        rollout, entrypoint = experiment.get("rollout"), experiment.get("entrypoint")
        if not isinstance(rollout, str) or is_placeholder(rollout):
            continue
        why = rollout_problem(rollout)
        if why is not None:
            yield Problem(("experiment", "rollout"), f"experiment.rollout {show(rollout)} {why}", document=document)
            continue
        if not isinstance(entrypoint, str) or is_placeholder(entrypoint):
            continue
        why = entrypoint_problem(entrypoint)
        if why is not None:
            yield Problem(("experiment", "entrypoint"), f"experiment.entrypoint {show(entrypoint)} {why}", document=document)
            continue
        assert files.root is not None
        target = files.root / "rollouts" / rollout / entrypoint
        shown = f"rollouts/{rollout}/{entrypoint}"
        if target.exists() and not inside(target, files.root / "rollouts" / rollout):
            yield Problem(("experiment", "entrypoint"), f"{show(shown)} leads out of rollouts/{show(rollout)[1:-1]}/ (a link): the platform runs code from the rollout's directory only", document=document)
        elif not target.is_file():
            yield Problem(("experiment", "entrypoint"), f"{show(shown)} does not exist in the repository: the run would start code that is not there (add it, or fix rollout/entrypoint)", document=document)
