"""`planlint init [NAME]`: write a new plan from a commented template.

The template passes the schema and the pinning, split and grader rules, but
fails on purpose until the author makes the decisions no template can make:
the baseline (PL404), the spending cap (PL501) and, for SFT, the review of the
target answers (PL605). Placeholders read `TODO...` so that they are easy to
find, and PL008 reports each (a warning while `status: draft`); the decision
rule's target and stopping limits are such blanks too, never values a
template picked. The templates are package data:
`planlint/data/init-{grpo,sft}.yaml` (and, with `--platform osmosis` or
`--trainer trl|verl|axolotl`, the run's config templates beside them:
`init-osmosis-*.toml`, `init-TRAINER*.yaml|.sh`), and `init-recurrence.yaml`,
the `recurrence:` block `--recurring` adds (its schedule and caps are
placeholders; a recurring plan needs no `budget.max_spend`); the written
plan starts with the yaml-language-server modeline naming the
published schema, so editors validate, complete and explain it.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from planlint.core.messages import show

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}\Z")
DEFAULT_NAME = "new-experiment"
# The published JSON Schema, for editors: yaml-language-server (VS Code's YAML
# extension and others) reads the modeline on a plan's first line.
SCHEMA_URL = "https://raw.githubusercontent.com/planlint/planlint/main/schemas/plan.schema.json"
MODELINE = f"# yaml-language-server: $schema={SCHEMA_URL}"
METHODS = ("grpo", "sft")


PLATFORMS = ("osmosis",)
TRAINERS = ("trl", "verl", "axolotl")

_PLATFORM_DATASETS = """\
  platform: {train: TODO-dataset, eval: "<your-eval-dataset>"}   # the platform datasets holding this release (osmosis dataset list)
"""
_RUN_SECTION = """
# The run: the platform's submit configs, checked together with this plan
# (PL901-PL904; docs/plan-format.md, "Run configs").
run:
  platform: osmosis
  training_config: configs/training/__NAME__.toml   # osmosis train submit configs/training/__NAME__.toml
  eval_config: configs/eval/__NAME__.toml           # osmosis eval submit configs/eval/__NAME__.toml
"""


def _data(name: str) -> str:
    from importlib.resources import files

    return files("planlint").joinpath(f"data/{name}").read_text(encoding="utf-8")


_TRAINER_RUN = """
# The run: the trainer's config and the script that starts it, checked together with this plan
# (PL901-PL904; docs/plan-format.md, "Run configs").
run:
  trainer: __TRAINER__
  config: configs/__TRAINER__/__NAME__.yaml
  script: configs/__TRAINER__/__NAME__.sh
"""


# In a recurring template the caps are recurrence.budget's: the one-off cap's comments go.
_ONE_OFF_CAP = re.compile(r"^  # PL501 until the cap is set:\n(?:  # (?:max_spend|estimated_cost):.*\n)*", re.M)


def _recurring(text: str) -> str:
    text = _ONE_OFF_CAP.sub("  # the caps are in recurrence.budget (a recurring plan has no budget.max_spend)\n", text)
    text = text.replace("(budget.max_spend, budget.approved_by)", "(recurrence.budget, budget.approved_by)")
    text = text.replace("the budget has a cap (PL501)", "the schedule and caps are filled in (PL008)")
    text = text.replace("who approved max_spend;", "who approved the caps;")
    return text.rstrip("\n") + "\n" + _data("init-recurrence.yaml")


def template(method: str, name: str, path: str, platform: str | None = None, trainer: str | None = None, recurring: bool = False) -> str:
    text = _data(f"init-{method}.yaml")
    if recurring:
        text = _recurring(text)
    if platform == "osmosis":
        text = text.rstrip("\n") + "\n" + _RUN_SECTION
        # Which platform datasets hold the release's rows: what the run configs' `dataset` must be (PL903).
        at = text.index("\n", text.index("  name: TODO-dataset")) + 1
        text = text[:at] + _PLATFORM_DATASETS + text[at:]
    if trainer is not None:
        text = text.rstrip("\n") + "\n" + _TRAINER_RUN.replace("__TRAINER__", trainer)
        if trainer == "verl":  # verl reads Parquet split files
            text = text.replace("data/__NAME__/train.jsonl", "data/__NAME__/train.parquet").replace("data/__NAME__/eval.jsonl", "data/__NAME__/eval.parquet")
    return MODELINE + "\n" + text.replace("__NAME__", name).replace("__PATH__", path)


def trainer_configs(trainer: str, method: str, name: str) -> dict[str, str]:
    """{repository path: text} of the trainer's config and launch script that match plan `name`."""
    config = _data(f"init-{trainer}.yaml" if trainer == "verl" else f"init-{trainer}-{method}.yaml")
    return {
        f"configs/{trainer}/{name}.yaml": config.replace("__NAME__", name),
        f"configs/{trainer}/{name}.sh": _data(f"init-{trainer}.sh").replace("__NAME__", name).replace("__METHOD__", method),
    }


