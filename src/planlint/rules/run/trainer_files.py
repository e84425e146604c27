"""The trainer configs a plan names (`run: {trainer: trl|verl|axolotl, config: ..., script: ...}`), read once.

The YAML config and the optional launch script are resolved like the
Osmosis submit configs (relative to the repository root, never out of it)
and read by planlint.services.trainer_configs into a TrainerRun: the facts
PL901-PL903 and PL708 compare with the plan. Kept in the plan's memo, and
shared with PL801 and PL008 (the configs' string values) and the cache
(every file the readers looked at).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planlint.core.loader import Limits, load_text
from planlint.core.messages import show
from planlint.core.positions import START, Span
from planlint.rules.base import ERROR, PlanContext, Problem, lookup
from planlint.rules.run.files import display_path, plan_repository, resolve_config
from planlint.services.trainer_configs import (
    TRAINERS,
    ConfigDocument,
    LaunchScript,
    TrainerRun,
    parse_script,
    read_config,
    read_run,
    read_script,
    walk_strings,
)

_MEMO = "_trainer_run"
TRAINER_DIRS = tuple(("configs", trainer) for trainer in TRAINERS)  # where PL904 looks for unplanned trainer configs
TRAINER_CONFIGS = tuple("/".join(parts) + "/" for parts in TRAINER_DIRS)  # the same, as repository path prefixes


@dataclass
class TrainerFiles:
    """A plan's trainer run: what was read (`run`: None when the config could not be), and the
    problems of the plan's own `run.*` values (PL901: missing, outside the repository)."""

    trainer: str
    root: Path
    run: TrainerRun | None = None
    script: LaunchScript | None = None
    problems: list[Problem] = field(default_factory=list)
    paths: list[Path] = field(default_factory=list)  # the files named, for the cache


def trainer_of(data: Any) -> str | None:
    """The trainer a plan's `run:` names (`trl`, `verl`, `axolotl`), or None (Osmosis, or no run)."""
    run = lookup(data, ("run",))
    if isinstance(run, dict) and "platform" not in run and run.get("trainer") in TRAINERS:
        return str(run["trainer"])
    return None


def trainer_files(ctx: PlanContext) -> TrainerFiles | None:
    """The plan's trainer config and launch script, read and parsed once; None without a trainer run."""
    if _MEMO in ctx.memo:
        return ctx.memo[_MEMO]
    trainer = trainer_of(ctx.data)
    if trainer is None:
        ctx.memo[_MEMO] = None
        return None
    files = TrainerFiles(trainer, plan_repository(ctx))
    ctx.memo[_MEMO] = files
    limits: Limits = ctx.config.parser_limits() if hasattr(ctx.config, "parser_limits") else Limits()
    run = ctx.get("run")
    config_value, script_value = run.get("config"), run.get("script")
    script: LaunchScript | None = None
    if isinstance(script_value, str):
        path, why = resolve_config(script_value, files.root)
        files.paths.append(files.root / script_value)
        if path is None:
            files.problems.append(Problem(("run", "script"), f"run.script {show(script_value)} {why}"))
        else:
            script = read_script(path, display_path(path), trainer, limits)
            if script.document.error is not None:
                files.problems.append(Problem((), f"the launch script cannot be read: {script.document.error[0]}", document=script.document))
                script = None
    files.script = script
    if not isinstance(config_value, str):
        return files  # absent, or a schema error (PL003)
    files.paths.append(files.root / config_value)
    path, why = resolve_config(config_value, files.root)
    if path is None:
        files.problems.append(Problem(("run", "config"), f"run.config {show(config_value)} {why}"))
        return files
    config = read_config(path, display_path(path), trainer, limits)
    if config.error is not None:
        files.problems.append(Problem((), f"the {trainer} config cannot be read: {config.error[0]}", document=config))
        return files
    files.run = read_run(trainer, config, script, files.root)
    return files


_OSMOSIS_KEYS = ("training_config", "eval_config")
_TRAINER_KEYS = ("config", "script")


def form_problems(ctx: PlanContext) -> Iterator[Problem]:
    """PL901 for a `run:` that mixes the two forms: an Osmosis key beside `trainer`, a trainer's beside
    `platform`, or a trainer without its `config` (the schema says which keys exist, not which go together)."""
    run = ctx.get("run")
    if not isinstance(run, dict) or ("platform" in run) == ("trainer" in run):
        return  # neither or both: the schema's (PL003)
    if "trainer" in run:
        for key in _OSMOSIS_KEYS:
            if key in run:
                yield Problem(("run", key), f"run.{key} belongs to the Osmosis form (platform: osmosis); a {show(run['trainer'])[1:-1]} run names its YAML as run.config", at_key=True)
        if "config" not in run:
            yield Problem(("run", "config"), f"run names the trainer {show(run['trainer'])} but no config: give run.config, the YAML the trainer reads", missing=True)
    else:
        for key in _TRAINER_KEYS:
            if key in run:
                yield Problem(("run", key), f"run.{key} belongs to a trainer run (trainer: trl|verl|axolotl); an Osmosis run names training_config and eval_config", at_key=True)


