"""Links to a finding's lines on GitHub, from the runner's variables.

Paths relative to the repository come from core.paths.
"""

from __future__ import annotations

import os
import re

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
