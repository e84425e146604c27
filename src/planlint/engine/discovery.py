"""Which files a run lints: the paths named, and the YAML files under named directories.

Directories are walked in sorted order, skipping only version-control
directories and the config's `exclude` patterns; a file named twice
(or reached twice) is linted once.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Iterator

from planlint.core.config import Config
from planlint.core.model import UsageError

YAML_SUFFIXES = (".yaml", ".yml")
# Version-control internals only: git cannot track a path through `.git`, so no
# pull request puts a plan there. Every other directory below a path named on the
# command line is searched (node_modules/, venv/, __pycache__/, .planlint_cache/
# included: a plan hidden there is still a plan); `exclude` is how to leave one out.
_SKIP_DIRS = {".git", ".hg", ".svn"}


def discover(paths: Iterable[str], config: Config) -> list[tuple[str, Path, bool]]:
    """(display path, path, named explicitly) for every file to lint, in order."""
    found: list[tuple[str, Path, bool]] = []
    seen: set[str] = set()
    for arg in paths:
        path = Path(arg)
        if path.is_dir():
            # Per-directory path arithmetic, string joins per file: a monorepo has thousands.
            for directory, names in walk_yaml(path, config):
                prefix = os.path.join(arg, os.path.relpath(directory, path))
                absolute = os.path.abspath(directory)
                for name in names:
                    key = os.path.normcase(os.path.join(absolute, name))
                    if key not in seen:
                        seen.add(key)
                        found.append((os.path.normpath(os.path.join(prefix, name)).replace(os.sep, "/"), Path(directory, name), False))
        elif path.exists() or path.is_symlink():
            if config.excluded(path):
                continue
            _add(found, seen, arg, path, True)
        else:
            raise UsageError(f"{arg}: no such file or directory")
    return found


def _add(found, seen, display, path, explicit) -> None:
    key = os.path.normcase(os.path.abspath(path))
    if key not in seen:
        seen.add(key)
        found.append((display, path, explicit))


def walk_yaml(root: Path, config: Config) -> Iterator[tuple[str, list[str]]]:
    """(directory, sorted names of its YAML files) under root, directories in sorted order."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not config.excluded(Path(dirpath, d)))
        names = [n for n in sorted(filenames) if n.lower().endswith(YAML_SUFFIXES)]
        if config.exclude:
            names = [n for n in names if not config.excluded(Path(dirpath, n))]
        if names:
            yield dirpath, names
