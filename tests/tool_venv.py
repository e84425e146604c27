"""Virtual environments of the tests' own, for the tools planlint is compared with.

planlint never imports the Osmosis SDK or a trainer (TRL, verl, axolotl): it
reads their configs. Agreement tests ask the real tool what it makes of the
same files, in a venv built for that tool alone, from the package index:

    python = tool_python("sdk", ["osmosis-ai==0.3.8"], min_python=(3, 12))
    subprocess.run([str(python), "-c", SCRIPT, ...])

The interpreter the venv is built from: `$PLANLINT_<NAME>_PYTHON` when set
(`PLANLINT_SDK_PYTHON` for "sdk"), else the oldest Python >= `min_python`
the machine provides: this one, pyenv's versions (`pyenv root`), or
`python3.N` on PATH, each asked for its version (a pyenv shim of an
inactive version answers with an error, and is passed over). The venv is
kept under tests/.tool-venvs/ (git-ignored), one per name, keyed by the
requirements and the interpreter's version, so a second run reuses it and a
change of either builds it anew. Where no such interpreter exists, or the
install fails, the test is skipped and pytest's summary (`-ra`) says why.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

VENVS = Path(__file__).resolve().parent / ".tool-venvs"
_VERSION = "import sys; print('%d.%d' % sys.version_info[:2])"
_failed: dict[str, str] = {}


def _version(python: str) -> tuple[int, int] | None:
    """(major, minor) of the interpreter at `python`, or None when it does not run."""
    try:
        proc = subprocess.run([python, "-I", "-c", _VERSION], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.fullmatch(r"(\d+)\.(\d+)", proc.stdout.strip()) if proc.returncode == 0 else None
    return (int(match.group(1)), int(match.group(2))) if match else None


def _pyenv_pythons() -> list[str]:
    """The interpreters of pyenv's installed versions, if pyenv is there."""
    root = os.environ.get("PYENV_ROOT")
    pyenv = shutil.which("pyenv")
    if pyenv:
        try:
            proc = subprocess.run([pyenv, "root"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            proc = None
        if proc is not None and proc.returncode == 0 and proc.stdout.strip():
            root = proc.stdout.strip()
    if not root:
        return []
    versions = Path(root) / "versions"
    found = []
    for version in sorted(versions.iterdir()) if versions.is_dir() else []:
        for name in ("python3", "python"):
            candidate = version / "bin" / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                found.append(str(candidate))
                break
    return found


def find_python(min_python: tuple[int, int], variable: str | None = None) -> tuple[str | None, str]:
    """(an interpreter >= min_python, how it was found), or (None, why there is none)."""
    wanted = "%d.%d" % min_python
    if variable and os.environ.get(variable):
        python = os.environ[variable]
        version = _version(python)
        if version is None or version < min_python:
            return None, f"${variable} ({python}) is not a Python >= {wanted} that runs"
        return python, f"${variable}"
    if sys.version_info[:2] >= min_python:
        return sys.executable, "the running interpreter"
    candidates: list[tuple[tuple[int, int], str, str]] = []
    for python in _pyenv_pythons():
        version = _version(python)
        if version is not None and version >= min_python:
            candidates.append((version, python, "pyenv"))
    for minor in range(min_python[1], 20):
        name = f"python{min_python[0]}.{minor}"
        python = shutil.which(name)
        version = _version(python) if python else None
        if python and version is not None and version >= min_python:
            candidates.append((version, python, "PATH"))
    if not candidates:
        return None, f"no Python >= {wanted} on this machine (set {variable or 'the interpreter'} to one, or install one with pyenv)"
    version, python, how = min(candidates)
    return python, f"{how}, Python {version[0]}.{version[1]}"


def _bin(venv: Path, name: str) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin") / name


def tool_python(name: str, requirements: list[str], min_python: tuple[int, int] = (3, 11)) -> Path:
    """The python of a venv holding `requirements` (built on first use), or pytest.skip with the reason."""
    if name in _failed:
        pytest.skip(_failed[name])
    variable = f"PLANLINT_{re.sub(r'[^A-Za-z0-9]', '_', name).upper()}_PYTHON"
    base, how = find_python(min_python, variable)
    if base is None:
        _failed[name] = f"{name} agreement needs {' '.join(requirements)}: {how}"
        pytest.skip(_failed[name])
    version = _version(base)
    key = hashlib.sha256(json.dumps([sorted(requirements), version]).encode()).hexdigest()[:16]
    venv = VENVS / f"{name}-{key}"
    python = _bin(venv, "python")
    marker = venv / ".requirements.json"
    if marker.is_file() and python.exists():
        return python
    VENVS.mkdir(exist_ok=True)
    with open(VENVS / f".{name}.lock", "w") as lock:  # two pytest runs in one checkout
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.is_file() and python.exists():
            return python
        shutil.rmtree(venv, ignore_errors=True)  # a build that did not finish (no marker)
        steps = [
            [base, "-m", "venv", str(venv)],
            [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *requirements],
        ]
        for step in steps:
            proc = subprocess.run(step, capture_output=True, text=True, timeout=900)
            if proc.returncode != 0:
                tail = " ".join(line for line in (proc.stderr or proc.stdout).splitlines() if not line.startswith("WARNING"))[-400:]
                shutil.rmtree(venv, ignore_errors=True)
                _failed[name] = f"building the {name} venv ({how}) failed at {' '.join(step[1:4])}: {tail}"
                pytest.skip(_failed[name])
        # Written last: a venv without it is one whose build did not finish.
        marker.write_text(json.dumps({"requirements": requirements, "python": base, "found": how}), encoding="utf-8")
    return python
