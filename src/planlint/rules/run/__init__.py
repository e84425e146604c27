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

The modules, one job each: `files` (the configs a plan names, read once per
plan, and what the rules share), `validity` (PL901), `pins` (PL902),
`drift` (PL903), `unplanned` (PL904), `running` (PL708), `reviewed` (PL902 in
diff mode: the pinned commit is in the reviewed history). This package
re-exports what the registry and the engine use.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from planlint.rules.base import PlanContext, Problem
from planlint.rules.run import files as _files
from planlint.rules.run import trainer_files as _trainer_files
from planlint.rules.run.drift import run_config_drift
from planlint.rules.run.files import (
    ACTIVE_STATUSES,
    CONFIG_KEYS,
    TRAINING_DIR,
    RunFiles,
    display_path,
    inside,
    plan_repository,
    resolve_config,
    run_files,
)
from planlint.rules.run.pins import run_code_floating
from planlint.rules.run.reviewed import pinned_commit_reviewed
from planlint.rules.run.running import config_changes, run_config_changed_while_running
from planlint.rules.run.unplanned import (
    named_configs,
    named_training_configs,
    training_configs,
    unplanned_run,
)
from planlint.rules.run.trainer_files import TRAINER_CONFIGS, comment_free_spans, trainer_code
from planlint.rules.run.validity import run_config_invalid


def string_values(ctx: PlanContext) -> Iterator[tuple[Any, tuple, str]]:
    """(document, route, text) for every string of the run configs the plan names (PL801, PL008):
    the Osmosis submit configs, or a trainer's config and its launch script's overrides."""
    yield from _files.string_values(ctx)
    yield from _trainer_files.string_values(ctx)


def placeholder_problems(ctx: PlanContext) -> Iterator[Problem]:
    """PL008 in the run configs the plan names (for the PL008 rule to yield beside the plan's own)."""
    yield from _files.placeholder_problems(ctx)
    trainer_values = (value for value in _trainer_files.string_values(ctx) if not _trainer_files.special_token(value[2]))
    yield from _files.placeholder_problems_in(ctx, trainer_values)


def inputs(ctx: PlanContext) -> list[Path] | None:
    """Every file the run rules read or test for this plan (what a cached result also depends on);
    None when the result must not be cached (rules.run.files.inputs says when)."""
    osmosis = _files.inputs(ctx)
    return None if osmosis is None else osmosis + _trainer_files.inputs(ctx)

__all__ = [
    "ACTIVE_STATUSES",
    "CONFIG_KEYS",
    "TRAINING_DIR",
    "RunFiles",
    "config_changes",
    "display_path",
    "inputs",
    "inside",
    "named_configs",
    "named_training_configs",
    "pinned_commit_reviewed",
    "placeholder_problems",
    "plan_repository",
    "resolve_config",
    "run_code_floating",
    "run_config_changed_while_running",
    "run_config_drift",
    "run_config_invalid",
    "run_files",
    "string_values",
    "TRAINER_CONFIGS",
    "comment_free_spans",
    "trainer_code",
    "training_configs",
    "unplanned_run",
]
