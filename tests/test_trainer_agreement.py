"""planlint's reading of TRL, verl and axolotl configs, compared with the trainers' own code.

planlint never imports a trainer: it ships the keys each trainer accepts as
data (planlint/data/trainer-NAME.json) and reads configs with its own YAML
loader. These tests install the trainers at the pinned versions, from the
package index, into one venv of their own (tests/tool_venv.py), and ask the
real code:

1. the keys: scripts/trainer_schema.py, run in that venv, prints what each
   trainer's own parser or schema accepts; it must equal the shipped file;
2. the fixtures: every trainer config of the cases (tests/fixtures/trainers/,
   the upstream examples among them) and the configs `planlint init
   --trainer` writes (blanks filled) go through the trainer's own entry
   point, and planlint must refuse (a PL901 from the trainer's schema) exactly
   those the trainer refuses, or drops without a word:
   * TRL 1.9.0: `make_parser()` of `trl/scripts/{sft,grpo}.py` and
     `TrlParser.parse_args_and_config`, then accelerate's launch parser over
     what remains, as `trl sft|grpo` does (trl/cli/commands/training.py);
   * verl 0.7.0: Hydra composes the YAML over verl's own
     `verl/trainer/config/ppo_trainer.yaml` with the script's overrides, as
     `verl.trainer.main_ppo` does; a key the composed config has and
     ppo_trainer.yaml lacks is one verl never reads;
   * axolotl 0.18.0: `axolotl.utils.config.validate_config`, and the keys the
     pydantic models drop (not among their fields or aliases).

What is installed, and why (the venv's docstring, so to speak). The schemas
need only their packages' Python code, not their whole dependency trees (vLLM,
flash-attn, deepspeed, ray, wandb, ...), so every package is installed with
`--no-deps` at a pinned version, and the list below is exactly what the
config classes import: TRL's TrainingArguments-based dataclasses need
transformers and, to be instantiated (TrlParser does), torch; accelerate's
launch parser is part of `trl sft`; axolotl's schema imports accelerate,
transformers and PIL; verl's config is Hydra YAML (hydra-core, omegaconf),
read from the installed package without importing it (verl/__init__ imports
torch and tensordict for its DataProto). torch is the CPU build 2.13.0 that
lies on this machine's disk (`pip install torch==2.13.0` takes it; any other
torch would download a CUDA build of several GB); axolotl 0.18.0 asks for
torch<=2.12.1, which --no-deps lets pass: its schema does not depend on
torch's version. Measured on this 2-core machine: the first build of the venv
takes about 60 s and 1.3 GB (torch is most of it); after that the venv is
reused (tests/.tool-venvs/, keyed by this list) and the three tests take a
few seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from test_trainer_configs import CASES, read_case
from tool_venv import tool_python

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = [
    "--no-deps",
    "trl==1.9.0", "transformers==5.14.1", "accelerate==1.13.0", "torch==2.13.0",
    "axolotl==0.18.0", "pydantic==2.12.5", "pydantic_core==2.41.5", "annotated-types==0.8.0", "typing-inspection==0.4.5", "pillow==13.0.0", "addict==2.4.0",
    "verl==0.7.0", "hydra-core==1.3.8", "omegaconf==2.3.1", "antlr4-python3-runtime==4.9.3",
    "huggingface_hub==1.17.0", "hf-xet==1.8.0", "tokenizers==0.22.2", "safetensors==0.8.0", "numpy==2.4.6", "packaging==26.4", "PyYAML==6.0.4",
    "regex==2026.11.19", "tqdm==4.70.1", "filelock==4.3.1", "fsspec==2026.9.0", "httpx==0.28.1", "httpcore==1.0.9", "h11==0.16.0",
    "anyio==4.16.0", "idna==3.20", "certifi==2026.10.19.post1", "typer==0.25.1", "click==8.5.1", "shellingham==1.5.4", "rich==15.0.0",
    "markdown-it-py==4.3.0", "mdurl==0.1.2", "Pygments==2.21.0", "annotated-doc==0.0.7",
    "sympy==1.14.0", "mpmath==1.3.0", "networkx==3.6.1", "Jinja2==3.1.6", "MarkupSafe==3.0.4", "psutil==7.2.2", "typing_extensions==4.16.0",
]


@pytest.fixture(scope="module")
def python() -> Path:
    return tool_python("trainers", REQUIREMENTS, min_python=(3, 11))


def _run(python: Path, code: str, *args: str) -> str:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"})
    proc = subprocess.run([str(python), "-c", code, *args], capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


# --------------------------------------------------------------------------- 1. the keys


@pytest.mark.parametrize("trainer", ["trl", "verl", "axolotl"])
def test_the_shipped_keys_are_the_trainers_own(python, trainer):
    dumped = json.loads(_run(python, (ROOT / "scripts" / "trainer_schema.py").read_text(encoding="utf-8"), trainer))
    shipped = json.loads((ROOT / "src" / "planlint" / "data" / f"trainer-{trainer}.json").read_text(encoding="utf-8"))
    dumped.pop("with"), shipped.pop("with")  # the versions of what was beside it: informative only
    assert dumped == shipped, (
        f"planlint/data/trainer-{trainer}.json is not what {shipped['package']} accepts: regenerate it with "
        f"{python} scripts/trainer_schema.py {trainer} > src/planlint/data/trainer-{trainer}.json"
    )


# --------------------------------------------------------------------------- 2. the fixtures


def _configs(trainer: str, tmp_path: Path) -> list[tuple[str, Path, Path | None]]:
    """(name, config, script) of every case's config for `trainer`, and of init's, written out."""
    found = []
    for case in [c for c in CASES if c.parent.name == trainer]:
        _, files, _ = read_case(case)
        root = tmp_path / case.stem
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        configs = [root / rel for rel in files if rel.startswith(f"configs/{trainer}/") and rel.endswith((".yaml", ".yml"))]
        scripts = [root / rel for rel in files if rel.startswith(f"configs/{trainer}/") and rel.endswith(".sh")]
        for config in configs:
            found.append((f"{case.stem}/{config.name}", config, scripts[0] if scripts else None))
    found += _init_configs(trainer, tmp_path / "init")
    return found


def _init_configs(trainer: str, root: Path) -> list[tuple[str, Path, Path | None]]:
    """The configs `planlint init --trainer` writes, with their blanks filled as a user would."""
    from planlint.scaffold import trainer_configs

    filled = {"<hub-cache>/models--TODO-org--TODO-model/snapshots/TODO-commit": "/models/hub/models--Qwen--Qwen3-8B/snapshots/" + "9f1c2a7b" * 5,
              "TODO-org/TODO-model": "Qwen/Qwen3-8B", "TODO-commit": "9f1c2a7b" * 5, "<your-reward-file.py>": "rewards.py"}
    found = []
    for method in ("grpo",) if trainer == "verl" else ("grpo", "sft"):
        files = {}
        for rel, text in trainer_configs(trainer, method, f"init-{method}").items():
            for blank, value in filled.items():
                text = text.replace(blank, value)
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
            files[rel] = root / rel
        config = next(path for rel, path in files.items() if rel.endswith(".yaml"))
        script = next(path for rel, path in files.items() if rel.endswith(".sh"))
        found.append((f"init/{config.name}", config, script))
    return found


def _planlint_verdicts(trainer: str, configs: list) -> dict[str, list[str]]:
    """What planlint's reader says the trainer's schema refuses, per config: the KeyProblems' messages."""
    from planlint.core.loader import Limits
    from planlint.services.trainer_configs import read_config, read_run, read_script

    verdicts = {}
    for name, config, script in configs:
        document = read_config(config, name, trainer, Limits())
        launch = read_script(script, "script", trainer, Limits()) if script is not None else None
        run = read_run(trainer, document, launch, config.parent)
        verdicts[name] = [problem.message for problem in run.problems] + ([document.error[0]] if document.error else [])
    return verdicts


