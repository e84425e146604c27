"""axolotl: the YAML `axolotl train FILE` reads, as facts.

Read from axolotl's own source at v0.18.0 (commit 2f5cb9da62a0fe763a1ddeb7798fc9acb2f4a417,
PyPI axolotl==0.18.0): the pydantic schema under `src/axolotl/utils/schemas/`
(`config.py` AxolotlInputConfig, `model.py` ModelInputConfig with
`revision_of_model` and its alias `model_revision`, `datasets.py` SFTDataset /
DPODataset / KTODataset with `path`, `revision`, `split`, `data_files`,
`trl.py` TRLConfig with `reward_funcs`), `utils/config/__init__.py`
validate_config (which dataset model reads each entry, by `rl`),
`cli/utils/args.py` (the `--key value` options of `axolotl train`), and the
configs of `examples/` and `docs/grpo.qmd`.

pydantic's default drops a key the schema lacks without a word, so a
misspelt `revison_of_model` silently trains the newest revision: planlint
reports such keys. With `plugins:`, the plugins add keys planlint does not
know, and unknown top-level keys are then a note, not a finding.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from planlint.core.messages import show
from planlint.services.trainer_configs._documents import ConfigDocument, has_key, schema, unknown_keys, version_of
from planlint.services.trainer_configs._effective import Effective, file_list, in_repository, known, looks_like_file, module_file
from planlint.services.trainer_configs._facts import DataSource, KeyProblem, RewardRef, Setting, TrainerRun
from planlint.services.trainer_configs.launch_script import LaunchScript

# Keys a running experiment may change: logging, checkpoints, hub uploads (every other key decides the run, PL708).
OPERATIONS = ("output_dir", "wandb_", "use_wandb", "mlflow_", "use_mlflow", "comet_", "use_comet", "trackio_", "logging_steps", "save_", "saves_per_epoch",
              "hub_", "push_dataset_to_hub", "dataset_prepared_path", "resume_from_checkpoint", "auto_resume_from_checkpoints", "eval_steps", "evals_per_epoch",
              "dataset_num_proc", "dataloader_")
_DATASET_MODEL = {"dpo": "dpo", "ipo": "dpo", "simpo": "dpo", "kto": "kto"}  # validate_config; else SFTDataset


def _key_problems(run: TrainerRun, effective: Effective, script: LaunchScript | None) -> None:
    spec = schema("axolotl")
    tree = dict(spec["tree"])
    rl = effective.data.get("rl")
    entry_keys = spec["datasets"][_DATASET_MODEL.get(rl, "sft") if isinstance(rl, str) else "sft"]
    for name in ("datasets", "test_datasets"):
        tree[name] = None  # checked below against the entry model validate_config uses
    plugins = effective.data.get("plugins")
    for route, keys in unknown_keys(effective.data, tree):
        if plugins and len(route) == 1:
            continue
        near = difflib.get_close_matches(str(route[-1]), keys, n=1)
        hint = f" (did you mean {show(near[0])}?)" if near else ""
        run.problems.append(KeyProblem(run.config, route, f"{show(route[-1])} is not a key of axolotl's config schema ({version_of('axolotl')}){hint}: axolotl drops it without a word", at_key=True))
    for key in spec["required"]:
        if key not in effective.data and (script is None or not any(o.route == (key,) for o in script.overrides)):
            run.problems.append(KeyProblem(run.config, (key,), f"{key} is missing: axolotl's config schema ({version_of('axolotl')}) requires it", missing=True))
    if plugins:
        run.notes.append(f"{run.config.path}: plugins add keys planlint does not know: its top-level keys were not checked against axolotl's schema")
    for name in ("datasets", "test_datasets"):
        entries = effective.data.get(name)
        if entries is None:
            continue
        if not isinstance(entries, list) or not all(isinstance(item, dict) for item in entries):
            run.problems.append(KeyProblem(run.config, (name,), f"{name} must be a list of mappings (path, type, split, revision, ...)"))
            continue
        for index, item in enumerate(entries):
            for key in item:
                if key not in entry_keys:
                    near = difflib.get_close_matches(str(key), entry_keys, n=1)
                    hint = f" (did you mean {show(near[0])}?)" if near else ""
                    run.problems.append(KeyProblem(run.config, (name, index, key), f"{show(key)} is not a key of an axolotl dataset entry ({version_of('axolotl')}){hint}: axolotl drops it without a word", at_key=True))
    if script is not None:
        for override in script.overrides:
            if not (plugins and len(override.route) == 1) and not has_key(tree, override.route):
                run.problems.append(KeyProblem(script.document, override.route, f"--{'.'.join(str(p) for p in override.route).replace('_', '-')} is not an option of axolotl train ({version_of('axolotl')})", at_key=True))


def _sources(run: TrainerRun, effective: Effective, root: Path) -> None:
    for name, role in (("datasets", "train"), ("test_datasets", "eval")):
        entries = effective.get((name,))
        if entries is None or not isinstance(entries.value, list):
            continue
        for index, item in enumerate(entries.value):
            if not isinstance(item, dict):
                continue
            route = entries.route + (index,)
            revision = Setting(item["revision"], entries.document, route + ("revision",)) if "revision" in item else Setting(None, entries.document, route + ("revision",), default=True)
            listed = file_list(item.get("data_files"))
            path = item.get("path")
            if listed is not None:
                run.sources.append(DataSource(role, Setting(item.get("data_files"), entries.document, route + ("data_files",)), files=listed, revision=revision))
            elif isinstance(path, str):
                at = Setting(path, entries.document, route + ("path",))
                if looks_like_file(path) or in_repository(path, root, run.looked):
                    run.sources.append(DataSource(role, at, files=(path,), revision=revision))
                else:
                    run.sources.append(DataSource(role, at, dataset=path, revision=revision))


def _rewards(run: TrainerRun, effective: Effective, root: Path) -> None:
    funcs = effective.get(("trl", "reward_funcs"))
    if not known(funcs) or funcs is None:
        return
    values = funcs.value if isinstance(funcs.value, list) else [funcs.value]
    for index, text in enumerate(values):
        if not isinstance(text, str):
            continue
        at = Setting(text, funcs.document, funcs.route + ((index,) if isinstance(funcs.value, list) else ()))
        if "." in text:
            module, function = text.rsplit(".", 1)
            run.rewards.append(RewardRef(text, "module", at, names=(text, function), file=module_file(module, root, run.looked)))
        else:
            run.rewards.append(RewardRef(text, "unknown", at, names=(text,)))


def read(config: ConfigDocument, script: LaunchScript | None, root: Path) -> TrainerRun:
    run = TrainerRun("axolotl", config, script.document if script is not None else None)
    if config.data is None:
        return run
    effective = Effective(config, script)
    _key_problems(run, effective, script)
    run.model = effective.get(("base_model",))
    revision = effective.get(("revision_of_model",)) or effective.get(("model_revision",))
    run.model_revision = revision if revision is not None else effective.default(("revision_of_model",), None)
    _sources(run, effective, root)
    val = effective.get(("val_set_size",))
    if known(val) and val is not None and isinstance(val.value, (int, float)) and not isinstance(val.value, bool) and val.value > 0:
        run.random_eval = val
    _rewards(run, effective, root)
    rl = effective.get(("rl",))
    if rl is None or rl.value is None:
        run.method = effective.default(("rl",), "sft")
    elif known(rl) and isinstance(rl.value, str):
        run.method = rl
    adapter = effective.get(("adapter",))
    if adapter is None or adapter.value is None:
        run.adapter = effective.default(("adapter",), "full")
    elif known(adapter) and isinstance(adapter.value, str):
        run.adapter = Setting("lora" if adapter.value in ("lora", "qlora") else adapter.value, adapter.document, adapter.route)
    run.seed = effective.get(("seed",))
    if script is not None and script.config is not None:
        run.script_config = Setting(script.config[0], script.document, ("config",))
        script.document.positions.values[("config",)] = script.config[1]
    return run
