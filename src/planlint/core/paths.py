"""Where the repository is, and a path relative to it.

Findings carry paths as given on the command line (relative to the current
directory). GitHub annotations, SARIF and links want them relative to the
repository's top level, so a run from a subdirectory still points at the
right file; the config and the data checks use the top level as the boundary
a repository's files may not leave. A deleted plan (diff mode, PL704) has no
file any more: the path is computed from the text alone and never requires
the file to exist.
"""

from __future__ import annotations

import os
from functools import lru_cache


@lru_cache(maxsize=8)
def repository_root(cwd: str) -> str:
    """The git top level above `cwd` (a `.git` directory or file), else `cwd` itself."""
    here = cwd
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return cwd
        here = parent


def source_root() -> str:
    return repository_root(os.path.abspath(os.getcwd()))


def repo_relative(path: str) -> str | None:
    """`path` relative to the repository root with `/` separators; None when outside it."""
    root = source_root()
    full = os.path.normpath(os.path.join(os.getcwd(), path))
    try:
        rel = os.path.relpath(full, root)
    except ValueError:  # another drive on Windows
        return None
    if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
        return None
    return rel.replace(os.sep, "/")


# --------------------------------------------------------------------------- links out of the repository


@lru_cache(maxsize=4096)
def _real_directory(directory: str) -> str:
    return os.path.realpath(directory)


def _lexical_root(directory: str) -> str | None:
    """The git top level above `directory`, walking the path as written: a symbolic link is never a root
    (a link to another repository must not make that repository "this one")."""
    here = directory
    while True:
        if not os.path.islink(here) and os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def leads_outside(path: str | os.PathLike) -> bool:
    """Does `path` reach, through a symbolic link (the file or a directory above it), a file outside its repository?

    The repository is the git top level above the path as written (else the
    current directory, when the path is under it, else the path's own
    directory). A path with no link in it is never refused, wherever it is:
    what was named is what is read. A pull request can commit links, so a
    plan or config "in" the checkout could otherwise be any file on the machine.
    """
    full = os.path.abspath(path)
    directory = os.path.dirname(full)
    if _real_directory(directory) == directory and not os.path.islink(full):
        return False  # the common case: two cached lookups, no link involved
    real = os.path.realpath(full)
    root = _lexical_root(directory)
    if root is None:
        cwd = os.path.abspath(os.getcwd())
        root = cwd if os.path.commonpath([full, cwd]) == cwd else directory
    base = os.path.realpath(root)
    try:
        return os.path.commonpath([real, base]) != base
    except ValueError:  # another drive on Windows
        return True
