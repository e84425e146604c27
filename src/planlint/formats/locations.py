"""Where a finding's file is, as CI systems want it: relative to the repository.

Findings carry paths as given on the command line (relative to the current
directory). GitHub annotations, SARIF and links want them relative to the
repository's top level, so a run from a subdirectory still points at the
right file. A deleted plan (diff mode, PL704) has no file any more: the path
is computed from the text alone and never requires the file to exist.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache


@lru_cache(maxsize=8)
def _root_for(cwd: str) -> str:
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
    return _root_for(os.path.abspath(os.getcwd()))


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


_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_SHA = re.compile(r"^[0-9a-fA-F]{7,64}$")
_SERVER = re.compile(r"^https?://[A-Za-z0-9.-]+(:[0-9]+)?(/[A-Za-z0-9._~/-]*)?$")


def blob_base(env: dict | None = None) -> str | None:
    """`https://github.com/OWNER/REPO/blob/SHA/` from the runner's variables, or None.

    Each part is checked against a strict pattern so that a surprising value
    cannot smuggle Markdown into a link.
    """
    env = os.environ if env is None else env
    server = (env.get("GITHUB_SERVER_URL") or "").rstrip("/")
    repo = env.get("GITHUB_REPOSITORY") or ""
    sha = env.get("GITHUB_SHA") or ""
    if not (_SERVER.match(server) and _REPO.match(repo) and _SHA.match(sha)):
        return None
    return f"{server}/{repo}/blob/{sha}/"


def line_link(base: str, rel_path: str, line: int, end_line: int) -> str:
    from urllib.parse import quote

    anchor = f"#L{line}" if end_line <= line else f"#L{line}-L{end_line}"
    return base + quote(rel_path, safe="/") + anchor
