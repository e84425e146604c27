"""Run a composite action's steps the way the GitHub Actions runner does, on this machine.

Reads `action.yml`; resolves inputs (defaults included) and `${{ }}` expressions
from the `inputs`, `github`, `runner` and `steps` contexts; runs every `run:` step with
`bash --noprofile --norc -eo pipefail` (the runner's `shell: bash`) in the
workspace, with the step's `env:` and the runner's variables (GITHUB_OUTPUT
per step, GITHUB_STEP_SUMMARY, GITHUB_EVENT_PATH, RUNNER_TEMP, ...); collects
step outputs and the action's outputs; stops at the first failing step.

`uses:` steps are not run: the test provides their effect (actions/setup-python
puts `python3` on PATH; the harness puts the test's interpreter there). The
harness refuses expressions it does not understand, so the action cannot
quietly depend on something the test does not model.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
_REF = re.compile(r"^[A-Za-z_][\w-]*(\.[A-Za-z_][\w-]*)*$")
_CONDITION = re.compile(r"^([\w.-]+)\s*(==|!=)\s*'([^']*)'$")


@dataclass
class StepRun:
    name: str
    id: str | None
    status: int | None  # None: skipped
    stdout: str = ""
    stderr: str = ""
    outputs: dict[str, str] = field(default_factory=dict)
    uses: str | None = None


@dataclass
class ActionRun:
    steps: list[StepRun]
    outputs: dict[str, str]
    summary: str

    @property
    def status(self) -> int:
        """The exit status of the first failing step, 0 when all passed."""
        return next((s.status for s in self.steps if s.status), 0)

    @property
    def stdout(self) -> str:
        return "".join(s.stdout for s in self.steps)

    @property
    def stderr(self) -> str:
        return "".join(s.stderr for s in self.steps)

    def step(self, name: str) -> StepRun:
        return next(s for s in self.steps if s.name == name)


def load_action(path: Path) -> dict:
    from ruamel.yaml import YAML

    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def _lookup(ref: str, contexts: dict[str, Any]) -> str:
    if not _REF.match(ref):
        raise ValueError(f"the harness does not understand the expression {ref!r}")
    node: Any = contexts
    for part in ref.split("."):
        if not isinstance(node, dict) or part not in node:
            if ref.startswith("steps."):
                return ""  # an output a step did not set is empty, as on the runner
            raise KeyError(f"unknown context value {ref!r}")
        node = node[part]
    return "" if node is None else str(node)


def substitute(text: str, contexts: dict[str, Any]) -> str:
    return _EXPR.sub(lambda m: _lookup(m.group(1), contexts), str(text))


def condition(expr: str, contexts: dict[str, Any]) -> bool:
    inner = _EXPR.fullmatch(expr.strip())
    expr = inner.group(1) if inner else expr.strip()
    m = _CONDITION.match(expr)
    if not m:
        raise ValueError(f"the harness does not understand the condition {expr!r}")
    value = _lookup(m.group(1), contexts)
    return (value == m.group(3)) if m.group(2) == "==" else (value != m.group(3))


def run_action(
    action_dir: Path,
    *,
    workspace: Path,
    runner_temp: Path,
    event_path: Path,
    event_name: str,
    inputs: dict[str, str] | None = None,
    github: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    python_bin: Path | None = None,
    timeout: float = 600,
) -> ActionRun:
    action = load_action(action_dir / "action.yml")
    assert action["runs"]["using"] == "composite"
    given = dict(inputs or {})
    unknown = set(given) - set(action.get("inputs", {}))
    assert not unknown, f"inputs the action does not declare: {unknown}"

    github_ctx = {
        "action_path": str(action_dir),
        "workspace": str(workspace),
        "event_name": event_name,
        "event_path": str(event_path),
        "token": "",
        "repository": "acme/plans",
        "server_url": "https://github.com",
        "api_url": "https://api.github.com",
        "sha": "0" * 40,
    }
    github_ctx.update(github or {})
    runner_ctx = {"temp": str(runner_temp), "os": "Linux"}
    contexts: dict[str, Any] = {"github": github_ctx, "runner": runner_ctx, "steps": {}, "inputs": {}}
    for name, spec in action.get("inputs", {}).items():
        contexts["inputs"][name] = given[name] if name in given else substitute(spec.get("default", ""), contexts)

    summary_parts: list[str] = []
    base_env = {
        "HOME": os.environ.get("HOME", str(runner_temp)),
        "PATH": (f"{python_bin}{os.pathsep}" if python_bin else "") + os.environ.get("PATH", ""),
        "LANG": "C.UTF-8",
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_REPOSITORY": github_ctx["repository"],
        "GITHUB_SERVER_URL": github_ctx["server_url"],
        "GITHUB_API_URL": github_ctx["api_url"],
        "GITHUB_SHA": github_ctx["sha"],
        "GITHUB_ACTION_PATH": str(action_dir),
        "RUNNER_TEMP": str(runner_temp),
        "RUNNER_OS": "Linux",
    }
    for key in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_CONSTRAINT", "PIP_CONFIG_FILE",
                "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"):
        if key in os.environ:
            base_env[key] = os.environ[key]
    base_env.update(env or {})

    steps: list[StepRun] = []
    failed = False
    for index, step in enumerate(action["runs"]["steps"]):
        name = step.get("name", f"step {index}")
        record = StepRun(name, step.get("id"), None, uses=step.get("uses"))
        steps.append(record)
        if failed or ("if" in step and not condition(str(step["if"]), contexts)):
            continue
        if "uses" in step:
            record.status = 0  # provided by the test (see the module docstring)
            continue
        assert step.get("shell") == "bash", f"{name}: the harness runs bash steps"
        output_file = runner_temp / f"output-{index}"
        summary_file = runner_temp / f"summary-{index}"
        output_file.write_text("")
        summary_file.write_text("")
        script = runner_temp / f"step-{index}.sh"
        script.write_text(step["run"], encoding="utf-8")
        step_env = dict(base_env, GITHUB_OUTPUT=str(output_file), GITHUB_STEP_SUMMARY=str(summary_file))
        for key, value in (step.get("env") or {}).items():
            step_env[key] = substitute(value, contexts)
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=substitute(step.get("working-directory", str(workspace)), contexts),
            env=step_env, capture_output=True, timeout=timeout,
        )
        record.status = proc.returncode
        record.stdout = proc.stdout.decode("utf-8", "replace")
        record.stderr = proc.stderr.decode("utf-8", "replace")
        record.outputs = parse_output_file(output_file.read_text(encoding="utf-8"))
        summary_parts.append(summary_file.read_text(encoding="utf-8"))
        if record.id:
            contexts["steps"][record.id] = {"outputs": record.outputs, "outcome": "success" if proc.returncode == 0 else "failure"}
        failed = proc.returncode != 0

    outputs = {name: substitute(spec["value"], contexts) for name, spec in action.get("outputs", {}).items()}
    return ActionRun(steps, outputs, "".join(summary_parts))


def parse_output_file(text: str) -> dict[str, str]:
    """`key=value` lines and `key<<DELIM` ... `DELIM` blocks, as the runner reads $GITHUB_OUTPUT."""
    out: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i + 1)
            out[key] = "\n".join(lines[i + 1:end])
            i = end + 1
            continue
        if line:
            key, _, value = line.partition("=")
            out[key] = value
        i += 1
    return out


def python_on_path(directory: Path) -> Path:
    """What actions/setup-python leaves behind: `python3` and `python` on PATH (here: this interpreter)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("python3", "python"):
        shim = directory / name
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
        shim.chmod(0o755)
    return directory


def copy_project(source: Path, target: Path) -> Path:
    """The project's files (tracked, plus new ones not ignored) in a fresh git repository, committed.

    What the runner downloads as an action, and what pre-commit clones as a hook
    repository: the current working tree, whatever is committed yet.
    """
    import shutil

    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=source, capture_output=True, check=True,
    ).stdout.decode("utf-8").split("\0")
    for rel in filter(None, listed):
        src = source / rel
        if src.is_file():
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
    git(target, "init", "-q")
    git(target, "add", "-A")
    git(target, "commit", "-q", "-m", "planlint under test")
    return target


def git(repo: Path, *args: str) -> str:
    env = dict(
        os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.invalid", GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1",
    )
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=True, text=True).stdout.strip()
