"""TRL: the YAML `trl sft|grpo --config FILE` reads (TrlParser), as facts.

Read from TRL's own source at v1.9.0 (commit 35def3ee000a87f6839e66f4b7749b06274ed1b3,
PyPI trl==1.9.0): `trl/scripts/utils.py` (TrlParser, ScriptArguments,
DatasetConfig, DatasetMixtureConfig), `trl/trainer/model_config.py` (ModelConfig),
`trl/trainer/sft_config.py` / `grpo_config.py` (over transformers'
TrainingArguments), `trl/scripts/sft.py` / `grpo.py` (GRPOScriptArguments:
`reward_funcs`, `reward_model_name_or_path`; how the dataset is loaded) and
`trl/cli/commands/training.py` (a YAML key no dataclass takes goes to
`accelerate launch`, which refuses what it does not know either).

What TRL cannot pin: a Hub dataset (`dataset_name`, `datasets[].path`) has no
revision key; only a data file named by a URI that holds one
(`hf://datasets/ORG/NAME@COMMIT/FILE`) or a file in the repository is pinned.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from planlint.core.messages import show
from planlint.services.trainer_configs._documents import ConfigDocument, schema, unknown_keys, version_of
from planlint.services.trainer_configs._effective import Effective, file_list, is_hub_id, known, module_file
from planlint.services.trainer_configs._facts import DataSource, KeyProblem, RewardRef, Setting, TrainerRun
from planlint.services.trainer_configs.launch_script import UNKNOWN, LaunchScript

# trl/scripts/grpo.py main(): the names `reward_funcs` takes besides a dotted import path.
BUILTIN_REWARDS = ("accuracy_reward", "reasoning_accuracy_reward", "think_format_reward", "get_soft_overlong_punishment")
COMMAND_ROUTE = ("command",)
# Keys a running experiment may change (where it logs and saves, the environment); every other key decides the run (PL708).
OPERATIONS = ("output_dir", "logging_", "log_", "report_to", "run_name", "project", "save_", "push_to_hub", "hub_", "resume_from_checkpoint",
              "overwrite_output_dir", "dataloader_", "env", "accelerate_config", "num_processes", "num_machines", "main_process_", "machine_rank")  # where a finding about the launch command's subcommand goes (the script's positions)


def _method(run: TrainerRun, effective: Effective, script: LaunchScript | None) -> str | None:
    """The subcommand: the script's `trl NAME` when there is one, else told by GRPO-only or SFT-only keys."""
    commands = schema("trl")["commands"]
    if script is not None and script.command is not None and script.command_span is not None:
        script.document.positions.values[COMMAND_ROUTE] = script.command_span
        run.method = Setting(script.command, script.document, COMMAND_ROUTE)
        return script.command
    grpo_only = set(commands["grpo"]) - set(commands["sft"])
    sft_only = set(commands["sft"]) - set(commands["grpo"])
    keys = [route[0] for route in effective.keys()]
    for key in keys:
        if key in grpo_only:
            setting = effective.get((key,))
            assert setting is not None
            run.method = Setting("grpo", setting.document, setting.route)
            return "grpo"
    for key in keys:
        if key in sft_only:
            setting = effective.get((key,))
            assert setting is not None
            run.method = Setting("sft", setting.document, setting.route)
            return "sft"
    return None


def _known_keys(method: str | None) -> set[str] | None:
    spec = schema("trl")
    commands = spec["commands"]
    if method is None:
        keys = set(commands["sft"]) | set(commands["grpo"])
    elif method in commands:
        keys = set(commands[method])
    else:
        return None
    return keys | set(spec["launcher"]) | set(spec["reserved"])


def _key_problems(run: TrainerRun, effective: Effective, script: LaunchScript | None, method: str | None) -> None:
    keys = _known_keys(method)
    command = f"trl {method}" if method else "trl sft or trl grpo"
    if keys is None:
        run.notes.append(f"{run.config.path}: `trl {method}`: planlint knows the keys of trl sft and trl grpo ({version_of('trl')}) only; the keys were not checked")
        return
    tree = {key: None for key in keys}
    for route, known_keys in unknown_keys(effective.data, tree):
        key = str(route[0])
        near = difflib.get_close_matches(key, known_keys, n=1)
        hint = f" (did you mean {show(near[0])}?)" if near else ""
        run.problems.append(KeyProblem(run.config, route, f"{show(key)} is not a key of `{command}` ({version_of('trl')}: its script's dataclasses and accelerate launch's options){hint}: "
                                       "TRL hands it to accelerate launch, which refuses it", at_key=True))
    if script is not None:
        for override in script.overrides:
            key = str(override.route[0])
            if key not in keys:
                near = difflib.get_close_matches(key, sorted(keys), n=1)
                hint = f" (did you mean --{near[0]}?)" if near else ""
                run.problems.append(KeyProblem(script.document, override.route, f"--{key} is not an option of `{command}` ({version_of('trl')}){hint}: the launch fails on it", at_key=True))
    datasets = effective.data.get("datasets")
    if datasets is not None and not (isinstance(datasets, list) and all(isinstance(item, dict) for item in datasets)):
        run.problems.append(KeyProblem(run.config, ("datasets",), "datasets must be a list of mappings (path, name, data_files, split, ...), as TRL's DatasetMixtureConfig reads it"))
    elif isinstance(datasets, list):
        fields = schema("trl")["dataset"]
        for index, item in enumerate(datasets):
            if "path" not in item:
                run.problems.append(KeyProblem(run.config, ("datasets", index, "path"), f"datasets[{index}] has no path: TRL's DatasetConfig requires one", missing=True))
            for key in item:
                if key not in fields:
                    run.problems.append(KeyProblem(run.config, ("datasets", index, key), f"{show(key)} is not a key of a TRL dataset entry (known: {', '.join(fields)})", at_key=True))
    env = effective.data.get("env")
    if env is not None and not isinstance(env, dict):
        run.problems.append(KeyProblem(run.config, ("env",), "env must be a mapping of environment variables (TrlParser refuses anything else)"))


