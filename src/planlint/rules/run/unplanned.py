"""PL904: a training config under `configs/training/` (or a trainer's under `configs/<trainer>/`) that no plan names.

Also what the engine keeps of each plan for it (`named_configs`: the
training configs a plan names, as written and real), and how plans the run
does not lint are asked (`named_training_configs`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from planlint.core.loader import DEFAULT_MAX_FILE_SIZE, Limits
from planlint.core.positions import START
from planlint.rules.base import ERROR, WARNING, PlanContext, Problem, RepoContext, lookup, rule
from planlint.rules.run.files import (
    TRAINING_DIR,
    display_path,
    inside,
    plan_repository,
    resolve_config,
)
from planlint.rules.run.trainer_files import named_trainer_configs, trainer_configs, unplanned_trainer_config
from planlint.services.run_config import TRAINING, TomlDocument, read_document


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
        return named_trainer_configs(data, root)  # a trainer's config and launch script
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
    found: list[Path] = []
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
    plan it belongs to, or delete it. A config counts as planned through a
    plan linted in the same run, or a plan elsewhere in the repository that
    has no error of its own (in diff mode: one that was present at the base
    revision too), so a decoy "plan" cannot vouch for a run. In diff mode
    every training config the pull request adds or changes is judged, even
    when no plan changed, and one it adds that no plan names is an error (a
    new run with no plan is what the gate exists to stop); a warning
    otherwise. Reported at the config's `[experiment]` table (line 1 without one). Trainer configs
    and launch scripts under `configs/trl/`, `configs/verl/` and
    `configs/axolotl/` (`*.yaml`, `*.yml`, `*.sh`) count as runs too,
    planned when a plan's `run.config` or `run.script` names them; reported
    at line 1.

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
        --- rollouts/retail-refund/main.py
        --- configs/eval/
        --- data/
    """
    # The repositories of the linted plans; a config counts as planned when a plan
    # names it by the path as written or by its real path. Each problem is in
    # the config (`document`), at its [experiment] table (1:1 without one).
    named = {path for plan in ctx.plans for path in plan.run_configs}
    max_size = getattr(ctx.config, "max_file_size", DEFAULT_MAX_FILE_SIZE)

    def planned(path: Path) -> bool:
        return os.path.abspath(path) in named or os.path.realpath(path) in named

    def change(path: Path) -> str | None:
        return ctx.changed_configs.get(os.path.abspath(path)) or ctx.changed_configs.get(os.path.realpath(path))

    roots = {plan.repo_root for plan in ctx.plans if plan.repo_root}
    changed_root = ctx.changed_root if ctx.changed_configs else None
    changed_only = changed_root is not None and os.path.realpath(changed_root) not in {os.path.realpath(r) for r in roots}
    if changed_only and changed_root is not None:
        roots.add(changed_root)
    for root in sorted(roots):
        candidates = [path for path in training_configs(root) + trainer_configs(root) if not planned(path)]
        if changed_only and root == changed_root:  # no plan of this repository is linted: the pull request's configs only
            candidates = [path for path in candidates if change(path) is not None]
        if candidates and ctx.named_elsewhere is not None:  # plans this run does not lint count too
            named |= ctx.named_elsewhere(root, candidates)
        for path in candidates:
            if planned(path):
                continue
            if not path.name.lower().endswith(".toml"):  # under configs/<trainer>/
                yield unplanned_trainer_config(path, root, Limits(max_file_size=max_size), inside(path, root) and path.is_file(), added=change(path) == "added")
                continue
            display = display_path(path)
            if inside(path, root) and path.is_file():
                document = read_document(path, display, TRAINING, max_size)
            else:  # a link out of the repository: named, never read
                document = TomlDocument(display, TRAINING)
            span = document.positions.values.get(("experiment",)) or START
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            added = change(path) == "added"
            what = ("the pull request adds this training config and no plan names it: a new run nobody reviewed"
                    if added else "no plan names this training config: a run nobody reviewed")
            yield Problem(
                ("experiment",) if span != START else (),
                f"{what}. Name it from its plan (run: {{platform: osmosis, training_config: {rel}}}), or delete it",
                span=span, document=document, severity=ERROR if added else None,
            )
