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
from planlint.services.trainer_configs._documents import ConfigDocument, read_config, schema, walk_strings
from planlint.services.trainer_configs._facts import DataSource, KeyProblem, RewardRef, Setting, TrainerRun
from planlint.services.trainer_configs.launch_script import LaunchScript, read_script

TRAINERS = ("trl", "verl", "axolotl")

_READERS: dict[str, Callable[[ConfigDocument, LaunchScript | None, Path], TrainerRun]] = {
    "trl": trl.read, "verl": verl.read, "axolotl": axolotl.read,
}


def read_run(trainer: str, config: ConfigDocument, script: LaunchScript | None, root: Path) -> TrainerRun:
    """The facts of the run `config` (with `script`'s overrides) starts; `root`: the repository."""
    run = _READERS[trainer](config, script, root)
    if script is not None:
        run.notes.extend(script.notes)
    return run


__all__ = [
    "TRAINERS", "ConfigDocument", "DataSource", "KeyProblem", "LaunchScript", "RewardRef", "Setting",
    "TrainerRun", "read_config", "read_run", "read_script", "schema", "walk_strings",
]