_TOKEN = re.compile(r"^<(?:\|[^<>|]+\||/?[A-Za-z_]{1,20})>$")


def special_token(text: str) -> bool:
    """`<|endoftext|>`, `<s>`, `</s>`, `<pad>`, `<think>`: a tokenizer's special token, which trainer configs
    name, not a template's blank (`<your-model-path>`, `<model revision>`): PL008 leaves it alone."""
    return bool(_TOKEN.match(text.strip()))


def comment_free_spans(text: str, path: str) -> Sequence[Span]:
    """Where a trainer's YAML config or launch script (by its name) quotes strings: a `#` there is
    text, not a comment, so it holds no suppression."""
    if path.lower().endswith(".sh"):
        return parse_script(text, path, "verl").document.quoted  # the words are split alike for every trainer
    return load_text(text).quoted


def string_values(ctx: PlanContext) -> Iterator[tuple[Any, tuple, str]]:
    """(document, route, text) for every string of the trainer config and the script's overrides (PL801, PL008)."""
    files = trainer_files(ctx)
    if files is None:
        return
    documents = [files.run.config] if files.run is not None else []
    if files.script is not None:
        documents.append(files.script.document)
    for document in documents:
        if document.data is not None:
            for route, text in walk_strings(document.data):
                yield document, route, text


def inputs(ctx: PlanContext) -> list[Path]:
    """Every file the trainer readers read or tested for this plan (for the result cache)."""
    files = trainer_files(ctx)
    if files is None:
        return []
    looked = list(files.paths)
    if files.run is not None:
        looked += files.run.looked
        looked += [reward.file for reward in files.run.rewards if reward.file is not None]
    return looked


def trainer_configs(root: str) -> list[Path]:
    """Every trainer config and launch script under the repository's configs/trl/, configs/verl/ and
    configs/axolotl/ (`*.yaml`, `*.yml`, `*.sh`; links not followed into directories)."""
    found: list[Path] = []
    for parts in TRAINER_DIRS:
        base = Path(root, *parts)
        if not base.is_dir() or not os.path.realpath(base).startswith(os.path.realpath(root)):
            continue
        for directory, dirnames, filenames in os.walk(base):
            dirnames.sort()
            found.extend(Path(directory, name) for name in sorted(filenames) if name.lower().endswith((".yaml", ".yml", ".sh")))
    return found


def unplanned_trainer_config(path: Path, root: str, limits: Limits, readable: bool, *, added: bool = False) -> Problem:
    """PL904's problem in a trainer config or launch script no plan names (at line 1); an error
    when the pull request adds it (diff mode), as for an Osmosis config."""
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    trainer = rel.split("/")[1]
    if readable and not rel.lower().endswith(".sh"):
        document = read_config(path, display_path(path), trainer, limits)
    elif readable:
        document = read_script(path, display_path(path), trainer, limits).document
    else:  # a link out of the repository: named, never read
        document = ConfigDocument(display_path(path), trainer)
    key = "script" if rel.lower().endswith(".sh") else "config"
    what = f"{trainer} {'launch script' if key == 'script' else 'config'}"
    said = f"the pull request adds this {what} and no plan names it: a new run nobody reviewed" if added else f"no plan names this {what}: a run nobody reviewed"
    return Problem((), f"{said}. Name it from its plan (run: {{trainer: {trainer}, {key}: {rel}}}), or delete it",
                   span=START, document=document, severity=ERROR if added else None)


def trainer_code(data: Any, root: Path, limits: Limits) -> set[str]:
    """The repository files of reward code the trainer config of plan `data` scores with (repo-relative,
    `/` separators): what diff mode must also watch (PL706's twin)."""
    trainer = trainer_of(data)
    run = lookup(data, ("run",))
    if trainer is None or not isinstance(run.get("config"), str):
        return set()
    path, _ = resolve_config(run["config"], root)
    if path is None:
        return set()
    script = None
    if isinstance(run.get("script"), str):
        script_path, _ = resolve_config(run["script"], root)
        script = read_script(script_path, display_path(script_path), trainer, limits) if script_path is not None else None
    config = read_config(path, display_path(path), trainer, limits)
    if config.error is not None:
        return set()
    found = set()
    for reward in read_run(trainer, config, script, root).rewards:
        if reward.file is not None:
            found.add(os.path.relpath(reward.file, root).replace(os.sep, "/"))
    return found


def named_trainer_configs(data: Any, root: Path) -> list[str]:
    """The trainer config and script plan `data` names, as written (absolute) and real: PL904's 'planned'."""
    if trainer_of(data) is None:
        return []
    run = lookup(data, ("run",))
    named: list[str] = []
    for key in ("config", "script"):
        value = run.get(key)
        if not isinstance(value, str) or not value.strip():
            continue
        named.append(os.path.normpath(os.path.join(os.path.abspath(root), value)))
        path, _ = resolve_config(value, root)
        if path is not None:
            named.append(os.path.realpath(path))
    return named
