"""PL901: a submit config named in `run:` that cannot be found, read or submitted."""

from __future__ import annotations

from collections.abc import Iterator

from pathlib import Path
from typing import Any

from planlint.core.loader import DEFAULT_MAX_FILE_SIZE, read_text
from planlint.core.messages import show
from planlint.rules.base import ERROR, WARNING, Note, PlanContext, Problem, lookup, rule
from planlint.rules.run import trainer_checks
from planlint.rules.run.files import display_path, experiment_table, inside, is_placeholder, run_files
from planlint.services.benchmark_config import BENCHMARK, check_benchmark
from planlint.services.rollout_code import SourceDocument, compile_problem, imported_files, pyproject_problems
from planlint.services.run_config import check_format, entrypoint_problem, read_document, rollout_problem


@rule("PL901", "run-config-invalid", ERROR)
def run_config_invalid(ctx: PlanContext) -> Iterator[Problem | Note]:
    """A run config named in `run:` is missing, misplaced, not TOML, or one the SDK would refuse.

    A plan is approved in a pull request, but on the platform the run starts
    from a TOML file (`osmosis train submit configs/training/NAME.toml`). The
    guide asks to "review the compatible base, method, runtime, prepared
    inputs, price and maximum spend before Start": a config that cannot be
    found, read, or submitted means the reviewed plan and the run are not
    tied together. planlint makes the osmosis-ai SDK's own offline checks
    (0.3.8's submit preflight, case by case): where a config may live
    (`configs/training/` or `configs/eval/`, a `.toml` file, links
    resolved); the workspace's required directories (`rollouts/`,
    `configs/training/`, `configs/eval/`, `data/`); the loader's keys,
    sections and types, the commit SHA's shape, `[env]` names and
    `[secrets]`; the `[evaluation]` values `osmosis eval run` types; a
    benchmark config's format; and the rollout: its name,
    `rollouts/<rollout>/<entrypoint>` a file in the rollout's directory,
    and every file the SDK's import of it runs (the entrypoint, the
    packages' `__init__.py`) valid Python. planlint never imports or runs
    that code: it compiles it, so a syntax error is found at its line and
    column, while what only an import shows is out of reach. The rollout's
    `pyproject.toml` dependencies that are not PEP 508 requirements are a
    warning (the preflight skips them, the platform's resolver refuses
    them). A trainer's config (`run: {trainer: trl|verl|axolotl, config,
    script}`) is held to its trainer's own schema at a pinned release: a
    key TRL, verl or axolotl does not have (each says no, or drops it
    without a word), a required key missing, a reward it cannot load, in
    the YAML or in the launch script's overrides (docs/plan-format.md,
    "Trainer configs"). Findings point at the offending key in the TOML file (or the
    line of the Python file); a missing, misplaced or unreachable file and
    the workspace's directories are reported at the plan's `run`.

    Example (fails):
        dataset: {name: retail-refunds, release: "2026.11.03", format: task_metadata, targets: {reviewed: true}, platform: {train: retail-refunds}}
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
        --- configs/eval/
        --- data/
    Example (passes):
        dataset: {name: retail-refunds, release: "2026.11.03", format: task_metadata, targets: {reviewed: true}, platform: {train: retail-refunds}}
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
        --- configs/eval/
        --- data/
    """
    yield from trainer_checks.invalid(ctx)  # a trainer's config (TRL, verl, axolotl)
    files = run_files(ctx)
    yield from files.problems
    compiled: set[str] = set()  # a rollout file two configs share is checked once
    for document in files.documents.values():
        if document.data is None:
            continue
        check = check_benchmark(document.data) if document.kind == BENCHMARK else check_format(document.data, document.kind)
        for problem in check:
            if not problem.at_key and is_placeholder(lookup(document.data, problem.route)):
                continue  # a blank still to fill in is PL008's (one problem, one finding)
            yield Problem(problem.route, problem.message, missing=problem.missing, at_key=problem.at_key, document=document)
        if document.kind != BENCHMARK:
            assert files.root is not None
            yield from _rollout(ctx, files.root, document, compiled)


