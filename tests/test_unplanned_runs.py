"""Unplanned runs (PL904) cannot be hidden: not by a pull request that only adds a training config,
and not by a decoy "plan" that names it.

Attacks, end to end on real git repositories and the real CLI, with and
without `--diff-base`.
"""

from __future__ import annotations

import pytest

from conftest import write
from test_running_configs import TRAINING, repository
from test_diff_mode import hermetic_git  # noqa: F401 - an autouse fixture
from test_diff_mode import commit, git

pytestmark = pytest.mark.integration

EVIL = "configs/training/evil.toml"


def evil_config(repo, pinned: str) -> str:
    text = TRAINING.replace("4c1f2a7b9e0d3c5a6b7f8e9d0c1b2a3f4e5d6c7b", pinned).replace("lr = 1e-5", "lr = 0.5")
    write(repo / EVIL, text)
    return text


def decoy(repo, *, broken: bool) -> None:
    """A "plan" outside the linted paths that names evil.toml; `broken`: with errors of its own."""
    text = (repo / "plans" / "retail.yaml").read_text(encoding="utf-8")
    text = text.replace("name: retail-refund-window", "name: decoy").replace("configs/training/retail.toml", EVIL)
    if broken:
        text = text.replace('release: "2026.11.03"', "release: latest")  # PL102, an error
    write(repo / "notes" / "decoy.yaml", text)


def pl904(result) -> list[tuple[str, str]]:
    return [(f["path"], f["severity"]) for f in result.json["findings"] if f["code"] == "PL904"]


def test_attack_a_pull_request_that_only_adds_a_training_config(tmp_path, planlint):
    repo, pinned = repository(tmp_path)
    evil_config(repo, pinned)
    commit(repo, "a new run")
    result = planlint("--diff-base", "main", "--format", "json", "--no-cache", cwd=repo)
    assert result.status == 1 and pl904(result) == [(EVIL, "error")], result.out
    assert "the pull request adds this training config and no plan names it" in result.json["findings"][0]["message"]
    # A plain lint keeps it a warning.
    plain = planlint("--format", "json", "--no-cache", "plans/", cwd=repo)
    assert pl904(plain) == [(EVIL, "warning")] and plain.status == 0, plain.out


def test_attack_a_decoy_plan_with_errors_of_its_own_cannot_vouch(tmp_path, planlint):
    repo, pinned = repository(tmp_path)
    evil_config(repo, pinned)
    decoy(repo, broken=True)
    commit(repo, "a new run and a decoy plan")
    plain = planlint("--format", "json", "--no-cache", "plans/", cwd=repo)
    assert pl904(plain) == [(EVIL, "warning")], plain.out
    result = planlint("--diff-base", "main", "--format", "json", "--no-cache", "plans/", cwd=repo)
    assert result.status == 1 and pl904(result) == [(EVIL, "error")], result.out
    # Without errors, a plan outside the linted paths vouches in a full run, but in diff mode only
    # when it was at the base already: a decoy the pull request adds does not.
    decoy(repo, broken=False)
    commit(repo, "a cleaner decoy")
    assert pl904(planlint("--format", "json", "--no-cache", "plans/", cwd=repo)) == []
    assert pl904(planlint("--diff-base", "main", "--format", "json", "--no-cache", "plans/", cwd=repo)) == [(EVIL, "error")]


def test_a_plan_outside_the_linted_paths_that_was_at_the_base_still_counts(tmp_path, planlint):
    repo, pinned = repository(tmp_path)
    git(repo, "checkout", "-q", "main")
    decoy(repo, broken=False)  # a real, reviewed plan in another directory
    commit(repo, "an archived plan")
    git(repo, "checkout", "-q", "pr")
    git(repo, "merge", "-q", "--ff-only", "main")
    evil_config(repo, pinned)
    commit(repo, "its run config")
    result = planlint("--diff-base", "main", "--format", "json", "--no-cache", "plans/", cwd=repo)
    assert pl904(result) == [], result.out
