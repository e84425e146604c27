"""verl: the Hydra config `python3 -m verl.trainer.main_ppo` composes, as facts.

Read from verl's own source at v0.7.0 (commit f9c855f7cf04d603c9546bc01776c74806a879c1,
PyPI verl==0.7.0): `verl/trainer/config/ppo_trainer.yaml` with its defaults
list, flattened in `_generated_ppo_trainer.yaml` (the tree planlint ships),
`verl/trainer/config/algorithm.py` (AlgoConfig.adv_estimator) and
`verl/trainer/ppo/core_algos.py` (AdvantageEstimator), `custom_reward_function`
(path, name), and the launch scripts of `examples/grpo_trainer/*.sh`.

Hydra refuses an override of a key the composed config lacks (`Could not
override 'x'`), but merges any key a YAML adds without a word, and verl never
reads it: both are reported. What verl cannot pin: the model
(`actor_rollout_ref.model.path` has no revision key) unless the path is a Hub
cache snapshot, `.../models--ORG--NAME/snapshots/COMMIT`, which holds one.
"""

from __future__ import annotations

import copy
import difflib
import re
from pathlib import Path

from planlint.core.messages import show
from planlint.services.trainer_configs._documents import ConfigDocument, has_key, schema, unknown_keys, version_of
from planlint.services.trainer_configs._effective import Effective, file_list, known
from planlint.services.trainer_configs._facts import DataSource, KeyProblem, RewardRef, Setting, TrainerRun
from planlint.services.trainer_configs.launch_script import UNKNOWN, LaunchScript

# verl/trainer/ppo/core_algos.py AdvantageEstimator: the GRPO family among the estimators.
GRPO_ESTIMATORS = ("grpo", "grpo_passk", "grpo_vectorized")
SNAPSHOT = re.compile(r"models--(?P<org>[^/]+?)--(?P<name>[^/]+)/snapshots/(?P<commit>[0-9a-f]{40})(?:/|$)")
MODEL = ("actor_rollout_ref", "model", "path")
# Keys a running experiment may change: logging, checkpoints, the cluster, profiling (every other key decides the run, PL708).
OPERATIONS = ("trainer.logger", "trainer.project_name", "trainer.experiment_name", "trainer.save_freq", "trainer.test_freq", "trainer.default_local_dir",
              "trainer.default_hdfs_dir", "trainer.nnodes", "trainer.n_gpus_per_node", "trainer.resume_", "trainer.val_before_train", "trainer.log_val_generations",
              "trainer.rollout_data_dir", "trainer.validation_data_dir", "trainer.max_actor_ckpt_to_keep", "trainer.max_critic_ckpt_to_keep",
              "trainer.ray_wait_register_center_timeout", "trainer.del_local_ckpt_after_load", "trainer.esi_redundant_time", "global_profiler", "ray_kwargs", "hydra")


def _tree() -> dict:
    spec = schema("verl")
    tree = dict(spec["tree"])
    for key in spec["hydra"]:
        tree[key] = {}
    return tree


def _merged(tree: dict, data: dict) -> dict:
    """The tree with the YAML's own keys added: what an override may name without `+`."""
    merged = copy.deepcopy(tree)
    stack: list[tuple[dict, dict]] = [(merged, data)]
    while stack:
        node, values = stack.pop()
        for key, value in values.items():
            below = node.get(key)
            if isinstance(below, dict) and not below:
                continue  # free keys below
            if isinstance(value, dict):
                if not isinstance(below, dict):
                    below = node[key] = {}
                    if not value:
                        continue
                stack.append((below, value))
            elif key not in node:
                node[key] = None
    return merged


def _key_problems(run: TrainerRun, effective: Effective, script: LaunchScript | None) -> None:
    tree = _tree()
    for route, keys in unknown_keys(effective.data, tree):
        near = difflib.get_close_matches(str(route[-1]), keys, n=1)
        hint = f" (did you mean {show(near[0])}?)" if near else ""
        where = ".".join(str(part) for part in route[:-1]) or "the top level"
        run.problems.append(KeyProblem(run.config, route, f"{show(route[-1])} is not a key of {where} in verl's PPO trainer config ({version_of('verl')}, ppo_trainer.yaml){hint}: "
                                       "Hydra merges it without a word and verl never reads it", at_key=True))
    if script is None:
        return
    merged = _merged(tree, effective.data)
    for override in script.overrides:
        if override.op in ("+", "++"):
            continue  # adding a key on purpose
        if not has_key(merged, override.route):
            dotted = ".".join(str(part) for part in override.route)
            run.problems.append(KeyProblem(script.document, override.route, f"{dotted} is not a key of verl's PPO trainer config ({version_of('verl')}): Hydra refuses the override "
                                           f"(\"Could not override '{dotted}'\"); fix the key, or write +{dotted}=... to add one verl reads", at_key=True))


