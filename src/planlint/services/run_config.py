"""Osmosis submit configs: the TOML files a plan's `run:` names.

A run on the platform starts from `osmosis train submit configs/training/NAME.toml`
(evaluations: `osmosis eval submit configs/eval/NAME.toml`), not from the plan.
Such a file is read by services.toml_file (the data, and where each key was
written), so that the run rules (rules/run/) can report findings *in the
TOML file*; this module re-exports what they use of it.

`check_format()` is the SDK's own validation (osmosis-ai 0.3.8,
`platform/cli/shared_config.py`, `training_config.py`, `eval_config.py`)
restated as problems at routes: unknown sections and keys, types, the
commit SHA and branch shapes, `[env]` names and values, `[secrets]`, and for
eval configs the `[evaluation]` values `osmosis eval run` types
(`eval_run.py`: integers, finite numbers, `n` > 0). `location_problem()` and
`missing_workspace_dirs()` are the submit path's own rules for where a config
may live and what the workspace must hold (`workspace_directory_contract.py`,
`templates/catalog.py`).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Any, Iterator

from planlint.core.messages import show
from planlint.core.positions import Route
from planlint.services.toml_file import TomlDocument, parse, read_document, scan, tomllib, walk_strings

TRAINING = "training"
EVAL = "eval"

# The SDK's patterns (shared_config.py).
ENV_VAR_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")
SECRET_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
COMMIT_SHA = re.compile(r"^[0-9a-fA-F]{7,40}$")
RESERVED_ENV_PREFIX = "_OSMOSIS_"

EXPERIMENT_REQUIRED = ("rollout", "entrypoint", "model_path", "dataset")
EXPERIMENT_KEYS = EXPERIMENT_REQUIRED + ("branch", "commit_sha")
# Sections whose keys the SDK knows (unknown keys are rejected), by config kind.
SECTION_KEYS: dict[str, dict[str, tuple[str, ...]]] = {
    TRAINING: {
        "training": ("lr", "total_epochs", "n_samples_per_prompt", "rollout_batch_size", "max_prompt_length",
                     "max_response_length", "agent_workflow_timeout_s", "grader_timeout_s"),
        "sampling": ("rollout_temperature", "rollout_top_p"),
        "checkpoints": ("eval_interval", "checkpoint_save_freq"),
    },
    EVAL: {
        "evaluation": ("limit", "n", "batch_size", "pass_threshold", "agent_workflow_timeout_s", "grader_timeout_s"),
    },
}
COMMON_SECTIONS = ("experiment", "advanced", "env", "secrets")
# Where `osmosis train submit` / `osmosis eval submit` take a config from (CloudSubmitSpec.config_dir).
CONFIG_DIRS = {TRAINING: "configs/training", EVAL: "configs/eval"}
COMMANDS = {TRAINING: "osmosis train submit", EVAL: "osmosis eval submit"}
# The directories a workspace must have at its root (templates/catalog.py, REQUIRED_WORKSPACE_DIRS).
WORKSPACE_DIRS = ("rollouts", "configs/training", "configs/eval", "data")
# `osmosis eval run` (eval_run.py): each [evaluation] value it reads, as it types it.
# "integer": an int, not a bool; "number": an int or float, finite, not a bool.
EVALUATION_TYPES = (
    ("pass_threshold", "number"), ("n", "integer"), ("batch_size", "integer"),
    ("agent_workflow_timeout_s", "number"), ("grader_timeout_s", "number"), ("limit", "integer"),
)


@dataclass(frozen=True)
class FormatProblem:
    route: Route
    message: str
    missing: bool = False
    at_key: bool = False


def type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return "a date or time"


def check_format(data: dict, kind: str) -> Iterator[FormatProblem]:
    """What `osmosis train submit` (kind TRAINING) or `osmosis eval submit` (EVAL) would reject in `data`.

    Paths (the rollout and its entrypoint on disk) are checked by the rule,
    which knows the repository.
    """
    label = "a training" if kind == TRAINING else "an eval"
    sections = SECTION_KEYS[kind]
    allowed = COMMON_SECTIONS + tuple(sections)
    for name in data:
        if name not in allowed:
            yield FormatProblem((name,), f"[{show(name)[1:-1]}] is not a section of {label} config; the SDK rejects it (known: {', '.join(allowed)})", at_key=True)
    experiment = data.get("experiment")
    if experiment is None:
        yield FormatProblem(("experiment",), f"[experiment] is missing; {label} config needs it with rollout, entrypoint, model_path and dataset", missing=True)
    elif not isinstance(experiment, dict):
        yield FormatProblem(("experiment",), f"experiment must be a table, not {type_name(experiment)}")
    else:
        yield from _experiment(experiment)
    for name, keys in tuple(sections.items()) + (("advanced", None),):
        section = data.get(name)
        if section is None:
            continue
        if not isinstance(section, dict):
            yield FormatProblem((name,), f"{name} must be a table, not {type_name(section)}")
            continue
        if keys is not None:
            for key in section:
                if key not in keys:
                    yield FormatProblem((name, key), f"{show(key)} is not a key of [{name}]; the SDK rejects unknown keys (known: {', '.join(keys)})", at_key=True)
    evaluation = data.get("evaluation")
    if kind == EVAL and isinstance(evaluation, dict):
        yield from evaluation_values(evaluation)
    env = data.get("env")
    if env is not None and not isinstance(env, dict):
        yield FormatProblem(("env",), f"env must be a table of KEY = \"value\" pairs, not {type_name(env)}")
        env = None
    for key, value in (env or {}).items():
        if not isinstance(value, str):
            yield FormatProblem(("env", key), f"[env] values must be strings, not {type_name(value)}: quote it")
        if not ENV_VAR_NAME.match(key):
            yield FormatProblem(("env", key), f"{show(key)} is not a valid environment variable name: it must match ^[A-Z_][A-Z0-9_]*$", at_key=True)
        elif key.startswith(RESERVED_ENV_PREFIX):
            yield FormatProblem(("env", key), f"{show(key)}: names starting with {RESERVED_ENV_PREFIX} are reserved by the platform; choose another", at_key=True)
    yield from _secrets(data, kind, env or {})


def _experiment(experiment: dict) -> Iterator[FormatProblem]:
    for key in experiment:
        if key not in EXPERIMENT_KEYS:
            yield FormatProblem(("experiment", key), f"{show(key)} is not a key of [experiment]; the SDK rejects unknown keys (known: {', '.join(EXPERIMENT_KEYS)})", at_key=True)
    for key in EXPERIMENT_REQUIRED:
        if key not in experiment:
            yield FormatProblem(("experiment", key), f"[experiment] has no {key}; the SDK requires rollout, entrypoint, model_path and dataset", missing=True)
    for key in EXPERIMENT_KEYS:
        if key in experiment and not isinstance(experiment[key], str):
            yield FormatProblem(("experiment", key), f"experiment.{key} must be a string, not {type_name(experiment[key])}")
    branch, sha = experiment.get("branch"), experiment.get("commit_sha")
    if isinstance(branch, str) and (not branch or any(c.isspace() for c in branch)):
        yield FormatProblem(("experiment", "branch"), "experiment.branch must not be empty or contain whitespace")
    if isinstance(sha, str) and not COMMIT_SHA.match(sha):
        yield FormatProblem(("experiment", "commit_sha"), f"experiment.commit_sha {show(sha)} is not a commit SHA: give 7-40 hexadecimal characters (a full 40-character SHA is best)")
    if "branch" in experiment and "commit_sha" in experiment:
        yield FormatProblem(("experiment", "branch"), "experiment has both branch and commit_sha; the SDK accepts one: keep commit_sha", at_key=True)


def _secrets(data: dict, kind: str, env: dict) -> Iterator[FormatProblem]:
    if "secrets" not in data:
        if kind == EVAL:
            yield FormatProblem(("secrets",), "[secrets] is missing; an eval config needs it (required = [] when the evaluation needs no secret)", missing=True)
        return
    secrets = data["secrets"]
    if not isinstance(secrets, dict):
        yield FormatProblem(("secrets",), f"secrets must be a table with required = [NAMES], not {type_name(secrets)}")
        return
    for key in secrets:
        if key != "required":
            yield FormatProblem(("secrets", key), f"{show(key)} is not a key of [secrets]; it holds only required = [NAMES]", at_key=True)
    if "required" not in secrets:
        yield FormatProblem(("secrets", "required"), "[secrets] has no required = [NAMES]; the SDK requires it when the section is present", missing=True)
        return
    required = secrets["required"]
    if not isinstance(required, list) or not all(isinstance(item, str) for item in required):
        yield FormatProblem(("secrets", "required"), 'secrets.required must be a list of strings, e.g. required = ["OPENAI_API_KEY"]')
        return
    seen: set[str] = set()
    for index, name in enumerate(required):
        if name in seen:
            yield FormatProblem(("secrets", "required", index), f"{show(name)} is listed twice in secrets.required")
        seen.add(name)
        if not SECRET_NAME.match(name):
            yield FormatProblem(("secrets", "required", index), f"{show(name)} is not a valid secret name: it must match ^[A-Z][A-Z0-9_]*$")
        elif name in env:
            yield FormatProblem(("secrets", "required", index), f"{show(name)} is both in [env] and in secrets.required; each variable must come from one place")


def evaluation_values(evaluation: dict) -> Iterator[FormatProblem]:
    """What `osmosis eval run` refuses among an eval config's [evaluation] values: each of
    them it reads must be an integer or a finite number as it types it, and `n` positive.
    Nothing else is limited (a `limit` or `batch_size` of 0 or less means "no limit" there)."""
    for key, wanted in EVALUATION_TYPES:
        if key not in evaluation:
            continue
        value = evaluation[key]
        route = ("evaluation", key)
        if wanted == "integer" and (isinstance(value, bool) or not isinstance(value, int)):
            yield FormatProblem(route, f"evaluation.{key} must be an integer, not {type_name(value)}: `osmosis eval run` refuses it")
        elif wanted == "number" and (isinstance(value, bool) or not isinstance(value, (int, float))):
            yield FormatProblem(route, f"evaluation.{key} must be a number, not {type_name(value)}: `osmosis eval run` refuses it")
        elif wanted == "number" and not math.isfinite(value):
            yield FormatProblem(route, f"evaluation.{key} must be a finite number, not {value!r}: `osmosis eval run` refuses it")
        elif key == "n" and value <= 0:
            yield FormatProblem(route, f"evaluation.n must be a positive integer, not {value}: `osmosis eval run` refuses it (each row is evaluated n times)")


def location_problem(path: str, root: str, kind: str) -> str | None:
    """Why the submit command of `kind` refuses a config at `path` (links resolved) in the
    workspace `root`, or None: it takes one only from its directory, with the suffix .toml."""
    directory = CONFIG_DIRS[kind]
    real, base = os.path.realpath(path), os.path.realpath(os.path.join(root, *directory.split("/")))
    try:
        under = os.path.commonpath([real, base]) == base and real != base
    except ValueError:  # another drive
        under = False
    if not under:
        as_written = os.path.normpath(os.path.join(os.path.abspath(root), *directory.split("/")))
        if os.path.normpath(os.path.abspath(path)).startswith(as_written + os.sep):  # under it by name, not once resolved
            return f"is a link that leads out of {directory}/: `{COMMANDS[kind]}` resolves links and takes a {kind} config only from {directory}/ of the workspace"
        return f"is not under {directory}/: `{COMMANDS[kind]}` takes a {kind} config only from {directory}/ of the workspace"
    if os.path.splitext(real)[1] != ".toml":
        return f"is not a .toml file: `{COMMANDS[kind]}` takes only files named *.toml under {directory}/"
    return None


def missing_workspace_dirs(root: str) -> list[str]:
    """The directories the workspace at `root` must have and lacks (each `NAME/`), as the submit path checks."""
    return [f"{name}/" for name in WORKSPACE_DIRS if not os.path.isdir(os.path.join(os.path.realpath(root), *name.split("/")))]


def rollout_problem(rollout: str) -> str | None:
    """Why the SDK refuses `rollout` as a rollout name, or None."""
    if rollout in ("", ".", ".."):
        return "is not a valid rollout name"
    if "/" in rollout or "\\" in rollout or os.path.isabs(rollout):
        return "must be a single-segment name under rollouts/ (no path separators)"
    return None


def entrypoint_problem(entrypoint: str) -> str | None:
    """Why `entrypoint` cannot resolve under rollouts/<rollout>/, or None (existence is checked on disk)."""
    if not entrypoint:
        return "is empty"
    if "\\" in entrypoint or os.path.isabs(entrypoint) or entrypoint.startswith("/"):
        return "must be a path under rollouts/<rollout>/"
    depth = 0
    for part in entrypoint.split("/"):
        if part == "..":
            depth -= 1
            if depth < 0:
                return "must resolve under rollouts/<rollout>/ (it leads out with ..)"
        elif part not in ("", "."):
            depth += 1
    if depth == 0:
        return "names the rollout directory itself, not a file in it"
    return None




__all__ = [
    "COMMANDS", "CONFIG_DIRS", "WORKSPACE_DIRS", "evaluation_values", "location_problem", "missing_workspace_dirs",
    "COMMON_SECTIONS", "EVAL", "ENV_VAR_NAME", "RESERVED_ENV_PREFIX", "SECRET_NAME", "type_name", "EXPERIMENT_KEYS", "EXPERIMENT_REQUIRED", "SECTION_KEYS", "TRAINING",
    "FormatProblem", "TomlDocument", "check_format", "entrypoint_problem", "parse", "read_document",
    "rollout_problem", "scan", "tomllib", "walk_strings",
]