def _compare(planlint: dict[str, list[str]], trainer: dict[str, str | None]) -> None:
    disagree = {name: (planlint[name], trainer[name]) for name in planlint if bool(planlint[name]) != (trainer[name] is not None)}
    assert not disagree, json.dumps(disagree, indent=1)
    assert any(planlint.values()) and not all(planlint.values())  # both verdicts occur


_TRL = textwrap.dedent(
    """
    import json, sys
    from accelerate.commands.launch import launch_command_parser
    from trl.cli.accelerate_config import resolve_accelerate_config_argument
    from trl.scripts import grpo, sft
    out = {}
    for name, path, command, flags in json.loads(sys.argv[1]):
        parser = {"sft": sft, "grpo": grpo}[command].make_parser()
        try:
            # `--use_cpu true`: this machine has no GPU, and TrainingArguments refuses bf16 without one.
            *_, from_config, from_cli = parser.parse_args_and_config(
                ["--config", path, *flags, "--use_cpu", "true"], return_remaining_strings=True, separate_remaining_strings=True)
            launch_command_parser().parse_args(resolve_accelerate_config_argument(from_config + from_cli) + ["train.py"])
        except SystemExit as exc:
            out[name] = "argparse refused it (exit %s)" % exc.code
        except Exception as exc:
            out[name] = type(exc).__name__ + ": " + str(exc)[:300]
        else:
            out[name] = None
    print(json.dumps(out))
    """
)


