"""The facts a trainer's reader returns: the config that runs, each value with where it was written."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planlint.core.positions import Route
from planlint.services.trainer_configs._documents import ConfigDocument


@dataclass(frozen=True)
class Setting:
    """One value of the config that runs, and where it was written (the YAML, or the script's override)."""

    value: Any
    document: ConfigDocument
    route: Route
    default: bool = False  # the key is absent: the trainer's default (reported at the mapping that would hold it)


@dataclass(frozen=True)
class DataSource:
    """Data the trainer reads for one split (`role`: "train" or "eval").

    `files`: the data files named (local paths or URIs), when the config names
    files; `dataset`: a Hub dataset id or a loader name when it names a dataset
    instead; `revision`: the Hub revision, for trainers with a key for it.
    """

    role: str
    setting: Setting
    files: tuple[str, ...] = ()
    dataset: str | None = None
    revision: Setting | None = None
    can_pin: bool = True  # does the trainer have a key for the revision?


@dataclass(frozen=True)
class RewardRef:
    """A reward the trainer scores with: a built-in of the trainer, a module or file of code, or a model."""

    text: str  # as written
    kind: str  # "builtin" | "module" | "file" | "model" | "default"
    setting: Setting
    names: tuple[str, ...] = ()  # what a plan grader's id or name may be to be this reward
    file: Path | None = None  # the repository file holding its code, when it is one


@dataclass(frozen=True)
class KeyProblem:
    """What the trainer's own schema refuses, at a route of `document`."""

    document: ConfigDocument
    route: Route
    message: str
    at_key: bool = False
    missing: bool = False


@dataclass
class TrainerRun:
    """The config that runs, as facts. None where the config does not say."""

    trainer: str
    config: ConfigDocument
    script: ConfigDocument | None = None
    model: Setting | None = None
    model_revision: Setting | None = None
    model_can_pin: bool = True  # False: the trainer has no key for the model's revision (verl)
    sources: list[DataSource] = field(default_factory=list)
    train_split: Setting | None = None
    eval_split: Setting | None = None
    random_eval: Setting | None = None  # a split made at random from the training data (val_set_size, test_split_size)
    rewards: list[RewardRef] = field(default_factory=list)
    method: Setting | None = None  # value: "sft", "grpo", or the trainer's word for another method
    adapter: Setting | None = None  # value: "lora", "full", or the trainer's word
    seed: Setting | None = None
    script_config: Setting | None = None  # the config the launch command names, when it names one
    problems: list[KeyProblem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    looked: list[Path] = field(default_factory=list)  # repository paths the reader tested (a cached result depends on them)

    @property
    def documents(self) -> list[ConfigDocument]:
        return [self.config] + ([self.script] if self.script is not None else [])

