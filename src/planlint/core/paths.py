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
