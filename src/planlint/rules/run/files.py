"""The run configs a plan names, found and read once per plan, and what the run rules share.

Paths in `run:` are relative to the repository root (the directory holding
`.git` above the plan; without one, the project root) and must stay inside
it. Each named file is read once (planlint.services.run_config) and kept in
the plan's memo for every rule of the family, and for PL801 and PL008,
which look at the configs' string values too.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planlint.core.messages import show
from planlint.core.paths import repository_root
from planlint.core.unfilled import placeholder
from planlint.rules.base import WARNING, PlanContext, Problem
from planlint.services.benchmark_config import BENCHMARK
from planlint.services.git_commits import FOUND, CommitLookup, resolve_commit
from planlint.services.rollout_code import imported_files
from planlint.services.run_config import COMMIT_SHA, EVAL, TRAINING, location_problem, missing_workspace_dirs, read_document, walk_strings

_DOCUMENTS = "_run_documents"
# The keys of `run:` that name a config, and what each is to the SDK.
CONFIG_KEYS = (("training_config", TRAINING), ("eval_config", EVAL), ("benchmark_config", BENCHMARK))
ACTIVE_STATUSES = ("approved", "running")
TRAINING_DIR = ("configs", "training")


@dataclass
class RunFiles:
    """The run configs a plan names, read once per plan and shared by the run rules."""

    root: Path | None = None
    documents: dict[str, Any] = field(default_factory=dict)  # "training_config" / "eval_config" / "benchmark_config" -> TomlDocument
    problems: list[Problem] = field(default_factory=list)  # PL901 at the plan's own run.* values
    missing_dirs: list[str] = field(default_factory=list)  # the workspace directories the submit path requires and the repository lacks
    commits: dict[str, CommitLookup] = field(default_factory=dict)  # commit_sha -> what the repository says of it


def plan_repository(ctx: PlanContext) -> Path:
    """The git top level above the plan file, else the project root (config file's directory or cwd)."""
    plan_file = ctx.file
    if plan_file is not None:
        top = repository_root(os.path.dirname(os.path.abspath(plan_file)))
        if os.path.exists(os.path.join(top, ".git")):
            return Path(top)
    root = getattr(ctx.config, "root", None)
    return Path(root) if root is not None else Path.cwd()


def inside(path: Path | str, root: Path | str) -> bool:
    """Is `path`, links resolved, inside `root` (links resolved)?"""
    real, base = os.path.realpath(path), os.path.realpath(root)
    try:
        return os.path.commonpath([real, base]) == base
    except ValueError:  # another drive
        return False


def display_path(path: Path) -> str:
    """How findings name a file: relative to the current directory, `/` separators."""
    try:
        shown = os.path.relpath(os.path.abspath(path), os.getcwd())
    except ValueError:
        shown = os.path.abspath(path)
    return shown.replace(os.sep, "/")


def resolve_config(value: str, root: Path) -> tuple[Path | None, str | None]:
    """(the file, None) for a run config path, or (None, why it cannot be used)."""
    if not value.strip():
        return None, "is empty"
    if os.path.isabs(value) or value.startswith(("/", "\\")) or (len(value) > 1 and value[1] == ":"):
        return None, "is an absolute path; name the file relative to the repository root"
    path = root / value
    if not inside(path, root):
        return None, "is outside the repository (or a link out of it); planlint reads run configs only from the checkout"
    if not path.exists():
        return None, "does not exist in the repository"
    if not path.is_file():
        return None, "is not a file"
    return path, None


def run_files(ctx: PlanContext) -> RunFiles:
    """The plan's run configs, read and parsed once (shared by PL801, PL008, PL901-PL903, PL708)."""
    cached = ctx.memo.get(_DOCUMENTS)
    if cached is not None:
        return cached
    files = RunFiles()
    ctx.memo[_DOCUMENTS] = files
    run = ctx.get("run")
    if not isinstance(run, dict) or run.get("platform") != "osmosis":
        return files
    files.root = plan_repository(ctx)
    max_size = getattr(ctx.config, "max_file_size", 1024 * 1024)
    for key, kind in CONFIG_KEYS:
        value = run.get(key)
        if not isinstance(value, str):
            continue  # absent, or a schema error (PL003)
        path, why = resolve_config(value, files.root)
        if path is None:
            files.problems.append(Problem(("run", key), f"run.{key} {show(value)} {why}"))
            continue
        if kind != BENCHMARK:  # a benchmark config may live anywhere; a submit config only in its directory
            why = location_problem(str(path), str(files.root), kind)
            if why is not None:
                files.problems.append(Problem(("run", key), f"run.{key} {show(value)} {why}"))
        document = read_document(path, display_path(path), kind, max_size)
        files.documents[key] = document
        if document.error is not None:
            files.problems.append(Problem((), f"{kind} config is not valid TOML: {document.error[0]}", document=document))
    if any(isinstance(run.get(key), str) for key, kind in CONFIG_KEYS if kind != BENCHMARK):
        files.missing_dirs = missing_workspace_dirs(str(files.root))
        if files.missing_dirs:
            files.problems.append(Problem(
                ("run",),
                f"the repository lacks {', '.join(files.missing_dirs)} at its root: `osmosis train submit` and `osmosis eval submit` "
                "refuse a workspace without rollouts/, configs/training/, configs/eval/ and data/ (`osmosis doctor --fix` restores them)",
                at_key=True,
            ))
    return files


def experiment_table(document: Any) -> dict:
    """The config's [experiment] table, or {} (absent, not a table, or the file did not parse)."""
    data = document.data if document.data is not None else {}
    experiment = data.get("experiment")
    return experiment if isinstance(experiment, dict) else {}


def pinned_commit(ctx: PlanContext, sha: str) -> CommitLookup:
    """What the plan's repository says of the commit `sha` (a 7-40 hex commit_sha), asked once per plan."""
    files = run_files(ctx)
    found = files.commits.get(sha)
    if found is None:
        assert files.root is not None
        found = files.commits[sha] = resolve_commit(files.root, sha)
    return found


def rollout_files(root: Path, document: Any) -> list[Path]:
    """The rollout files a submit config's preflight reads, where its names are usable:
    the pyproject.toml, then each file the SDK's loader executes (services.rollout_code)."""
    experiment = experiment_table(document)
    rollout, entrypoint = experiment.get("rollout"), experiment.get("entrypoint")
    if document.kind == BENCHMARK or not isinstance(rollout, str) or not isinstance(entrypoint, str) or not rollout or not entrypoint:
        return []
    directory = root / "rollouts" / rollout
    return [directory / "pyproject.toml", *imported_files(directory, entrypoint)]


def plan_status(ctx: PlanContext) -> Any:
    """The plan's metadata.status (MISSING when absent)."""
    return ctx.get("metadata", "status")


# --------------------------------------------------------------------------- shared with PL801 and PL008


def string_values(ctx: PlanContext) -> Iterator[tuple[Any, tuple, str]]:
    """(document, route, text) for every string value of the plan's run configs (for PL801 and PL008)."""
    for document in run_files(ctx).documents.values():
        if document.data is not None:
            for route, text in walk_strings(document.data):
                yield document, route, text


def placeholder_problems(ctx: PlanContext) -> Iterator[Problem]:
    """PL008 in the run configs the plan names (for the PL008 rule to yield beside the plan's own):
    an error, a warning while the plan is a draft, as in the plan."""
    yield from placeholder_problems_in(ctx, string_values(ctx))


def placeholder_problems_in(ctx: PlanContext, values: Iterator[tuple[Any, tuple, str]]) -> Iterator[Problem]:
    """PL008 for each placeholder among `values` ((document, route, text), as string_values yields them)."""
    draft = ctx.get("metadata", "status") == "draft"
    for document, route, text in values:
        why = placeholder(text)
        if why:
            where = ".".join(str(part) for part in route)
            advice = "fill it in before the plan leaves draft" if draft else "fill it in before the run is submitted"
            yield Problem(route, f"{where} = {show(text)} is a placeholder ({why}): {advice}", document=document, code="PL008", severity=WARNING if draft else None)


def is_placeholder(text: Any) -> bool:
    """Values not filled in yet: PL008 reports them, the other run rules leave them alone."""
    return isinstance(text, str) and placeholder(text) is not None


def inputs(ctx: PlanContext) -> list[Path] | None:
    """Every file the run rules read or test for this plan: what a cached result also depends on
    (planlint.engine.parallel). None when the result depends on more than files can show, and
    so must not be cached: a pinned commit the repository did not confirm (a fetch may bring
    it), a workspace directory that is missing (directories have no file state)."""
    run = ctx.get("run")
    if not isinstance(run, dict) or run.get("platform") != "osmosis":
        return []
    files = run_files(ctx)
    assert files.root is not None
    if files.missing_dirs:
        return None
    looked = [files.root / run[key] for key, _ in CONFIG_KEYS if isinstance(run.get(key), str) and run[key].strip()]
    for document in files.documents.values():
        looked.extend(rollout_files(files.root, document))
        sha = experiment_table(document).get("commit_sha") if document.kind != BENCHMARK else None
        if isinstance(sha, str) and COMMIT_SHA.match(sha) and pinned_commit(ctx, sha).state != FOUND:
            return None
    return looked
