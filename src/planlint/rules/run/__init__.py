"""The run family: what is reviewed is what runs. PL901-PL904, and PL708 in diff mode.

A plan may name the platform's submit configs, the TOML files a run is
actually started from (`osmosis train submit configs/training/NAME.toml`):

    run: {platform: osmosis, training_config: configs/training/NAME.toml, eval_config: configs/eval/NAME.toml}

Paths are relative to the repository root (the directory holding `.git`
above the plan; without one, the project root), and must stay inside it.
The rules read those files (planlint.services.run_config) and report *in them*: a
Problem with `document=` set is placed at the TOML key's line and column,
under the TOML file's path, and `# planlint: disable=...` comments in the
TOML file silence it.

One problem gives one finding: a value that is a placeholder (PL008, the
template's `"<your-model-path>"`) is not also compared with the plan (PL903)
or looked for on disk (PL901); a config the SDK would reject for its
branch and commit_sha together is PL901, not also PL902.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from planlint.core.loader import DEFAULT_MAX_FILE_SIZE
from planlint.core.messages import show
from planlint.core.paths import repository_root
from planlint.core.unfilled import placeholder
from planlint.core.positions import START
from planlint.rules.base import ERROR, MISSING, WARNING, PlanContext, Problem, RepoContext, lookup, rule
from planlint.services.run_config import (
    TRAINING,
    TomlDocument,
    check_format,
    entrypoint_problem,
    parse,
    read_document,
    rollout_problem,
    walk_strings,
)

_DOCUMENTS = "_run_documents"
CONFIG_KEYS = (("training_config", "training"), ("eval_config", "eval"))
ACTIVE_STATUSES = ("approved", "running")
TRAINING_DIR = ("configs", "training")


@dataclass
class RunFiles:
    """The run configs a plan names, read once per plan and shared by the run rules."""

    root: Path | None = None
    documents: dict[str, Any] = field(default_factory=dict)  # "training_config" / "eval_config" -> TomlDocument
    problems: list[Problem] = field(default_factory=list)  # PL901 at the plan's own run.* values


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
        document = read_document(path, display_path(path), kind, max_size)
        files.documents[key] = document
        if document.error is not None:
            files.problems.append(Problem((), f"{kind} config is not valid TOML: {document.error[0]}", document=document))
    return files


def _experiment(document: Any) -> dict:
    data = document.data if document.data is not None else {}
    experiment = data.get("experiment")
    return experiment if isinstance(experiment, dict) else {}


def _status(ctx: PlanContext) -> Any:
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
    draft = ctx.get("metadata", "status") == "draft"
    for document, route, text in string_values(ctx):
        why = placeholder(text)
        if why:
            where = ".".join(str(part) for part in route)
            advice = "fill it in before the plan leaves draft" if draft else "fill it in before the run is submitted"
            yield Problem(route, f"{where} = {show(text)} is a placeholder ({why}): {advice}", document=document, code="PL008", severity=WARNING if draft else None)


def _placeholder(text: Any) -> bool:
    """Values not filled in yet: PL008 reports them, the other run rules leave them alone."""
    return isinstance(text, str) and placeholder(text) is not None


# --------------------------------------------------------------------------- rules


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
    for key, document in files.documents.items():
        if document.data is None:
            continue
        for problem in check_format(document.data, document.kind):
            if not problem.at_key and _placeholder(lookup(document.data, problem.route)):
                continue  # a blank still to fill in is PL008's (one problem, one finding)
            yield Problem(problem.route, problem.message, missing=problem.missing, at_key=problem.at_key, document=document)
        experiment = _experiment(document)
        rollout, entrypoint = experiment.get("rollout"), experiment.get("entrypoint")
        if not isinstance(rollout, str) or _placeholder(rollout):
            continue
        why = rollout_problem(rollout)
        if why is not None:
            yield Problem(("experiment", "rollout"), f"experiment.rollout {show(rollout)} {why}", document=document)
            continue
        if not isinstance(entrypoint, str) or _placeholder(entrypoint):
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
    status = _status(ctx)
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


@rule("PL903", "run-config-drift", ERROR)
def run_config_drift(ctx: PlanContext) -> Iterator[Problem]:
    """The training config trains another model or reads another dataset than the plan says.

    The plan's `base_model.name` and `dataset.name` are what reviewers
    approved; the training config's `model_path` and `dataset` are what the
    platform uses. When they differ, the run that starts is not the
    experiment that was reviewed ("review the compatible base ... prepared
    inputs ... before Start"). Make them name the same model and dataset.
    Eval configs are not compared: their model and dataset legitimately
    differ (a judge or reference model, an evaluation set).

    Example (fails):
        run: {platform: osmosis, training_config: configs/training/retail-refund-window.toml}
        --- configs/training/retail-refund-window.toml
        [experiment]
        rollout = "retail-refund"
        entrypoint = "main.py"
        model_path = "Qwen/Qwen3-4B"
        dataset = "retail-refunds"
        commit_sha = "4c1f2a7b9e0d3c5a6b7f8e9d0c1b2a3f4e5d6c7b"
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
        --- rollouts/retail-refund/main.py
    """
    document = run_files(ctx).documents.get("training_config")
    if document is None or document.data is None:
        return
    experiment = _experiment(document)
    for key, plan_route, what in (("model_path", ("base_model", "name"), "model"), ("dataset", ("dataset", "name"), "dataset")):
        value, planned = experiment.get(key), ctx.get(*plan_route)
        if not isinstance(value, str) or not isinstance(planned, str) or _placeholder(value):
            continue
        if value != planned:
            yield Problem(
                ("experiment", key),
                f"the training config's {key} is {show(value)}, but the plan's {'.'.join(plan_route)} is {show(planned)}: "
                f"the run would use another {what} than the one reviewed; make them the same",
                document=document,
            )


def inputs(ctx: PlanContext) -> list[Path]:
    """Every file the run rules read or test for this plan: what a cached result also depends on (planlint.engine.parallel)."""
    run = ctx.get("run")
    if not isinstance(run, dict) or run.get("platform") != "osmosis":
        return []
    files = run_files(ctx)
    assert files.root is not None
    looked = [files.root / run[key] for key, _ in CONFIG_KEYS if isinstance(run.get(key), str) and run[key].strip()]
    for document in files.documents.values():
        experiment = _experiment(document)
        rollout, entrypoint = experiment.get("rollout"), experiment.get("entrypoint")
        if isinstance(rollout, str) and isinstance(entrypoint, str):
            looked.append(files.root / "rollouts" / rollout / entrypoint)
    return looked


def named_configs(ctx: PlanContext) -> tuple[str, list[str]]:
    """(the plan's repository root, the real paths of the training configs it names), for PL904."""
    root = plan_repository(ctx)
    return str(root), named_training_configs(ctx.data, root)


def named_training_configs(data: Any, root: Path) -> list[str]:
    """The training config plan `data` names: its path as written (absolute, links not
    resolved) and, when it is usable, its real path. PL904 counts a config as planned
    when either matches (a broken reference is PL901's to report, not also PL904's)."""
    run = lookup(data, ("run",))
    if not isinstance(run, dict) or not isinstance(run.get("training_config"), str) or not run["training_config"].strip():
        return []
    named = [os.path.normpath(os.path.join(os.path.abspath(root), run["training_config"]))]
    path, _ = resolve_config(run["training_config"], root)
    if path is not None:
        named.append(os.path.realpath(path))
    return named


def training_configs(root: str) -> list[Path]:
    """Every `*.toml` under the repository's configs/training/ (links not followed into directories)."""
    base = Path(root, *TRAINING_DIR)
    if not base.is_dir() or not inside(base, root):
        return []
    found = []
    for directory, dirnames, filenames in os.walk(base):
        dirnames.sort()
        found.extend(Path(directory, name) for name in sorted(filenames) if name.lower().endswith(".toml"))
    return found


@rule("PL904", "unplanned-run", WARNING, scope="repo")
def unplanned_run(ctx: RepoContext) -> Iterator[Problem]:
    """A training config under `configs/training/` that no plan names.

    Every paid run should have a reviewed plan: its decision rule, baseline
    and maximum spend are what make the run worth starting. A submit config
    that no plan's `run.training_config` names is a run nobody reviewed
    ("review ... price and maximum spend before Start"). Name it from the
    plan it belongs to, or delete it. Plans anywhere in the repository
    count, also those not linted in this run. Reported at the config's
    `[experiment]` table (line 1 without one).

    Example (fails):
        run: {platform: osmosis, training_config: configs/training/retail-refund-window.toml}
        --- configs/training/retail-refund-window.toml
        [experiment]
        rollout = "retail-refund"
        entrypoint = "main.py"
        model_path = "Qwen/Qwen3-8B"
        dataset = "retail-refunds"
        commit_sha = "4c1f2a7b9e0d3c5a6b7f8e9d0c1b2a3f4e5d6c7b"
        --- configs/training/retail-refund-window-bigger-lr.toml
        [experiment]
        rollout = "retail-refund"
        entrypoint = "main.py"
        model_path = "Qwen/Qwen3-8B"
        dataset = "retail-refunds"
        commit_sha = "4c1f2a7b9e0d3c5a6b7f8e9d0c1b2a3f4e5d6c7b"
        [training]
        lr = 1e-4
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
        --- rollouts/retail-refund/main.py
    """
    # The repositories of the linted plans; a config counts as planned when a plan
    # names it by the path as written or by its real path. Each problem is in
    # the config (`document`), at its [experiment] table (1:1 without one).
    named = {path for plan in ctx.plans for path in plan.run_configs}
    max_size = getattr(ctx.config, "max_file_size", DEFAULT_MAX_FILE_SIZE)

    def planned(path: Path) -> bool:
        return os.path.abspath(path) in named or os.path.realpath(path) in named

    for root in sorted({plan.repo_root for plan in ctx.plans if plan.repo_root}):
        candidates = [path for path in training_configs(root) if not planned(path)]
        if candidates and ctx.named_elsewhere is not None:  # plans this run does not lint count too
            named |= ctx.named_elsewhere(root, candidates)
        for path in candidates:
            if planned(path):
                continue
            display = display_path(path)
            if inside(path, root) and path.is_file():
                document = read_document(path, display, TRAINING, max_size)
            else:  # a link out of the repository: named, never read
                document = TomlDocument(display, TRAINING)
            span = document.positions.values.get(("experiment",)) or START
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            yield Problem(
                ("experiment",) if span != START else (),
                f"no plan names this training config: a run nobody reviewed. Name it from its plan "
                f"(run: {{platform: osmosis, training_config: {rel}}}), or delete it",
                span=span, document=document,
            )


# --------------------------------------------------------------------------- diff mode

# What a running plan's training config may not change: the code, the model, the data, the recipe.
_PINNED_EXPERIMENT = ("commit_sha", "branch", "model_path", "dataset")
_PINNED_SECTIONS = ("training", "sampling")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def config_changes(old: dict, new: dict) -> list[tuple[tuple, str]]:
    """[(route, description)] of what changed between two training configs, in the new file's order."""
    def section(data: dict, name: str) -> dict:
        value = data.get(name)
        return value if isinstance(value, dict) else {}

    changes: list[tuple[tuple, str]] = []
    routes = [("experiment", key) for key in _PINNED_EXPERIMENT]
    for name in _PINNED_SECTIONS:
        keys = list(section(new, name)) + [key for key in section(old, name) if key not in section(new, name)]
        routes += [(name, key) for key in keys]
    for route in routes:
        before, after = lookup(old, route), lookup(new, route)
        if before is MISSING and after is MISSING:
            continue
        where = ".".join(route)
        if before is MISSING:
            changes.append((route, f"{where} was added ({show(after)})"))
        elif after is MISSING:
            changes.append((route, f"{where} was removed (was {show(before)})"))
        elif not _same(before, after):
            changes.append((route, f"{where} changed from {show(before)} to {show(after)}"))
    return changes


@rule("PL708", "run-config-changed-while-running", ERROR, scope="diff")
def run_config_changed_while_running(ctx: PlanContext) -> Iterator[Problem]:
    """The plan was `running` at the base revision, and its training config changed.

    A running experiment is being measured against its plan: its baseline,
    decision rule and spend were approved for one run. Changing the code
    commit, the model, the dataset or a `[training]`/`[sampling]` value of
    its submit config mid-run means the next submission is another
    experiment under the old plan's name and approval. Revert the change,
    or stop this plan and write a new one (own name, baseline, budget) for
    the new run. The finding is in the training config, at the first
    changed key, and lists every change. `[checkpoints]`, `[env]`,
    `[secrets]` and `[advanced]` may change (operations, not the recipe).

    Example (fails):
        # base
        metadata: {name: retail-refund-window, owner: "@support-ml", status: running}
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
        # head
        --- configs/training/retail-refund-window.toml
        [experiment]
        rollout = "retail-refund"
        entrypoint = "main.py"
        model_path = "Qwen/Qwen3-8B"
        dataset = "retail-refunds"
        commit_sha = "4c1f2a7b9e0d3c5a6b7f8e9d0c1b2a3f4e5d6c7b"
        [training]
        lr = 3e-5
    Example (passes):
        # base
        metadata: {name: retail-refund-window, owner: "@support-ml", status: running}
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
        # head
        --- configs/training/retail-refund-window.toml
        [experiment]
        rollout = "retail-refund"
        entrypoint = "main.py"
        model_path = "Qwen/Qwen3-8B"
        dataset = "retail-refunds"
        commit_sha = "4c1f2a7b9e0d3c5a6b7f8e9d0c1b2a3f4e5d6c7b"
        [training]
        lr = 1e-5
        [checkpoints]
        checkpoint_save_freq = 10
    """
    base, read_base = ctx.base, ctx.base_text
    if not isinstance(base, dict) or not ctx.data or read_base is None:
        return
    if lookup(base, ("metadata", "status")) != "running" or lookup(base, ("run", "platform")) != "osmosis":
        return
    base_path = lookup(base, ("run", "training_config"))
    if not isinstance(base_path, str):
        return
    text = read_base(base_path)
    if text is None:
        return  # the base named no readable config: nothing was running from it
    old = parse(text, base_path, TRAINING)
    if old.data is None:
        return
    head_path = ctx.get("run", "training_config")
    document = run_files(ctx).documents.get("training_config")
    if document is None:
        if head_path is MISSING or ctx.get("run") is MISSING:
            yield Problem(
                ("run", "training_config") if isinstance(ctx.get("run"), dict) else ("run",),
                f"the plan was running at the base revision from {show(base_path)}, and no longer names a training config: "
                "restore it; a new run belongs in a new plan",
                missing=True,
            )
        return  # a named config that cannot be read is PL901's
    if document.data is None:
        return
    changes = config_changes(old.data, document.data)
    if not changes:
        return
    # Point at the change a reader of the head file meets first (a removed key: its table).
    keys = document.positions.keys
    changes.sort(key=lambda change: keys.get(change[0]) or keys.get(change[0][:1]) or (1 << 30,))
    route, _ = changes[0]
    listed = "; ".join(description for _, description in changes[:8]) + (f"; and {len(changes) - 8} more" if len(changes) > 8 else "")
    yield Problem(
        route,
        f"the plan was running at the base revision, and its training config changed: {listed}. "
        "Revert it, or stop this plan and start the new run under a new plan with its own name and baseline",
        missing=lookup(document.data, route) is MISSING,
        document=document,
    )
