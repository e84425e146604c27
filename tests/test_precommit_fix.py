"""The `planlint-fix` pre-commit hook: declared as documented, and run for real."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT
from planlint.core.loader import load_file


def _hook(hook_id: str) -> dict:
    loaded = load_file(ROOT / ".pre-commit-hooks.yaml")
    assert not loaded.problems, loaded.problems
    hooks = {h["id"]: h for h in loaded.data}
    return hooks[hook_id]


def test_planlint_fix_hook_is_declared():
    hook = _hook("planlint-fix")
    assert hook["entry"] == "planlint --fix --changed-files"
    assert hook["language"] == "python"
    assert hook["files"] == _hook("planlint")["files"]  # the same files start it as start the lint
    assert "types" not in hook
    assert hook["require_serial"] is True
    assert hook["minimum_pre_commit_version"] == "3.0.0"


@pytest.mark.slow
@pytest.mark.integration
def test_planlint_fix_hook_fixes_and_fails_the_commit_once(tmp_path):
    repo = tmp_path / "repo"
    (repo / "plans").mkdir(parents=True)
    shutil.copy(ROOT / "catalog.yaml", repo / "catalog.yaml")
    shutil.copytree(ROOT / "graders", repo / "graders")  # the grader source the plan records (PL311)
    (repo / ".planlint.yaml").write_text("catalog: catalog.yaml\n", encoding="utf-8")
    original = (ROOT / "plans" / "retail-refund-grpo.yaml").read_text(encoding="utf-8")
    plan = repo / "plans" / "retail-refund-grpo.yaml"
    floating = original.replace('release: "2026.11.03"   ', "release: latest")
    plan.write_text(floating, encoding="utf-8")

    def git(*args):
        subprocess.run(["git", "-c", "user.name=planlint", "-c", "user.email=planlint@example.org", *args], cwd=repo, check=True, capture_output=True)

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "a plan with a floating release")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}  # keep pip's index settings

    def try_repo():
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "planlint-fix", "--files", "plans/retail-refund-grpo.yaml"],
            cwd=repo, capture_output=True, text=True, timeout=600, env=env,
        )

    first = try_repo()
    assert first.returncode == 1, first.stdout + first.stderr
    assert "files were modified by this hook" in first.stdout
    assert "fixed PL102: dataset.release 'latest' -> '2026.11.03'" in first.stdout
    # Only the release changed, quoted as the plan's other releases are, and its comment kept its column.
    assert plan.read_text(encoding="utf-8") == floating.replace("release: latest      ", 'release: "2026.11.03"')
    second = try_repo()
    assert second.returncode == 0, second.stdout + second.stderr