def _files(run: TrainerRun, effective: Effective, route: tuple, role: str, default: str) -> None:
    setting = effective.get_or_default(route, default)
    if not known(setting):
        return
    listed = file_list(setting.value)
    if listed is not None:
        run.sources.append(DataSource(role, setting, files=listed))


def _model(run: TrainerRun, effective: Effective) -> None:
    run.model_can_pin = False
    setting = effective.get_or_default(MODEL, "~/models/deepseek-llm-7b-chat")  # ppo_trainer.yaml's default
    if not known(setting) or not isinstance(setting.value, str):
        run.model = setting if not known(setting) else None
        return
    snapshot = SNAPSHOT.search(setting.value)
    if snapshot is not None:
        run.model = Setting(f"{snapshot['org']}/{snapshot['name']}", setting.document, setting.route, setting.default)
        run.model_revision = Setting(snapshot["commit"], setting.document, setting.route, setting.default)
    else:
        run.model = setting


def _rewards(run: TrainerRun, effective: Effective, root: Path) -> None:
    path = effective.get(("custom_reward_function", "path"))
    name = effective.get_or_default(("custom_reward_function", "name"), "compute_score")
    if path is None or path.value is None:
        where = path or effective.default(("custom_reward_function", "path"), None)
        run.rewards.append(RewardRef("verl's built-in reward by data_source", "default", where))
        return
    if path.value is UNKNOWN or not isinstance(path.value, str) or name.value is UNKNOWN:
        return
    function = name.value if isinstance(name.value, str) else "compute_score"
    stem = Path(path.value).stem
    relative = not path.value.startswith(("/", "\\", "~")) and ".." not in path.value.replace("\\", "/").split("/")
    file = root / path.value if relative else None  # the rules say why another path cannot be used (PL901)
    run.rewards.append(RewardRef(f"{path.value}:{function}", "file", path, names=(function, stem, path.value, f"{path.value}:{function}"), file=file))


def read(config: ConfigDocument, script: LaunchScript | None, root: Path) -> TrainerRun:
    run = TrainerRun("verl", config, script.document if script is not None else None)
    if config.data is None:
        return run
    effective = Effective(config, script)
    _key_problems(run, effective, script)
    _model(run, effective)
    _files(run, effective, ("data", "train_files"), "train", "~/data/rlhf/gsm8k/train.parquet")
    _files(run, effective, ("data", "val_files"), "eval", "~/data/rlhf/gsm8k/test.parquet")
    _rewards(run, effective, root)
    estimator = effective.get_or_default(("algorithm", "adv_estimator"), "gae")  # AlgoConfig's default
    if known(estimator) and isinstance(estimator.value, str):
        method = "grpo" if estimator.value in GRPO_ESTIMATORS else estimator.value
        run.method = Setting(method, estimator.document, estimator.route, estimator.default)
    rank = effective.get_or_default(("actor_rollout_ref", "model", "lora_rank"), 0)
    if known(rank):
        lora = isinstance(rank.value, int) and not isinstance(rank.value, bool) and rank.value > 0
        run.adapter = Setting("lora" if lora else "full", rank.document, rank.route, rank.default)
    seed = effective.get(("data", "seed"))
    run.seed = seed if seed is not None and seed.value is not None else None
    if script is not None:
        if script.config_name is not None:
            run.script_config = Setting(script.config_name[0], script.document, ("config-name",))
            script.document.positions.values[("config-name",)] = script.config_name[1]
        elif script.trainer == "verl" and script.command_span is not None:
            script.document.positions.values[("command",)] = script.command_span
            run.script_config = Setting(None, script.document, ("command",))  # verl's own ppo_trainer.yaml
    return run
