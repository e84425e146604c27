"""Print, as JSON, the keys a trainer's own code accepts in its config: run INSIDE a venv
that has the trainer installed (never in planlint's own environment: planlint never
imports a trainer).

    python scripts/trainer_schema.py trl|verl|axolotl

The output is what planlint ships as src/planlint/data/trainer-NAME.json (see
scripts/update_trainer_schemas.py, which writes it) and what
tests/test_trainer_agreement.py compares the shipped file with:

* trl: for each subcommand (`trl sft`, `trl grpo`), the `dest` of every action of
  the parser its script builds (`trl/scripts/<cmd>.py: make_parser()`), which is
  exactly what `TrlParser.set_defaults_with_config` consumes from the YAML; the
  rest of the YAML goes to `accelerate launch` (trl/cli/commands/training.py), so
  the dests of accelerate's launch parser too; `DatasetConfig`'s fields for
  `datasets[]`.
* verl: the config `verl.trainer.main_ppo` composes (Hydra, `ppo_trainer.yaml`
  with its defaults list), as a tree of keys; `{}` marks a mapping whose keys are
  free (an empty mapping or a null in the composed config).
* axolotl: the fields (and aliases) of the pydantic model `validate_config` checks
  (`AxolotlInputConfig`), with the fields of the nested models (the dataset
  entries, `trl:`, ...), as a tree of keys, and the fields it requires.
"""

from __future__ import annotations

import json
import sys
import typing
from importlib.metadata import version
from typing import Any


def _trl() -> dict:
    from accelerate.commands.launch import launch_command_parser

    from trl.scripts import grpo, sft
    from trl.scripts.utils import DatasetConfig

    commands = {}
    for name, module in (("sft", sft), ("grpo", grpo)):
        parser = module.make_parser()
        commands[name] = sorted({action.dest for action in parser._actions if action.dest != "help"})
    launcher = sorted({action.dest for action in launch_command_parser()._actions if action.dest not in ("help", "training_script", "training_script_args")})
    return {
        "trainer": "trl",
        "package": f"trl=={version('trl')}",
        "with": [f"transformers=={version('transformers')}", f"accelerate=={version('accelerate')}"],
        "commands": commands,
        "launcher": launcher + ["accelerate_config"],  # trl/cli/accelerate_config.py
        "reserved": ["env"],  # TrlParser.parse_args_and_config: environment variables
        "dataset": sorted(DatasetConfig.__dataclass_fields__),
    }


def _open_tree(node: Any) -> Any:
    if isinstance(node, dict):
        if not node:
            return {}
        return {str(key): _open_tree(value) for key, value in node.items()}
    if node is None:
        return {}
    return None


def _verl() -> dict:
    import os
    import sysconfig

    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    directory = os.path.join(sysconfig.get_paths()["purelib"], "verl", "trainer", "config")
    with initialize_config_dir(config_dir=directory, version_base=None):
        composed = OmegaConf.to_container(compose(config_name="ppo_trainer"), resolve=False)
    return {
        "trainer": "verl",
        "package": f"verl=={version('verl')}",
        "with": [f"hydra-core=={version('hydra-core')}", f"omegaconf=={version('omegaconf')}"],
        "tree": _open_tree(composed),
        "hydra": ["defaults", "hydra"],
    }


def _models(annotation: Any) -> list:
    from pydantic import BaseModel

    found = []
    stack = [annotation]
    while stack:
        item = stack.pop()
        if isinstance(item, type) and issubclass(item, BaseModel):
            found.append(item)
            continue
        stack.extend(typing.get_args(item))
    return found


def _model_tree(model: Any, depth: int = 0) -> dict:
    tree: dict = {}
    for name, info in model.model_fields.items():
        nested = _models(info.annotation)
        if nested and depth < 3:
            keys: dict = {}
            for inner in nested:
                keys.update(_model_tree(inner, depth + 1))
            value: Any = keys
        else:
            value = None
        for key in {name, info.alias, info.validation_alias if isinstance(info.validation_alias, str) else None} - {None}:
            tree[key] = value
    return dict(sorted(tree.items()))


def _axolotl() -> dict:
    from axolotl.utils.schemas.config import AxolotlInputConfig
    from axolotl.utils.schemas.datasets import DPODataset, KTODataset, SFTDataset

    tree = _model_tree(AxolotlInputConfig)
    return {
        "trainer": "axolotl",
        "package": f"axolotl=={version('axolotl')}",
        "with": [f"pydantic=={version('pydantic')}"],
        "tree": tree,
        "required": sorted(name for name, info in AxolotlInputConfig.model_fields.items() if info.is_required()),
        # validate_config (utils/config/__init__.py) reads each dataset entry as one of these, by `rl`
        "datasets": {"sft": sorted(_model_tree(SFTDataset)), "dpo": sorted(_model_tree(DPODataset)), "kto": sorted(_model_tree(KTODataset))},
    }


if __name__ == "__main__":
    dump = {"trl": _trl, "verl": _verl, "axolotl": _axolotl}[sys.argv[1]]()
    json.dump(dump, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")