def run_configs(name: str) -> dict[str, str]:
    """{repository path: text} of the Osmosis submit configs that match plan `name`."""
    return {
        f"configs/training/{name}.toml": _data("init-osmosis-training.toml").replace("__NAME__", name),
        f"configs/eval/{name}.toml": _data("init-osmosis-eval.toml").replace("__NAME__", name),
    }


def _error(message: str) -> int:
    print(f"planlint: error: {message}", file=sys.stderr)
    return 2


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="planlint init",
        description="Write a new experiment plan from the commented template (plans/NAME.yaml).",
    )
    parser.add_argument("name", nargs="?", default=DEFAULT_NAME, metavar="NAME", help=f"the plan's metadata.name and file name (default: {DEFAULT_NAME})")
    parser.add_argument("--method", choices=METHODS, default="grpo", help="the training method the template is shaped for (default: grpo)")
    parser.add_argument("--dir", default="plans", metavar="DIR", help="directory to write the plan in (default: plans)")
    parser.add_argument(
        "--platform", choices=PLATFORMS, default=None,
        help="also write the platform's submit configs that match the plan (osmosis: configs/training/NAME.toml and configs/eval/NAME.toml)",
    )
    parser.add_argument(
        "--trainer", choices=TRAINERS, default=None,
        help="also write the open trainer's config and launch script that match the plan (configs/TRAINER/NAME.yaml and configs/TRAINER/NAME.sh)",
    )
    parser.add_argument(
        "--recurring", action="store_true",
        help="a plan that runs on a schedule (continual learning): add the recurrence block, its schedule, source, admission and caps to fill in",
    )
    args = parser.parse_args(argv)
    if args.trainer is not None and args.platform is not None:
        return _error("give --platform or --trainer, not both: a plan names one run")
    if args.trainer == "verl" and args.method == "sft":
        return _error("verl's PPO trainer (verl.trainer.main_ppo) runs RL, not SFT: use --method grpo, or --trainer trl or axolotl for SFT")
    if not SLUG.match(args.name):
        return _error(f"{show(args.name)} is not a valid plan name: use lowercase letters, digits and hyphens, starting with a letter or digit (at most 63 characters)")
    directory = Path(args.dir)
    path = directory / f"{args.name}.yaml"
    shown = path.as_posix()
    files = {path: template(args.method, args.name, shown, args.platform, args.trainer, args.recurring)}
    if args.platform == "osmosis":  # run config paths are relative to the repository root: the current directory
        files.update((Path(rel), text) for rel, text in run_configs(args.name).items())
    if args.trainer is not None:
        files.update((Path(rel), text) for rel, text in trainer_configs(args.trainer, args.method, args.name).items())
    for target in files:  # write all or nothing
        if os.path.lexists(target):
            return _error(f"{target.as_posix()} already exists: edit it, or choose another NAME")
    written: list[Path] = []
    for target, text in files.items():
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "x", encoding="utf-8", newline="\n") as fh:  # "x": never overwrite
                fh.write(text)
        except OSError as exc:
            for done in written:  # leave nothing half-made
                done.unlink(missing_ok=True)
            if isinstance(exc, FileExistsError):
                return _error(f"{target.as_posix()} already exists: edit it, or choose another NAME")
            return _error(f"cannot write {target.as_posix()}: {exc.strerror or type(exc).__name__}")
        written.append(target)
    kind = f"{args.method}, recurring" if args.recurring else args.method
    cap = "set the schedule and the caps in recurrence.budget" if args.recurring else "set budget.max_spend"
    if args.platform == "osmosis":
        configs = " and ".join(p.as_posix() for p in written[1:])
        print(
            f"Wrote {shown} ({kind}) with its Osmosis run configs {configs}. Replace the TODOs and <...> placeholders "
            f"(the same model and dataset in the plan and the training config), add rollouts/<rollout>/main.py, pin commit_sha, "
            f"measure the baseline and {cap}; then run: planlint {shown}"
        )
    elif args.trainer is not None:
        configs = " and ".join(p.as_posix() for p in written[1:])
        print(
            f"Wrote {shown} ({kind}) with its {args.trainer} config and launch script {configs}. Replace the TODOs and <...> "
            f"placeholders (the same model, revision and data files in the plan and the config), add the reward code, "
            f"measure the baseline and {cap}; then run: planlint {shown}"
        )
    else:
        print(f"Wrote {shown} ({kind}). Replace the TODOs, measure the baseline and {cap}; then run: planlint {shown}")
    return 0
