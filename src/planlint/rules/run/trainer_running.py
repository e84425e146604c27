"""Diff mode for trainer runs: PL708 (a running plan's trainer config changed in what decides
the run) and PL706's twin (a grader's reward code changed, its version did not).

Both compare the base revision's files (read through `ctx.base_text`, from git
objects) with the working tree's. The config that runs is the YAML with the
launch script's overrides on top (services.trainer_configs.effective_leaves),
so a change made only in the script counts as much as one in the YAML.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from planlint.core.loader import DEFAULT_MAX_FILE_SIZE, read_text
from planlint.core.messages import show
from planlint.core.yaml_values import scalar_text
from planlint.rules.base import MISSING, PlanContext, Problem, lookup
from planlint.rules.run.files import inside
from planlint.rules.run.trainer_checks import reward_name
from planlint.rules.run.trainer_files import trainer_files, trainer_of
from planlint.services.trainer_configs import effective_leaves, operational, parse_config, parse_script


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def _dotted(route: tuple) -> str:
    return ".".join(str(part) for part in route)


def changed_while_running(ctx: PlanContext) -> Iterator[Problem]:
    """PL708 for a plan that was `running` at the base revision from a trainer's config."""
    base, read_base = ctx.base, ctx.base_text
    if not isinstance(base, dict) or not ctx.data or read_base is None or lookup(base, ("metadata", "status")) != "running":
        return
    trainer = trainer_of(base)
    base_config = lookup(base, ("run", "config"))
    if trainer is None or not isinstance(base_config, str):
        return
    text = read_base(base_config)
    if text is None:
        return  # nothing was running from it
    old = parse_config(text, base_config, trainer)
    if old.data is None:
        return
    base_script = lookup(base, ("run", "script"))
    script_text = read_base(base_script) if isinstance(base_script, str) else None
    old_script = parse_script(script_text, base_script, trainer) if script_text is not None and isinstance(base_script, str) else None
    files = trainer_files(ctx)
    if files is None or trainer_of(ctx.data) != trainer:
        run = ctx.get("run")
        yield Problem(("run",) if run is MISSING else ("run", "trainer") if isinstance(run, dict) and "trainer" in run else ("run",),
                      f"the plan was running at the base revision from the {trainer} config {show(base_config)}, and no longer names it: "
                      "restore it; a new run belongs in a new plan", missing=run is MISSING)
        return
    if files.run is None:
        return  # a named config that cannot be read is PL901's
    before = effective_leaves(old, old_script)
    after = effective_leaves(files.run.config, files.script)
    changes: list[tuple[tuple, Any, str]] = []  # (route, head document or None, description)
    for route in list(after) + [route for route in before if route not in after]:
        if operational(trainer, route):
            continue
        old_value, new_value = before.get(route, (MISSING, None))[0], after.get(route, (MISSING, None))[0]
        if old_value is not MISSING and new_value is not MISSING and _same(old_value, new_value):
            continue
        where = _dotted(route)
        if old_value is MISSING:
            description = f"{where} was added ({show(new_value)})"
        elif new_value is MISSING:
            description = f"{where} was removed (was {show(old_value)})"
        else:
            description = f"{where} changed from {show(old_value)} to {show(new_value)}"
        changes.append((route, after[route][1] if route in after else None, description))
    if not changes:
        return
    route, document, _ = changes[0]
    if document is None:  # removed: at the mapping in the YAML that held it
        document = files.run.config
    listed = "; ".join(description for _, _, description in changes[:8]) + (f"; and {len(changes) - 8} more" if len(changes) > 8 else "")
    yield Problem(
        route,
        f"the plan was running at the base revision, and the {trainer} config that runs changed: {listed}. "
        "Revert it, or stop this plan and start the new run under a new plan with its own name and baseline",
        missing=route not in after,
        document=document,
    )


def reward_code_changed(ctx: PlanContext) -> Iterator[Problem]:
    """PL706's twin: the code of a reward the trainer scores with changed since the base revision, and
    the plan grader it is did not change its version. At the grader's `version` in the plan."""
    base, read_base = ctx.base, ctx.base_text
    if not isinstance(base, dict) or not ctx.data or read_base is None:
        return
    files = trainer_files(ctx)
    if files is None or files.run is None:
        return
    reward_ids = ctx.get("reward", "graders")
    graders = ctx.get("graders")
    base_graders = lookup(base, ("graders",))
    if not isinstance(reward_ids, list) or not isinstance(graders, list):
        return
    old_versions = {g.get("id"): g.get("version", MISSING) for g in base_graders if isinstance(g, dict)} if isinstance(base_graders, list) else {}
    reported: set[str] = set()
    for reward in files.run.rewards:
        if reward.file is None or not reward.file.is_file() or not inside(reward.file, files.root):
            continue  # never read out of the repository
        rel = os.path.relpath(reward.file, files.root).replace(os.sep, "/")
        old_text = read_base(rel)
        if old_text is None:
            continue
        new_text, _ = read_text(reward.file, getattr(ctx.config, "max_file_size", DEFAULT_MAX_FILE_SIZE))
        if new_text is None or new_text == old_text:
            continue
        for index, grader in enumerate(graders):
            if not isinstance(grader, dict) or grader.get("id") not in reward_ids or grader.get("id") in reported:
                continue
            names = {reward_name(name) for name in (grader.get("id"), grader.get("name")) if isinstance(name, str)}
            if not names & {reward_name(name) for name in reward.names}:
                continue
            old, new = old_versions.get(grader["id"], MISSING), grader.get("version", MISSING)
            if old is MISSING or new is MISSING or not _same(old, new):
                continue  # a new grader, or its version moved: PL706 itself
            reported.add(grader["id"])
            yield Problem(("graders", index, "version"),
                          f"the code of reward grader {show(grader['id'])} changed ({rel}, which the {files.trainer} config scores with), but its version is still "
                          f"{show(scalar_text(new))}: the version is the promise that scoring did not change; bump it (and re-measure the baseline)",
                          code="PL706")