def _sources(run: TrainerRun, effective: Effective, root: Path) -> None:
    datasets = effective.get(("datasets",))
    if datasets is not None and isinstance(datasets.value, list) and datasets.value:
        for index, item in enumerate(datasets.value):
            if not isinstance(item, dict):
                continue
            at = Setting(item, datasets.document, datasets.route + (index,))
            split = item.get("split", "train")
            files: Any = item.get("data_files")
            if isinstance(files, dict):
                files = files.get(split)
            listed = file_list(files)
            path = item.get("path")
            if listed is not None:
                run.sources.append(DataSource("train", Setting(files, at.document, at.route + ("data_files",) + ((split,) if isinstance(item.get("data_files"), dict) else ())), files=listed, can_pin=False))
            elif isinstance(path, str):
                run.sources.append(DataSource("train", Setting(path, at.document, at.route + ("path",)), dataset=path, can_pin=False))
        test_size = effective.get(("test_split_size",))
        if known(test_size) and test_size is not None and isinstance(test_size.value, (int, float)) and not isinstance(test_size.value, bool) and test_size.value > 0:
            run.random_eval = test_size
        return
    name = effective.get(("dataset_name",))
    if known(name) and name is not None and isinstance(name.value, str):
        run.sources.append(DataSource("train", name, dataset=name.value, can_pin=False))
        run.train_split = effective.get_or_default(("dataset_train_split",), "train")
        run.eval_split = effective.get_or_default(("dataset_test_split",), "test")
        if name.value and not is_hub_id(name.value, root, run.looked):
            run.notes.append(f"{name.document.path}: dataset_name {show(name.value)} is not a Hub id: planlint does not work out which files the datasets library reads from it")


def _rewards(run: TrainerRun, effective: Effective, root: Path) -> None:
    funcs = effective.get(("reward_funcs",))
    if known(funcs) and funcs is not None:
        values = funcs.value if isinstance(funcs.value, list) else [funcs.value]
        for index, text in enumerate(values):
            if not isinstance(text, str):
                continue
            at = Setting(text, funcs.document, funcs.route + ((index,) if isinstance(funcs.value, list) else ()))
            if text in BUILTIN_REWARDS:
                run.rewards.append(RewardRef(text, "builtin", at, names=(text,)))
            elif "." in text:
                module, function = text.rsplit(".", 1)
                run.rewards.append(RewardRef(text, "module", at, names=(text, function), file=module_file(module, root, run.looked)))
            else:
                run.rewards.append(RewardRef(text, "unknown", at, names=(text,)))
    model = effective.get(("reward_model_name_or_path",))
    if known(model) and model is not None and isinstance(model.value, str) and model.value:
        run.rewards.append(RewardRef(model.value, "model", model, names=(model.value,)))


def read(config: ConfigDocument, script: LaunchScript | None, root: Path) -> TrainerRun:
    run = TrainerRun("trl", config, script.document if script is not None else None)
    if config.data is None:
        return run
    effective = Effective(config, script)
    method = _method(run, effective, script)
    _key_problems(run, effective, script, method)
    run.model = effective.get(("model_name_or_path",))
    run.model_revision = effective.get_or_default(("model_revision",), "main")  # ModelConfig's default
    _sources(run, effective, root)
    _rewards(run, effective, root)
    peft = effective.get(("use_peft",))
    if peft is None:
        run.adapter = effective.default(("use_peft",), "full")
    elif peft.value is not UNKNOWN:
        run.adapter = Setting("lora" if peft.value in (True, "true", "True", "1") else "full", peft.document, peft.route)
    run.seed = effective.get_or_default(("seed",), 42)  # TrainingArguments' default
    if script is not None and script.config is not None:
        run.script_config = Setting(script.config[0], script.document, ("config",))
        script.document.positions.values[("config",)] = script.config[1]
    return run
