"""The pre-commit hook, run by a real `pre-commit try-repo` in a temporary git repository.

pre-commit builds a virtualenv and pip-installs the hook repository (PyPI or
the pip cache): allow it time. The hook repository is a committed copy of
this working tree (try-repo would ignore new, untracked files).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from action_harness import copy_project, git
from conftest import ROOT, write
from plan_overlay import REFERENCE

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PRE_COMMIT = [sys.executable, "-m", "pre_commit"]


def test_hook_definition():
    from ruamel.yaml import YAML

    hooks = YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert [h["id"] for h in hooks] == ["planlint", "planlint-fix"]
    hook = hooks[0]
    assert hook["entry"] == "planlint --changed-files" and hook["language"] == "python"
    assert "types" not in hook  # split files are JSON Lines, CSV and Parquet, run configs TOML: not YAML
    files = re.compile(hook["files"])
    for path in ("plans/a.yaml", "plans/b.yml", "catalog.yaml", ".planlint.yaml", "pyproject.toml", "configs/training/x.toml",
                 "data/train.jsonl", "data/eval.CSV", "data/train-00001.parquet", "data/eval.jsonl.gz", "data/x.ndjson"):
        assert files.search(path), path
    for path in ("README.md", "src/app.py", "rollouts/x/main.py"):
        assert not files.search(path), path
    assert hook["require_serial"] is True and hook["pass_filenames"] is True
    assert re.fullmatch(r"\d+\.\d+\.\d+", hook["minimum_pre_commit_version"])


def test_readme_pre_commit_snippet_is_a_valid_config(tmp_path):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    snippet = re.search(r"```yaml\n# \.pre-commit-config\.yaml\n(.*?)```", readme, re.S).group(1)
    config = write(tmp_path / ".pre-commit-config.yaml", snippet)
    proc = subprocess.run([*PRE_COMMIT, "validate-config", str(config)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "id: planlint" in snippet


def test_try_repo_lints_plans_and_skips_other_yaml(tmp_path):
    hook_repo = copy_project(ROOT, tmp_path / "hook-repo")
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    write(project / "plans" / "good.yaml", REFERENCE)
    write(project / "plans" / "catalog.yaml", "datasets: {retail-refunds: {releases: ['2026.11.03']}}\n")  # not a plan
    write(project / "plans" / "bad.yaml", REFERENCE.replace('release: "2026.11.03"', "release: latest").replace("name: ", "name: b-", 1))
    write(project / ".github" / "workflows" / "ci.yml", "on: [push\n")  # not a plan, and broken: not planlint's to report
    git(project, "add", "-A")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "cache"), NO_COLOR="1", GIT_CONFIG_GLOBAL=os.devnull)
    env.pop("GITHUB_ACTIONS", None)

    def try_repo() -> subprocess.CompletedProcess:
        return subprocess.run(
            [*PRE_COMMIT, "try-repo", str(hook_repo), "planlint", "--all-files", "--color", "never"],
            cwd=project, env=env, capture_output=True, text=True, timeout=540,
        )

    failing = try_repo()
    out = failing.stdout + failing.stderr
    assert failing.returncode == 1, out
    assert "plans/bad.yaml:21:12: PL102" in out
    assert "PL004" not in out and "ci.yml" not in out
    assert "2 files checked: 1 error, 0 warnings." in out

    write(project / "plans" / "bad.yaml", REFERENCE.replace("name: ", "name: b-", 1))
    git(project, "add", "-A")
    passing = try_repo()
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert re.search(r"planlint\.+Passed", passing.stdout)


def test_the_hook_sees_a_duplicate_name_among_committed_plans(tmp_path):
    """pre-commit names only the staged plan; PL005 still compares it with the repository's other plans."""
    hook_repo = copy_project(ROOT, tmp_path / "hook-repo")
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    write(project / "plans" / "existing.yaml", REFERENCE)
    git(project, "add", "-A")
    git(project, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "existing plan")
    write(project / "plans" / "team" / "copy.yaml", REFERENCE)  # same metadata.name, staged alone
    git(project, "add", "-A")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "cache"), NO_COLOR="1", GIT_CONFIG_GLOBAL=os.devnull)
    env.pop("GITHUB_ACTIONS", None)

    def try_repo() -> subprocess.CompletedProcess:
        return subprocess.run([*PRE_COMMIT, "try-repo", str(hook_repo), "planlint", "--color", "never"],
                              cwd=project, env=env, capture_output=True, text=True, timeout=540)

    failing = try_repo()
    out = failing.stdout + failing.stderr
    assert failing.returncode == 1, out
    assert re.search(r"plans/team/copy\.yaml:\d+:\d+: PL005 metadata\.name 'retail-refund-window' is already used by plans/existing\.yaml", out), out
    assert "1 file checked: 1 error, 0 warnings." in out  # only the staged plan was linted

    write(project / "plans" / "team" / "copy.yaml", REFERENCE.replace("name: retail-refund-window", "name: retail-refund-window-2", 1))
    git(project, "add", "-A")
    passing = try_repo()
    assert passing.returncode == 0, passing.stdout + passing.stderr
