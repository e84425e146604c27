"""From the files a commit changes to the plans to lint (`--changed-files`, the pre-commit hook).

pre-commit passes the staged files; a plan's verdict also depends on files
that are not plans. As diff mode does for a pull request, each changed file
is mapped to the plans it belongs to:

* a plan (a YAML file under the repository's `plans/`, or one elsewhere that
  reads as a plan): linted;
* the configuration file or the catalog in use: every plan under `plans/`;
* anything else: the plans under `plans/` whose data checks read it (a split
  file, a glob's match; `rules.leakage.inputs`) or whose run rules read it (a
  run config, its entrypoint; `rules.run.inputs`).

Deleted files count too (a split file that went away). Only the changed
non-plan files cost anything: then each plan's referenced paths (its split
`path`s and `run:` values) are read, kept per file version in the result
cache's plan facts, and the few plans that could name a changed file are
checked exactly. A commit of plans alone maps nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Iterable

from planlint.core.config import Config
from planlint.core.loader import load_file
from planlint.core.model import is_plan
from planlint.core.paths import repository_root
from planlint.engine.discovery import YAML_SUFFIXES
from planlint.engine.plan_names import plan_paths
from planlint.rules.base import PlanContext, Services
from planlint.rules.leakage import inputs as data_inputs
from planlint.rules.run import inputs as run_inputs

_GLOB = "*?["


def plans_for_changes(changed: Iterable[str], config: Config, *, facts: Callable[[], Any] | None = None) -> list[str]:
    """The paths to lint for a commit that changes the files `changed` (relative to the working
    directory, as pre-commit passes them), in order: the changed plans, then the plans under the
    repository's `plans/` that the other files belong to. `facts`: makes the cache.PlanFacts the
    plans' references are kept in, called only when a file other than a plan changed; or None."""
    root = repository_root(os.path.abspath(os.getcwd()))
    plans_dir = os.path.join(root, "plans")
    policy = {_key(p) for p in (config.source, config.catalog) if p is not None}
    linted: list[str] = []
    others: list[str] = []
    every_plan = False
    for path in dict.fromkeys(changed):
        key = _key(path)
        if key in policy:
            every_plan = True
        if path.lower().endswith(YAML_SUFFIXES) and (_inside(key, plans_dir) or _reads_as_plan(path, config)):
            linted.append(path)  # under plans/, linted as a found file is (--skip-non-plans)
        elif key not in policy:
            others.append(path)
    if not os.path.isdir(plans_dir) or not (every_plan or others):
        return linted
    taken = {_key(p) for p in linted}
    candidates = [p for p in plan_paths(os.path.relpath(plans_dir), config) if _key(p) not in taken]
    if every_plan:
        return linted + candidates
    kept = facts() if facts is not None else None
    wanted = {form for path in others for form in _forms(path)}
    names = {os.path.basename(path) for path in others}
    found = []
    for path in candidates:
        refs = kept.get(path, "refs", lambda path=path: _refs(path, config)) if kept is not None else _refs(path, config)
        could = any(os.path.basename(ref.replace("\\", "/")) in names or any(c in ref for c in _GLOB) for ref in refs or ())
        if could and _reads_changed(path, config, wanted):  # the few that could name a changed file: checked exactly
            found.append(path)
    if kept is not None:
        kept.save()
    return linted + found


def _key(path: str | os.PathLike) -> str:
    return os.path.normcase(os.path.abspath(path))


def _forms(path: str) -> set[str]:
    """The changed file as a plan may reach it: as written, and with links resolved."""
    return {_key(path), os.path.normcase(os.path.realpath(path))}


def _inside(key: str, directory: str) -> bool:
    directory = os.path.normcase(os.path.abspath(directory))
    return key.startswith(directory + os.sep)


def _reads_as_plan(path: str, config: Config) -> bool:
    """A YAML file outside plans/ is linted only when it is a plan: an unrelated YAML file
    (a workflow, a trainer's config) that fails to parse is not the hook's to report."""
    loaded = load_file(Path(path), config.parser_limits())
    return not loaded.fatal and is_plan(loaded.data)


def _refs(path: str, config: Config) -> list[str] | None:
    """The paths plan `path` names: its splits' `path`s and every string under `run:`; None when not a plan."""
    loaded = load_file(Path(path), config.parser_limits())
    if loaded.fatal or not is_plan(loaded.data):
        return None
    refs: set[str] = set()
    splits = loaded.data.get("splits")
    if isinstance(splits, dict):
        refs.update(split["path"] for split in splits.values() if isinstance(split, dict) and isinstance(split.get("path"), str))
    run = loaded.data.get("run")
    if isinstance(run, dict):
        refs.update(value for value in run.values() if isinstance(value, str))
    return sorted(refs)


def _reads_changed(path: str, config: Config, wanted: set[str]) -> bool:
    """Do the data checks or the run rules of plan `path` read one of the files `wanted`?"""
    loaded = load_file(Path(path), config.parser_limits())
    if loaded.fatal or not is_plan(loaded.data):
        return False
    ctx = PlanContext(data=loaded.data, path=path, config=config, services=Services(), file=Path(path))
    try:
        read = [*data_inputs(ctx), *run_inputs(ctx)]
    except Exception:  # noqa: BLE001 - the lookup failed (a glob past its limit, say): lint the plan, whose checks say why
        return True
    return any(form in wanted for file in read for form in _forms(str(file)))
