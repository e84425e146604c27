"""The config that runs: the YAML's values with the launch script's overrides on top.

Shared by the three trainers' readers. `get(route)` answers one key: the last
override of it (or of a mapping above it) when the script sets one, else the
YAML's value, else None (the trainer's default applies; `default()` says which,
at the route where the key would be written).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from planlint.core.positions import Route
from planlint.services.trainer_configs._documents import ConfigDocument
from planlint.services.trainer_configs._facts import Setting
from planlint.services.trainer_configs.launch_script import UNKNOWN, LaunchScript, Override

_ABSENT = object()


def _dig(value: Any, route: Route) -> Any:
    for part in route:
        if isinstance(part, int):
            if not isinstance(value, list) or not -len(value) <= part < len(value):
                return _ABSENT
            value = value[part]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return _ABSENT
    return value


class Effective:
    """Answers "what does the run get for this key?" over a YAML config and its script."""

    def __init__(self, config: ConfigDocument, script: LaunchScript | None) -> None:
        self.config = config
        self.data = config.data if isinstance(config.data, dict) else {}
        self.script = script
        self._overrides: dict[Route, Override] = {}
        if script is not None:
            for override in script.overrides:
                self._overrides[override.route] = override  # the last one wins, as argparse and Hydra take it

    def overridden(self, route: Route) -> Override | None:
        for depth in range(len(route), 0, -1):
            override = self._overrides.get(route[:depth])
            if override is not None:
                return override
        return None

    def get(self, route: Route) -> Setting | None:
        override = self.overridden(route)
        if override is not None and self.script is not None:
            if override.op == "~":
                return None
            if override.value is UNKNOWN:
                return Setting(UNKNOWN, self.script.document, override.route)
            value = _dig(override.value, route[len(override.route):])
            if value is not _ABSENT:
                return Setting(value, self.script.document, route)  # positions resolve up to the override's key
        value = _dig(self.data, route)
        if value is _ABSENT:
            return None
        return Setting(value, self.config, route)

    def default(self, route: Route, value: Any) -> Setting:
        """The trainer's default for an absent key: at the key's place in the YAML (reported as missing)."""
        return Setting(value, self.config, route, default=True)

    def get_or_default(self, route: Route, value: Any) -> Setting:
        found = self.get(route)
        return found if found is not None else self.default(route, value)

    def keys(self) -> list[Route]:
        """The top-level keys set anywhere (YAML, then overrides), as routes of one key."""
        seen = dict.fromkeys([(key,) for key in self.data] + [route[:1] for route in self._overrides])
        return list(seen)


def known(setting: Setting | None) -> bool:
    """Is the setting's value something the reader knows (not UNKNOWN, not absent)?"""
    return setting is not None and setting.value is not UNKNOWN


_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
_FILE_SUFFIX = re.compile(r"\.(jsonl|json|csv|tsv|parquet|arrow|txt|gz|zst|bz2|xz)$", re.I)


def is_hub_id(text: str, root: Path, looked: list[Path]) -> bool:
    """`ORG/NAME` that is not a path in the repository: a Hugging Face Hub repository id.
    Every path tested is added to `looked` (a cached result depends on it)."""
    if not _HUB_ID.match(text) or _FILE_SUFFIX.search(text):
        return False
    looked.append(root / text)
    return not os.path.exists(root / text)


def in_repository(path: str, root: Path, looked: list[Path]) -> bool:
    """Is `path` (relative, never out of the repository as written) a file in the repository?
    Nothing outside the checkout is even tested for existence."""
    parts = path.replace("\\", "/").split("/")
    if path.startswith(("/", "\\", "~")) or (len(path) > 1 and path[1] == ":") or ".." in parts:
        return False
    looked.append(root / path)
    return os.path.isfile(root / path)


def looks_like_file(text: str) -> bool:
    return bool(_FILE_SUFFIX.search(text)) or "*" in text or "://" in text


def file_list(value: Any) -> tuple[str, ...] | None:
    """A data-files value (a string or a list of strings) as a tuple; None when it is neither."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        return tuple(value)
    return None


def module_file(module: str, root: Path, looked: list[Path]) -> Path | None:
    """The repository file a dotted module path names (`rewards.math` -> rewards/math.py), if it is there."""
    parts = module.split(".")
    if not all(part.isidentifier() for part in parts):
        return None
    for candidate in (root.joinpath(*parts).with_suffix(".py"), root.joinpath(*parts, "__init__.py")):
        looked.append(candidate)
        if candidate.is_file():
            return candidate
    return None


def _flatten(value: Any, route: Route, out: dict, budget: list[int]) -> None:
    """Scalar leaves under `value` (a list of scalars is one leaf), at most budget[0] of them."""
    stack = [(value, route)]
    while stack and budget[0] > 0:
        node, at = stack.pop()
        if isinstance(node, dict) and node:
            stack.extend(reversed([(item, at + (key,)) for key, item in node.items()]))
        elif isinstance(node, list) and any(isinstance(item, (dict, list)) for item in node):
            stack.extend(reversed([(item, at + (index,)) for index, item in enumerate(node)]))
        else:
            out[at] = node
            budget[0] -= 1


def effective_leaves(config: ConfigDocument, script: LaunchScript | None, limit: int = 5000) -> dict[Route, tuple[Any, ConfigDocument]]:
    """Every value of the config that runs, by route: the YAML's leaves with the script's overrides
    on top, each with the document it was written in. An override whose value the reader cannot know
    is its word as written, so two versions compare equal only when they say the same."""
    leaves: dict[Route, Any] = {}
    budget = [limit]
    _flatten(config.data if isinstance(config.data, dict) else {}, (), leaves, budget)
    out: dict[Route, tuple[Any, ConfigDocument]] = {route: (value, config) for route, value in leaves.items()}
    if script is None:
        return out
    for override in script.overrides:
        size = len(override.route)
        for route in [r for r in out if r[:size] == override.route]:
            del out[route]
        if override.op == "~":
            continue
        if override.value is UNKNOWN:
            out[override.route] = (f"<{override.text}>", script.document)
            continue
        below: dict[Route, Any] = {}
        _flatten(override.value, override.route, below, budget)
        out.update((route, (value, script.document)) for route, value in below.items())
    return out