def test_trl_refuses_what_planlint_refuses(python, tmp_path):
    from planlint.services.trainer_configs import read_config, read_script
    from planlint.core.loader import Limits

    configs = _configs("trl", tmp_path)
    jobs = []
    for name, config, script in configs:
        launch = read_script(script, "script", "trl", Limits()) if script is not None else None
        run_method = launch.command if launch is not None and launch.command else None
        if run_method is None:  # as planlint tells it: GRPO-only keys make it grpo
            from planlint.services.trainer_configs import read_run

            told = read_run("trl", read_config(config, name, "trl", Limits()), None, config.parent).method
            run_method = told.value if told is not None else "sft"
        words: list[str] = []
        if launch is not None:  # the script's flags, each with its values
            for override in launch.overrides:
                words.append("--" + str(override.route[0]))
                if override.value is not True:
                    words.extend(override.value if isinstance(override.value, list) else [str(override.value)])
        jobs.append((name, str(config), run_method, words))
    trl = json.loads(_run(python, _TRL, json.dumps(jobs)))
    _compare(_planlint_verdicts("trl", configs), trl)


_VERL = textwrap.dedent(
    """
    import json, os, sys, sysconfig
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf
    site = os.path.join(sysconfig.get_paths()["purelib"], "verl", "trainer", "config")

    def keys(node, route=()):
        if isinstance(node, dict):
            for key, value in node.items():
                yield route + (key,)
                yield from keys(value, route + (key,))

    with initialize_config_dir(config_dir=site, version_base=None):
        base_tree = OmegaConf.to_container(compose(config_name="ppo_trainer"), resolve=False)
    base = set(keys(base_tree))

    def free(route):  # an empty mapping or a null in ppo_trainer.yaml: its keys are the user's
        node = base_tree
        for part in route:
            node = node.get(part) if isinstance(node, dict) else None
        return node in ({}, None)

    out = {}
    for name, path, overrides in json.loads(sys.argv[1]):
        try:
            with initialize_config_dir(config_dir=os.path.dirname(path), version_base=None):
                # The YAML's own hydra.searchpath may say pkg://verl.trainer.config, which imports verl (and torch): the same directory, by path.
                config = compose(config_name=os.path.splitext(os.path.basename(path))[0], overrides=["hydra.searchpath=[file://%s]" % site, *overrides])
        except Exception as exc:
            out[name] = type(exc).__name__ + ": " + str(exc).splitlines()[0][:300]
            continue
        container = OmegaConf.to_container(config, resolve=False)
        unread = [".".join(map(str, r)) for r in keys(container) if r not in base and not any(r[:n] in base and free(r[:n]) for n in range(1, len(r)))]
        out[name] = ("keys verl never reads: " + ", ".join(unread[:5])) if unread else None
    print(json.dumps(out))
    """
)


def test_verl_refuses_what_planlint_refuses(python, tmp_path):
    from planlint.core.loader import Limits
    from planlint.services.trainer_configs import read_script

    configs = _configs("verl", tmp_path)
    jobs = []
    for name, config, script in configs:
        launch = read_script(script, "script", "verl", Limits()) if script is not None else None
        jobs.append((name, str(config), [o.text for o in launch.overrides] if launch is not None else []))
    verl = json.loads(_run(python, _VERL, json.dumps(jobs)))
    _compare(_planlint_verdicts("verl", configs), verl)


_AXOLOTL = textwrap.dedent(
    """
    import json, sys, yaml
    from axolotl.utils.config import validate_config
    from axolotl.utils.dict import DictDefault
    from axolotl.utils.schemas.config import AxolotlInputConfig
    from axolotl.utils.schemas.datasets import DPODataset, KTODataset, SFTDataset

    def names(model):
        found = set()
        for key, info in model.model_fields.items():
            found |= {key, info.alias, info.validation_alias if isinstance(info.validation_alias, str) else None}
        return found - {None}

    top = names(AxolotlInputConfig)
    out = {}
    for name, path, overrides in json.loads(sys.argv[1]):
        with open(path) as fh:
            data = yaml.safe_load(fh) or {}
        data.update(overrides)
        rl = data.get("rl")
        entry = names(DPODataset if rl in ("dpo", "ipo", "simpo") else KTODataset if rl == "kto" else SFTDataset)
        dropped = [key for key in data if key not in top and not data.get("plugins")]
        for section in ("datasets", "test_datasets"):
            dropped += [f"{section}[].{key}" for item in data.get(section) or [] if isinstance(item, dict) for key in item if key not in entry]
        try:
            validate_config(DictDefault(data))
        except Exception as exc:
            out[name] = type(exc).__name__ + ": " + str(exc)[:300]
        else:
            out[name] = ("keys axolotl drops: " + ", ".join(dropped)) if dropped else None
    print(json.dumps(out))
    """
)


def test_axolotl_refuses_what_planlint_refuses(python, tmp_path):
    from planlint.core.loader import Limits
    from planlint.services.trainer_configs import read_script

    configs = _configs("axolotl", tmp_path)
    jobs = []
    for name, config, script in configs:
        launch = read_script(script, "script", "axolotl", Limits()) if script is not None else None
        overrides = {".".join(map(str, o.route)): o.value for o in launch.overrides} if launch is not None else {}
        jobs.append((name, str(config), overrides))
    axolotl = json.loads(_run(python, _AXOLOTL, json.dumps(jobs)))
    _compare(_planlint_verdicts("axolotl", configs), axolotl)
