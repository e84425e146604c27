"""PL901, PL902 and PL903 for the open trainers' configs (TRL, verl, axolotl).

The rules of rules/run/{validity,pins,drift}.py call these for a plan whose
`run:` names a trainer; each finding is in the trainer's YAML or in its
launch script (`document=`), at the key the run takes the value from, or at
the mapping that would hold a key the trainer leaves at its default.
One problem, one finding: a placeholder value is PL008's, never also
compared or looked for.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Iterator
from typing import Any

from planlint.core.floating import floating_reason
from planlint.core.messages import show
from planlint.rules.base import ERROR, WARNING, Note, PlanContext, Problem, lookup
from planlint.rules.pinning import split_path_pin
from planlint.rules.run.files import ACTIVE_STATUSES, is_placeholder, plan_status, resolve_config
from planlint.rules.run.trainer_files import form_problems, trainer_files
from planlint.services.trainer_configs import Setting, TrainerRun
from planlint.services.trainer_configs.launch_script import UNKNOWN

NAMES = {"trl": "TRL", "verl": "verl", "axolotl": "axolotl"}
REWARD_KEY = {"trl": ("reward_funcs",), "verl": ("custom_reward_function", "path"), "axolotl": ("trl", "reward_funcs")}
_HF_DATASET = re.compile(r"^hf://datasets/(?P<repo>[^/@]+/[^/@]+)(?:@(?P<revision>[^/]*))?(?P<file>/.*)?$")
# datasets' own split patterns (datasets/data_files.py: train/validation/test keywords in a file's name)
_SPLIT_WORDS = {"train": ("train", "training"), "validation": ("validation", "valid", "dev", "val"), "test": ("test", "testing", "eval", "evaluation")}


def _usable(setting: Setting | None) -> bool:
    return setting is not None and setting.value is not UNKNOWN and not is_placeholder(setting.value)


def _at(setting: Setting, message: str, severity: str | None = None, *, at_key: bool = False) -> Problem:
    return Problem(setting.route, message, missing=setting.default, at_key=at_key and not setting.default, document=setting.document, severity=severity)


def _key(setting: Setting) -> str:
    """How the message names the key: `--seed` in a script, `model.path` in a YAML."""
    dotted = ".".join(str(part) for part in setting.route)
    if setting.document.kind == "script":
        return f"{dotted}=" if "." in dotted else f"--{dotted}"
    return dotted


# --------------------------------------------------------------------------- PL901


def invalid(ctx: PlanContext) -> Iterator[Problem | Note]:
    yield from form_problems(ctx)
    files = trainer_files(ctx)
    if files is None:
        return
    yield from files.problems
    run = files.run
    if run is None:
        return
    for text in run.notes:
        yield Note(text)
    for problem in run.problems:
        if not problem.at_key and is_placeholder(lookup(problem.document.data, problem.route)):
            continue
        yield Problem(problem.route, problem.message, missing=problem.missing, at_key=problem.at_key, document=problem.document)
    if _usable(run.model) and run.model is not None and not isinstance(run.model.value, str):
        yield _at(run.model, f"{_key(run.model)} must be a model name or path, not {show(run.model.value)}")
    for reward in run.rewards:
        if not _usable(reward.setting):
            continue
        if reward.kind == "file":
            _, why = resolve_config(reward.text.rsplit(":", 1)[0], files.root)
            if why is not None:
                yield _at(reward.setting, f"{_key(reward.setting)} {show(reward.setting.value)} {why}: the run would fail to load its reward")
        elif reward.kind == "unknown":
            builtins = ", ".join(("accuracy_reward", "reasoning_accuracy_reward", "think_format_reward", "get_soft_overlong_punishment")) if run.trainer == "trl" else ""
            known = f"a built-in ({builtins}) " if builtins else ""
            yield _at(reward.setting, f"reward function {show(reward.text)} is neither {known}nor a dotted import path (module.function): {NAMES[run.trainer]} cannot load it")


# --------------------------------------------------------------------------- PL902


def _outside(path: str) -> bool:
    return path.startswith(("/", "~", "\\")) or path.startswith("$") or (len(path) > 1 and path[1] == ":") or ".." in path.replace("\\", "/").split("/")


def floating(ctx: PlanContext) -> Iterator[Problem]:
    files = trainer_files(ctx)
    if files is None or files.run is None:
        return
    run, trainer = files.run, NAMES[files.run.trainer]
    status = ERROR if plan_status(ctx) in ACTIVE_STATUSES else WARNING
    yield from _model_floating(run, trainer, status)
    for source in run.sources:
        if not _usable(source.setting):
            continue
        for path in source.files:
            pin = split_path_pin(path)
            if pin is not None:
                severity, why, pinned = pin
                yield _at(source.setting, f"{trainer} reads {show(path)}, which {why}: name it at a version, e.g. {show(pinned)}", status if severity == ERROR else WARNING)
                break
            if "://" not in path and _outside(path):
                yield _at(source.setting, f"{trainer} reads {show(path)}, a file outside the repository: nothing pins what it holds; "
                          "read the split files the plan names (in the repository, pinned by its commit) or a versioned URI", status)
                break
        if source.dataset is not None and "/" in source.dataset and not source.files:
            if source.can_pin and source.revision is not None:
                if not _usable(source.revision):
                    continue
                reason = floating_reason(source.revision.value)
                if reason is not None:
                    what = "no revision" if source.revision.default else f"revision {show(source.revision.value)} ({reason})"
                    yield _at(source.revision, f"the dataset {show(source.dataset)} has {what}: {trainer} loads whatever was pushed last; set revision to a commit hash", status)
            elif not source.can_pin:
                yield _at(source.setting, f"{trainer} has no key for a Hub dataset's revision: {show(source.dataset)} loads whatever was pushed last when the run starts. "
                          f"Name its files at a commit instead (datasets: [{{path: parquet, data_files: 'hf://datasets/{source.dataset}@<commit>/FILE'}}]), or commit them", WARNING)
    for reward in run.rewards:
        if reward.kind == "module" and reward.file is None and _usable(reward.setting):
            yield _at(reward.setting, f"reward function {show(reward.text)} is imported from a module that is not in the repository: "
                      "nothing here pins its code; keep the reward's code in the repository, where the commit pins it", WARNING)


def _model_floating(run: TrainerRun, trainer: str, status: str) -> Iterator[Problem]:
    model = run.model
    if not _usable(model) or model is None or not isinstance(model.value, str):
        return
    if run.model_can_pin:
        revision = run.model_revision
        if _usable(revision) and revision is not None:
            reason = floating_reason(revision.value)
            if reason is not None:
                if revision.default:
                    said = "no revision: it loads 'main' (TRL's default)" if run.trainer == "trl" else "no revision: it loads the newest one"
                    yield _at(revision, f"the model {show(model.value)} has {said}, whatever the Hub holds when the run starts; set {revision.route[-1]} to the commit of base_model.revision", status)
                else:
                    yield _at(revision, f"{_key(revision)} {show(revision.value)} is floating ({reason}): set it to the commit of base_model.revision", status)
        return
    if run.model_revision is None and not model.default:
        if "/" in model.value and not model.value.startswith(("/", "~", ".")):
            yield _at(model, f"{trainer} has no key for the model's revision: {_key(model)} {show(model.value)} loads whatever the Hub holds when the run starts. "
                      "To pin it, point it at a Hub cache snapshot of the reviewed commit, .../models--ORG--NAME/snapshots/<commit>", WARNING)
        else:
            yield _at(model, f"{_key(model)} {show(model.value)} is a local directory: nothing pins which model and revision it holds; "
                      "point it at a Hub cache snapshot, .../models--ORG--NAME/snapshots/<commit>", WARNING)


# --------------------------------------------------------------------------- PL903


def _normal(path: str) -> str:
    path = path.replace("\\", "/")
    return posixpath.normpath(path[2:] if path.startswith("./") else path)


def _matches(path: str, planned: str) -> bool:
    a, b = _normal(path), _normal(planned)
    return a == b or fnmatch.fnmatchcase(a, b) or fnmatch.fnmatchcase(b, a)


def _same_commit(a: Any, b: Any) -> bool:
    x, y = str(a).lower(), str(b).lower()
    return x == y or (len(x) >= 7 and len(y) >= 7 and re.fullmatch(r"[0-9a-f]+", x + y) is not None and (x.startswith(y) or y.startswith(x)))


def _split_word(path: str) -> str | None:
    """The split the datasets library names a file by (`train-00000.parquet` -> train), if any."""
    name = posixpath.basename(path).lower()
    for split, words in _SPLIT_WORDS.items():
        if any(re.search(rf"(?:^|[^a-z]){word}(?:[^a-z]|$)", name) for word in words):
            return split
    return None


def drift(ctx: PlanContext) -> Iterator[Problem]:
    files = trainer_files(ctx)
    if files is None or files.run is None:
        return
    run = files.run
    yield from _model_drift(ctx, run)
    yield from _data_drift(ctx, run)
    yield from _reward_drift(ctx, run)
    yield from _recipe_drift(ctx, run)
    yield from _launch_drift(ctx, run)


def _model_drift(ctx: PlanContext, run: TrainerRun) -> Iterator[Problem]:
    trainer, planned = NAMES[run.trainer], ctx.get("base_model", "name")
    model = run.model
    if _usable(model) and model is not None and isinstance(model.value, str) and isinstance(planned, str) and not is_placeholder(planned):
        if model.default:
            yield _at(model, f"the config names no model: {trainer} trains its default {show(model.value)}, not the plan's base_model.name {show(planned)}; set {_key(model)}")
        elif ("/" in model.value and not model.value.startswith(("/", "~", "."))) or run.model_revision is not None:
            if model.value != planned:
                yield _at(model, f"the {trainer} config trains {show(model.value)} ({_key(model)}), but the plan's base_model.name is {show(planned)}: the run would train another model than the one reviewed")
    revision, planned_revision = run.model_revision, ctx.get("base_model", "revision")
    if _usable(revision) and revision is not None and not revision.default and isinstance(planned_revision, (str, int)) and not is_placeholder(planned_revision):
        if floating_reason(revision.value) is None and floating_reason(planned_revision) is None and not _same_commit(revision.value, planned_revision):
            yield _at(revision, f"the {trainer} config loads revision {show(revision.value)} of the model, but the plan's base_model.revision is {show(planned_revision)}: make them the same commit")


def _data_drift(ctx: PlanContext, run: TrainerRun) -> Iterator[Problem]:
    trainer = NAMES[run.trainer]
    planned = {role: ctx.get("splits", role, "path") for role in ("train", "eval")}
    planned = {role: value for role, value in planned.items() if isinstance(value, str) and value.strip() and not is_placeholder(value)}
    for source in run.sources:
        if not _usable(source.setting):
            continue
        own, other = planned.get(source.role), planned.get("eval" if source.role == "train" else "train")
        does = "trains on" if source.role == "train" else "evaluates on"
        for path in source.files:
            if other is not None and _matches(path, other):
                yield _at(source.setting, f"{trainer} {does} {show(path)}, the plan's {'eval' if source.role == 'train' else 'train'} split "
                          f"(splits.{'eval' if source.role == 'train' else 'train'}.path): the splits the plan keeps apart would be mixed")
                break
            if own is not None and not _matches(path, own):
                yield _at(source.setting, f"{trainer} {does} {show(path)}, but the plan's splits.{source.role}.path is {show(own)}: "
                          "the data checks read other files than the run uses; name the same files")
                break
        if source.dataset is not None and not source.files and own is not None and "/" in source.dataset:
            hub = _HF_DATASET.match(own)
            if hub is None:
                yield _at(source.setting, f"{trainer} loads the Hub dataset {show(source.dataset)}, but the plan's splits.{source.role}.path is {show(own)}: "
                          "the data checks read other data than the run uses; name the same data")
            elif hub.group("repo") != source.dataset:
                yield _at(source.setting, f"{trainer} loads the Hub dataset {show(source.dataset)}, but the plan's splits.{source.role}.path is in {show(hub.group('repo'))}: name the same dataset")
            elif _usable(source.revision) and source.revision is not None and not source.revision.default and hub.group("revision") and not _same_commit(source.revision.value, hub.group("revision")):
                yield _at(source.revision, f"{trainer} loads revision {show(source.revision.value)} of {show(source.dataset)}, but the plan's splits.{source.role}.path is at {show(hub.group('revision'))}: make them the same commit")
    yield from _split_names(ctx, run, planned)
    if run.random_eval is not None and _usable(run.random_eval) and isinstance(ctx.get("splits", "eval"), dict):
        value = run.random_eval.value
        yield _at(run.random_eval, f"{_key(run.random_eval)} {show(value)} holds out a random part of the training data for evaluation, but the plan evaluates on its own split "
                  "(splits.eval) behind a boundary: a random split has no group or time boundary. Set it to 0 and evaluate on the plan's eval split")


def _split_names(ctx: PlanContext, run: TrainerRun, planned: dict) -> Iterator[Problem]:
    train, test = run.train_split, run.eval_split
    if not (_usable(train) and _usable(test)) or train is None or test is None:
        return
    if train.value == test.value:
        yield _at(test, f"{_key(test)} is {show(test.value)}, the split the run trains on (dataset_train_split): it would evaluate on its training data")
        return
    for role, setting in (("train", train), ("eval", test)):
        hub = _HF_DATASET.match(planned.get(role, ""))
        word = _split_word(hub.group("file") or "") if hub else None
        if word is not None and str(setting.value) != word:
            yield _at(setting, f"{_key(setting)} is {show(setting.value)}, but the plan's splits.{role}.path {show(planned[role])} is the dataset's {show(word)} split: name the same split")


def reward_name(text: Any) -> str:
    """A grader id or name and a function name compare case-blind, `-` and `_` alike (`db-state` is `db_state`)."""
    return str(text).lower().replace("-", "_")


def _graders(ctx: PlanContext) -> dict[str, set[str]]:
    graders = ctx.get("graders")
    found: dict[str, set[str]] = {}
    for grader in graders if isinstance(graders, list) else []:
        if isinstance(grader, dict) and isinstance(grader.get("id"), str):
            names = {grader["id"]} | ({grader["name"]} if isinstance(grader.get("name"), str) else set())
            found[grader["id"]] = {reward_name(name) for name in names}
    return found


def _grader_type(ctx: PlanContext, grader_id: str) -> Any:
    graders = ctx.get("graders")
    for grader in graders if isinstance(graders, list) else []:
        if isinstance(grader, dict) and grader.get("id") == grader_id:
            return grader.get("type")
    return None


def _reward_drift(ctx: PlanContext, run: TrainerRun) -> Iterator[Problem]:
    reward_ids = ctx.get("reward", "graders")
    reward_ids = [gid for gid in reward_ids if isinstance(gid, str)] if isinstance(reward_ids, list) else []
    if ctx.get("method", "type") != "grpo" or (run.method is not None and run.method.value not in ("grpo", UNKNOWN)):
        return  # the rewards of a GRPO plan, when the run is GRPO too (another method is a finding of its own)
    trainer, graders = NAMES[run.trainer], _graders(ctx)
    used: set[str] = set()
    for reward in run.rewards:
        if not _usable(reward.setting):
            if reward.setting.value is UNKNOWN:
                used.update(reward_ids)  # unknown: not compared
            continue
        if reward.kind == "default":  # verl's own scorer per data_source: the plan's native graders
            others = [gid for gid in reward_ids if _grader_type(ctx, gid) != "native"]
            if others:
                yield _at(reward.setting, f"no custom_reward_function.path: {trainer} scores with its built-in reward for each data_source (a native grader), "
                          f"not with the plan's {', '.join(map(show, others))}; point custom_reward_function at the grader's code")
            used.update(reward_ids)
            continue
        if reward.kind == "unknown":
            continue  # the trainer cannot load it: PL901's
        matched = [gid for gid, names in graders.items() if names & {reward_name(name) for name in reward.names}]
        used.update(matched)
        if not matched:
            listed = ", ".join(map(show, reward_ids)) or "none"
            yield _at(reward.setting, f"the run scores with {show(reward.text)}, which no grader of the plan is (reward.graders: {listed}): "
                      "give the grader the function's name as its id or name, or score with the plan's grader")
        elif not set(matched) & set(reward_ids):
            yield _at(reward.setting, f"the run scores with {show(reward.text)}, the plan's grader {show(matched[0])}, which is not in reward.graders")
    missing = [gid for gid in reward_ids if gid not in used]
    if missing:
        route = REWARD_KEY[run.trainer]
        first = next((r.setting for r in run.rewards if r.kind != "default"), None)
        at = Setting(None, run.config, route, default=True) if first is None else Setting(None, first.document, first.route[: len(route)])
        many = len(missing) > 1
        yield _at(at, at_key=True, message=f"the plan's reward grader{'s' if many else ''} {', '.join(map(show, missing))} {'are' if many else 'is'} not among the run's rewards "
                  f"({'.'.join(route)}): the run would not score with {'them' if many else 'it'}")


_METHOD_WORDS = {"gae": "PPO", "dpo": "DPO", "kto": "KTO", "orpo": "ORPO", "ppo": "PPO", "sft": "SFT", "grpo": "GRPO"}


def _recipe_drift(ctx: PlanContext, run: TrainerRun) -> Iterator[Problem]:
    trainer = NAMES[run.trainer]
    method = ctx.get("method", "type")
    if run.method is not None and _usable(run.method) and isinstance(method, str) and method in ("sft", "grpo") and run.method.value != method:
        word = _METHOD_WORDS.get(str(run.method.value))
        said = f"{show(run.method.value)} ({word})" if word else show(run.method.value)
        where = "the launch command runs" if run.method.route == ("command",) else \
            f"the config leaves {_key(run.method)} at {trainer}'s default," if run.method.default else f"{_key(run.method)} makes it"
        yield _at(run.method, f"{where} {said}, but the plan's method.type is {show(method)}: the run would use another method than the one reviewed")
    adapter = ctx.get("method", "adapter")
    if run.adapter is not None and _usable(run.adapter) and isinstance(adapter, str) and adapter in ("lora", "full") and run.adapter.value != adapter:
        said = "a LoRA adapter" if run.adapter.value == "lora" else "all weights (no adapter)" if run.adapter.value == "full" else show(run.adapter.value)
        yield _at(run.adapter, f"the {trainer} config trains {said} ({_key(run.adapter)}), but the plan's method.adapter is {show(adapter)}")


def _launch_drift(ctx: PlanContext, run: TrainerRun) -> Iterator[Problem]:
    files = trainer_files(ctx)
    script = files.script if files is not None else None
    planned = ctx.get("run", "config")
    if script is None or script.trainer is None or not isinstance(planned, str):
        return
    trainer = NAMES[run.trainer]
    started = run.script_config
    if run.trainer == "verl":
        stem = posixpath.splitext(posixpath.basename(_normal(planned)))[0]
        if started is not None and started.value is None:
            yield _at(started, f"the launch command names no --config-name: {trainer} composes its own ppo_trainer.yaml, not run.config {show(planned)}")
        elif started is not None and posixpath.splitext(str(started.value))[0] != stem:
            yield _at(started, f"the launch command starts the config {show(started.value)}, but the plan's run.config is {show(planned)}")
        return
    if started is None:
        if script.command_span is not None:
            script.document.positions.values[("command",)] = script.command_span
            flag = "--config FILE" if run.trainer == "trl" else "the config file"
            yield Problem(("command",), f"the launch command passes no {flag}: {trainer} does not read run.config {show(planned)}", document=script.document)
    elif _usable(started) and isinstance(started.value, str) and _normal(started.value) != _normal(planned):
        yield _at(started, f"the launch command starts {show(started.value)}, but the plan's run.config is {show(planned)}")
