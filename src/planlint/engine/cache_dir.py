"""The cache directory: where it is, whether a project's may be used, its markers, and what
identifies a file's version without reading it (`file_state`), for both caches kept there
(engine/result_cache.py, engine/plan_facts.py)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from planlint.core.config import Config
from planlint.core.messages import show

# Like .pytest_cache and .ruff_cache: out of git and out of backups.
MARKERS = (
    (".gitignore", "# Created by planlint; the cache is local and may be deleted at any time.\n*\n"),
    ("CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by planlint.\n"),
)


def default_directory(config: Config) -> Path:
    """`.planlint_cache/` in the project root: beside the config file, else the current directory."""
    return Path(config.root) / ".planlint_cache"


def checked_directory(config: Config) -> tuple[Path | None, str | None]:
    """The cache directory the project asks for (`cache_dir:` or the default), if it is safe to write.

    The project's files come from pull requests: a `.planlint_cache` (or
    `cache_dir:`) that leads out of the project, or that holds a symbolic
    link where planlint writes (its top two levels: results/, registry/,
    split-data/, the marker files), would make planlint write elsewhere.
    Such a directory is not used: (None, why). `--cache-dir` on the command
    line is the caller's choice and is not checked.
    """
    directory = Path(config.cache_dir) if config.cache_dir else default_directory(config)
    root = os.path.realpath(config.root)
    real = os.path.realpath(directory)
    try:
        inside = os.path.commonpath([real, root]) == root
    except ValueError:
        inside = False
    if not inside:
        return None, f"the cache directory {show(str(directory), 120)} is outside the project (or a link out of it)"
    if directory.is_symlink():
        return None, f"the cache directory {show(str(directory), 120)} is a symbolic link"
    try:
        first = list(os.scandir(directory))
    except FileNotFoundError:
        return directory, None
    except OSError as exc:
        return None, f"the cache directory {show(str(directory), 120)} cannot be read ({exc.strerror or type(exc).__name__})"
    for entry in first:
        entries = [entry]
        if entry.is_dir(follow_symlinks=False):
            try:
                entries += list(os.scandir(entry.path))
            except OSError:
                continue
        for item in entries:
            if item.is_symlink():
                name = os.path.relpath(item.path, directory)
                return None, f"the cache directory {show(str(directory), 120)} holds a symbolic link ({show(name, 120)})"
    return directory, None


def file_state(path: str | os.PathLike) -> list | None:
    """What identifies a regular file's version without reading it: size, times, inode; None if absent.

    The change time cannot be set back by tools that restore a modification
    time, so an edit is noticed even then.
    """
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(status.st_mode):
        return None
    return [status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino]