def _rollout(ctx: PlanContext, root: Path, document: Any, compiled: set[str]) -> Iterator[Problem | Note]:
    """The rollout a submit config names, as the SDK's preflight meets it: the names, the files
    on disk, the pyproject.toml it reads, and each file its import executes, compiled."""
    experiment = experiment_table(document)
    rollout, entrypoint = experiment.get("rollout"), experiment.get("entrypoint")
    if not isinstance(rollout, str) or is_placeholder(rollout):
        return
    why = rollout_problem(rollout)
    if why is None and not inside(root / "rollouts" / rollout, root / "rollouts"):
        why = "leads out of rollouts/ (a link): the SDK takes a rollout only from the workspace's rollouts/ directory"
    if why is not None:
        yield Problem(("experiment", "rollout"), f"experiment.rollout {show(rollout)} {why}", document=document)
        return
    if not isinstance(entrypoint, str) or is_placeholder(entrypoint):
        return
    why = entrypoint_problem(entrypoint)
    if why is not None:
        yield Problem(("experiment", "entrypoint"), f"experiment.entrypoint {show(entrypoint)} {why}", document=document)
        return
    directory = root / "rollouts" / rollout
    target = directory / entrypoint
    shown = f"rollouts/{rollout}/{entrypoint}"
    if target.exists() and not inside(target, directory):
        yield Problem(("experiment", "entrypoint"), f"{show(shown)} leads out of rollouts/{show(rollout)[1:-1]}/ (a link): the platform runs code from the rollout's directory only", document=document)
        return
    if target.is_dir():
        yield Problem(("experiment", "entrypoint"), f"{show(shown)} is a directory, not a Python file: the SDK's preflight stops with \"Entrypoint file not found\" (name the file, e.g. main.py)", document=document)
        return
    if not target.is_file():
        yield Problem(("experiment", "entrypoint"), f"{show(shown)} does not exist in the repository: the run would start code that is not there (add it, or fix rollout/entrypoint)", document=document)
        return
    max_size = getattr(ctx.config, "max_file_size", DEFAULT_MAX_FILE_SIZE)
    pyproject = directory / "pyproject.toml"
    if pyproject.is_file() and inside(pyproject, directory) and str(pyproject) not in compiled:
        compiled.add(str(pyproject))
        yield from _pyproject(pyproject, max_size)
    for path in imported_files(directory, entrypoint):
        if str(path) in compiled or not path.is_file() or not inside(path, directory):
            continue
        compiled.add(str(path))
        result = compile_problem(path, max_size)
        source = SourceDocument(display_path(path), text=_text(path, max_size))
        if result.message is not None:
            role = "the entrypoint" if path == target else "a package file the import of the entrypoint runs first"
            yield Problem(
                (), f"{display_path(path)} is not valid Python ({result.message}): it is {role}, and the SDK's preflight, "
                "which imports it, stops here; so would the platform", span=result.span, document=source,
            )
        elif result.unknown is not None:
            yield Note(f"PL901: cannot tell whether {display_path(path)} is valid Python: {result.unknown}")


def _pyproject(path: Path, max_size: int) -> Iterator[Problem]:
    """PL901 warnings in the rollout's pyproject.toml: what the SDK's preflight reads past
    and the platform's resolver refuses."""
    document = read_document(path, display_path(path), "pyproject", max_size)
    advice = "the SDK's preflight reads past it, but the platform resolves the rollout's environment from this file"
    if document.error is not None:
        yield Problem((), f"the rollout's pyproject.toml is not valid TOML ({document.error[0]}): {advice}", document=document, severity=WARNING)
        return
    for problem in pyproject_problems(document.data or {}):
        yield Problem(problem.route, f"{problem.message}: {advice}", document=document, severity=WARNING)


def _text(path: Path, max_size: int) -> str | None:
    text, _ = read_text(path, max_size)
    return text
