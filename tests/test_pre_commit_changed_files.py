"""The pre-commit hook sees what it guards: a real `pre-commit try-repo` on real commits.

A commit that changes only a split file a plan names, or only a run config,
is linted as the plan it belongs to (`planlint --changed-files`, the hook's
entry), and blocked when that plan now fails; a clean commit passes. The
project is a copy of this repository's example plans with their data, run
configs and catalog. One hook repository and one pre-commit home serve the
module: pre-commit builds the hook's virtualenv once.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from action_harness import copy_project, git
from conftest import ROOT

pytestmark = [pytest.mark.integration, pytest.mark.slow]

LEAKING_EVAL_ROW = (
    '{"task_id": "refund-99999", "customer_id": "cus-0100", "created_at": "2026-08-20", '
    '"prompt": "Order #99999 arrived broken, can I get a refund?", "expected_outcome": "refund"}\n'
)
CLEAN_EVAL_ROW = (
    '{"task_id": "refund-99998", "customer_id": "cus-0999", "created_at": "2026-08-21", '
    '"prompt": "Order #99998 never arrived, can I get a refund?", "expected_outcome": "refund"}\n'
)
TRAINING_CONFIG = "configs/training/billing-dispute-mixed-reward.toml"


@pytest.fixture(scope="module")
def hook(tmp_path_factory):
    """Run the `planlint` hook of this working tree on the staged files of `project`."""
    base = tmp_path_factory.mktemp("hook")
    hook_repo = copy_project(ROOT, base / "hook-repo")
    env = dict(os.environ, PRE_COMMIT_HOME=str(base / "cache"), NO_COLOR="1", GIT_CONFIG_GLOBAL=os.devnull)
    env.pop("GITHUB_ACTIONS", None)

    def run(project: Path, hook_id: str = "planlint") -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), hook_id, "--color", "never"],
            cwd=project, env=env, capture_output=True, text=True, timeout=540,
        )

    return run


@pytest.fixture
def project(tmp_path) -> Path:
    """The example plans, their data, run configs, rollout, grader code, catalog and config, committed."""
    repo = tmp_path / "project"
    repo.mkdir()
    for name in ("plans", "data", "configs", "rollouts", "graders"):
        shutil.copytree(ROOT / name, repo / name)
    for name in ("catalog.yaml", ".planlint.yaml"):
        shutil.copy(ROOT / name, repo / name)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "plans and their data")
    return repo


def _stage(repo: Path, rel: str, text: str, *, append: bool = False) -> None:
    path = repo / rel
    path.write_text((path.read_text(encoding="utf-8") if append else "") + text, encoding="utf-8")
    git(repo, "add", rel)


def test_a_data_only_commit_that_leaks_is_blocked(hook, project):
    _stage(project, "data/retail/refunds-eval.jsonl", LEAKING_EVAL_ROW, append=True)
    run = hook(project)
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "(no files to check)" not in out
    assert re.search(r"plans/retail-refund-grpo\.yaml:\d+:\d+: PL207 .*'cus-0100'", out), out
    assert "1 file checked: 1 error" in out  # the plan the split file belongs to, and no other


def test_a_run_config_only_commit_that_drifts_is_blocked(hook, project):
    config = (project / TRAINING_CONFIG).read_text(encoding="utf-8")
    _stage(project, TRAINING_CONFIG, config.replace('model_path = "meta-llama/Llama-3.1-8B-Instruct"', 'model_path = "Qwen/Qwen3-8B"'))
    run = hook(project)
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert re.search(rf"{re.escape(TRAINING_CONFIG)}:\d+:\d+: PL903 ", out), out
    assert "1 file checked: " in out  # the plan that names it (its rollout's commit is not in this copy: PL902 too)


def test_a_clean_commit_passes(hook, project):
    _stage(project, "data/retail/refunds-eval.jsonl", CLEAN_EVAL_ROW, append=True)
    plan = (project / "plans" / "support-replies-sft.yaml").read_text(encoding="utf-8")
    _stage(project, "plans/support-replies-sft.yaml", plan.replace("\nbehavior:", "\n# reviewed again\nbehavior:", 1))
    run = hook(project)
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"planlint\.+Passed", run.stdout), run.stdout


def test_a_catalog_change_lints_every_plan(hook, project):
    catalog = (project / "catalog.yaml").read_text(encoding="utf-8")
    _stage(project, "catalog.yaml", catalog.replace('"2026.11.03"', '"2026.11.04"'))  # the release retail-refund-grpo pins is gone
    run = hook(project)
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert re.search(r"plans/retail-refund-grpo\.yaml:\d+:\d+: PL105 ", out), out
    assert f"{len(list((ROOT / 'plans').glob('*.yaml')))} files checked" in out
