"""Osmosis workspaces built from fixtures/run/workspaces/*.yaml, for planlint and the SDK alike.

A fixture is a plan fragment (the reference plan's sections it replaces)
followed by the workspace's other files, each after a line `--- PATH`
(tests/plan_overlay.py); expected findings are marked inline in any of them
(`# expect: PL901`). Directives, as comment lines of the plan fragment:

  # git: none                 no git repository (default: one, see below)
  # shallow                   lint a shallow clone (depth 1) of the repository
  # missing: data/, ...       leave out workspace directories (default: all four)
  # link: PATH -> TARGET      PATH is a symbolic link to TARGET
  # note: TEXT                a note of the run holds TEXT
  # sdk: refuses at import    the SDK refuses what planlint cannot see (an import-time error)

The repository: a first commit holds rollouts/ (the reviewed rollout), a
second everything else, where `{commit}` and `{commit7}` in a file are the
first commit's full and abbreviated hash. The directories the SDK requires
hold a `.gitkeep`, so that a clone has them too. Without a `dataset:` the
plan gets run_configs.DATASET (the platform datasets of its release).
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from conftest import FIXTURES
from plan_overlay import build, split_files
from test_rules_fixtures import expected

WORKSPACES = sorted((FIXTURES / "run" / "workspaces").glob("*.yaml"))
WORKSPACE_DIRS = ("rollouts", "configs/training", "configs/eval", "data")
DATASET = 'dataset: {name: retail-refunds, release: "2026.11.03", format: task_metadata, targets: {reviewed: true}, platform: {train: retail-refunds, eval: retail-refunds-eval}}'
_DIRECTIVE = re.compile(r"^#\s*(git|shallow|missing|link|note|sdk)\b\s*:?\s*(.*)$")
_GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "planlint tests", "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "planlint tests", "GIT_COMMITTER_EMAIL": "tests@example.invalid",
}


@dataclass
class Workspace:
    root: Path  # the workspace to lint (the clone, for `# shallow`)
    files: dict[str, str]  # repository path -> text as written (markers included)
    directives: dict[str, list[str]] = field(default_factory=dict)
    commit: str | None = None

    def want(self) -> set[tuple[str, int, str]]:
        """(path, line, code) of every marker, in the plan and the other files."""
        return {(path, line, code) for path, text in self.files.items() for line, code in expected(text)}


def _git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **_GIT_ENV})
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
    return proc.stdout.strip()


def directives(fixture_text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in split_files(fixture_text)[0].splitlines():
        match = _DIRECTIVE.match(line.strip())
        if match:
            found.setdefault(match.group(1), []).append(match.group(2).strip())
    return found


def build_workspace(fixture: Path, root: Path) -> Workspace:
    """The workspace of `fixture` at `root` (and its shallow clone beside it, when asked)."""
    text = fixture.read_text(encoding="utf-8")
    fragment, others = split_files(text)
    found = directives(text)
    if not re.search(r"^dataset:", fragment, re.M):
        fragment = DATASET + "\n" + fragment
    files = {"plans/plan.yaml": build(fragment), **others}
    missing = {name.strip().rstrip("/") for value in found.get("missing", []) for name in value.split(",") if name.strip()}
    root.mkdir(parents=True)
    for directory in WORKSPACE_DIRS:
        if directory not in missing:
            (root / directory).mkdir(parents=True, exist_ok=True)
            (root / directory / ".gitkeep").write_text("", encoding="utf-8")
    for value in found.get("link", []):
        path, target = (part.strip() for part in value.split("->"))
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root / path)
    use_git = found.get("git") != ["none"]

    def write(only_rollouts: bool, commit: str = "") -> None:
        for path, body in files.items():
            if path.startswith("rollouts/") != only_rollouts:
                continue
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(body.replace("{commit}", commit).replace("{commit7}", commit[:7]), encoding="utf-8")

    write(True)
    commit = ""
    if use_git:
        _git(root, "init", "-q", "-b", "main")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "--allow-empty", "-m", "the reviewed rollout")
        commit = _git(root, "rev-parse", "HEAD")
    write(False, commit or "4c1f2a7b9e0d3c5a6b7f8e9d0c1b2a3f4e5d6c7b")
    if use_git:
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", "the plan and its run configs")
    lint_root = root
    if "shallow" in found:
        lint_root = root.parent / (root.name + "-clone")
        _git(root.parent, "clone", "-q", "--depth", "1", f"file://{root}", str(lint_root))
    return Workspace(lint_root, files, found, commit or None)

