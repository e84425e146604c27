"""A trainer's YAML config or launch script as the run rules see it, and the trainers' key schemas.

YAML is read with planlint's own loader (core/loader: safe, bounded, with the
position of every key and value), so a finding inside a trainer's config has
the same line and column a finding inside a plan has. The trainers read the
same files with PyYAML (TRL, axolotl) or OmegaConf (verl), YAML 1.1 parsers;
where the two readings of a scalar could differ (`yes`, `1e-5`), the facts
planlint compares are strings (names, paths, revisions) and kept as written.

The key schemas are data, not code: `planlint/data/trainer-NAME.json`, printed
by `scripts/trainer_schema.py` inside a venv holding the trainer at the pinned
version, and compared with the trainer's real schema by
tests/test_trainer_agreement.py.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, Sequence

from planlint.core.loader import Limits, load_text, read_text
from planlint.core.positions import START, Positions, Route, Span


@dataclass
class ConfigDocument:
    """One file of a trainer run: its YAML config (`kind` "trl", "verl", "axolotl") or its
    launch script (`kind` "script", whose `positions` are those of its overrides, by the
    route of the config key each sets).

    The shape engine/lint.place reads for a finding in another file: `path` (shown as
    given, relative to the current directory), `text`, `positions`, and `error`
    (why and where the file could not be read; `data` is then None).
    """

    path: str
    kind: str
    text: str | None = None
    data: Any = None
    positions: Positions = field(default_factory=Positions)
    error: tuple[str, Span] | None = None
    quoted: Sequence[Span] = ()  # where quoted strings were written: a `#` in one is no comment (no suppression)


def read_config(path: Path, display: str, kind: str, limits: Limits) -> ConfigDocument:
    """Read and parse a trainer's YAML config (size-limited, UTF-8, planlint's safe loader)."""
    text, problem = read_text(path, limits.max_file_size)
    if problem is not None or text is None:
        document = ConfigDocument(display, kind)
        document.error = (problem.message if problem is not None else "cannot be read", START)
        return document
    return parse_config(text, display, kind, limits)


def parse_config(text: str, display: str, kind: str, limits: Limits = Limits()) -> ConfigDocument:
    document = ConfigDocument(display, kind, text=text)
    loaded = load_text(text, limits)
    for problem in loaded.problems:
        if problem.code == "PL002":  # PyYAML keeps the last of two equal keys: which one was meant?
            document.error = (f"not valid YAML for the trainer: {problem.message}", problem.span)
        else:
            document.error = (f"not valid YAML: {problem.message}", problem.span)
        break
    if document.error is not None:
        return document
    document.positions = loaded.positions
    document.quoted = loaded.quoted
    if loaded.data is None:
        document.data = {}  # an empty file: every key takes the trainer's default
    elif not isinstance(loaded.data, dict):
        document.error = ("the top level is not a mapping of keys to values", START)
    else:
        document.data = loaded.data
    return document


def walk_strings(data: Any, route: Route = ()) -> Iterator[tuple[Route, str]]:
    """(route, text) for every string value (and mapping key) in the data, without recursion."""
    stack: list[tuple[Any, Route]] = [(data, route)]
    while stack:
        value, where = stack.pop()
        if isinstance(value, dict):
            stack.extend((item, where + (key,)) for key, item in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((item, where + (index,)) for index, item in reversed(list(enumerate(value))))
        elif isinstance(value, str):
            yield where, value


# --------------------------------------------------------------------------- the trainers' schemas


@lru_cache(maxsize=None)
def schema(trainer: str) -> dict:
    """The keys `trainer` accepts, as shipped (`planlint/data/trainer-NAME.json`)."""
    # The package's own file, read directly (as rules/schema.py reads the plan schema):
    # importlib.resources costs every run a few milliseconds of imports.
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "data", f"trainer-{trainer}.json")
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:  # pragma: no cover - installed as a zip: ask the loader
        from importlib.resources import files

        return json.loads(files("planlint").joinpath(f"data/trainer-{trainer}.json").read_text(encoding="utf-8"))


def version_of(trainer: str) -> str:
    """The pinned release the schema was taken from, e.g. 'trl==1.9.0'."""
    return str(schema(trainer)["package"])


def unknown_keys(data: dict, tree: dict, route: Route = (), limit: int = 50) -> Iterator[tuple[Route, list[str]]]:
    """(route of each key `tree` does not have, the keys it does have there), mappings only.

    `tree`: {key: None (a value), {} (a mapping of free keys), {...} (its keys)}.
    """
    stack: list[tuple[dict, dict, Route]] = [(data, tree, route)]
    found = 0
    while stack and found < limit:
        node, keys, where = stack.pop()
        for key, value in node.items():
            if key not in keys:
                found += 1
                yield where + (key,), sorted(keys)
                continue
            below = keys[key]
            if isinstance(below, dict) and below and isinstance(value, dict):
                stack.append((value, below, where + (key,)))


def has_key(tree: dict, route: Route) -> bool:
    """Does `tree` (as for unknown_keys) have the key at `route`? Below a value or a free mapping, yes."""
    node: Any = tree
    for part in route:
        if not isinstance(node, dict) or not node:
            return True  # a value (its type is the trainer's to check) or a mapping of free keys
        if part not in node:
            return False
        node = node[part]
    return True
