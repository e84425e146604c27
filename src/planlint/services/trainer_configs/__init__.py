"""Open trainers' run configs (TRL, verl, axolotl): read, never run, never imported.

A plan that says `run: {trainer: trl, config: configs/trl/grpo.yaml, script: ...}`
names the YAML its trainer reads and, optionally, the launch script whose
command-line overrides apply on top. `read_run()` reads both and returns the
facts the run rules compare with the plan (`TrainerRun`: model and revision,
data sources, splits, reward code, method, adapter, seed, a random eval split),
each with where it was written (`Setting`: a document and a route), so a
finding lands on the trainer's own line. What the reader could not read is a
note naming the line, never a silent pass. Services return facts: no rule code
is named here; `KeyProblem`s say what the trainer's own schema refuses.

One module per trainer (`trl`, `verl`, `axolotl`); `_documents` reads YAML with
planlint's loader and holds the trainers' key schemas shipped under
`planlint/data/trainer-NAME.json`; `launch_script` is the override reader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from planlint.services.trainer_configs import axolotl, trl, verl
from planlint.services.trainer_configs._documents import ConfigDocument, parse_config, read_config, schema, walk_strings
from planlint.services.trainer_configs._effective import effective_leaves
from planlint.services.trainer_configs._facts import DataSource, KeyProblem, RewardRef, Setting, TrainerRun
from planlint.services.trainer_configs.launch_script import LaunchScript, parse_script, read_script

TRAINERS = ("trl", "verl", "axolotl")

_READERS: dict[str, Callable[[ConfigDocument, LaunchScript | None, Path], TrainerRun]] = {
    "trl": trl.read, "verl": verl.read, "axolotl": axolotl.read,
}


def operational(trainer: str, route: tuple) -> bool:
    """May a running experiment change this key (logging, checkpoints, the cluster)? Every other decides the run."""
    dotted = ".".join(str(part) for part in route)
    prefixes = {"trl": trl.OPERATIONS, "verl": verl.OPERATIONS, "axolotl": axolotl.OPERATIONS}[trainer]
    return any(dotted == p or dotted.startswith(p if p.endswith("_") else p + ".") or (p.endswith("_") and dotted.startswith(p)) for p in prefixes)


def read_run(trainer: str, config: ConfigDocument, script: LaunchScript | None, root: Path) -> TrainerRun:
    """The facts of the run `config` (with `script`'s overrides) starts; `root`: the repository."""
    run = _READERS[trainer](config, script, root)
    if script is not None:
        run.notes.extend(script.notes)
    return run


__all__ = [
    "TRAINERS", "ConfigDocument", "DataSource", "KeyProblem", "LaunchScript", "RewardRef", "Setting", "TrainerRun",
    "effective_leaves", "operational", "parse_config", "parse_script", "read_config", "read_run", "read_script", "schema", "walk_strings",
]
