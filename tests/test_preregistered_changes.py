"""A pull request against what an approved plan promised: PL710 (grader code) and PL711 (the decision),
and what the change cards show of them (the status, the decision fields, the verdict).

Real git repositories: the base committed on `main`, the pull request's change
committed on a branch, linted with `planlint --diff-base main`.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from conftest import write
from test_diff_mode import commit, git, hermetic_git, new_repo, plan  # noqa: F401 - hermetic_git is an autouse fixture

pytestmark = pytest.mark.integration

CODE = "def score(state, expected):\n    return 1.0 if state == expected else 0.0\n"
EDITED = "def score(state, expected):\n    return 1.0 if state['orders'] == expected['orders'] else 0.0\n"


def with_source(text: str, source: str = "graders/db_state.py", code: str | None = None) -> str:
    line = f"    source: {source}\n" + (f"    sha256: {hashlib.sha256(code.encode()).hexdigest()}\n" if code is not None else "")
    return text.replace("    version: 1.4.2\n", "    version: 1.4.2\n" + line, 1)


def pull_request(tmp_path: Path, base: dict[str, str], head: dict[str, str | None]) -> Path:
    repo = new_repo(tmp_path / "repo")
    for name, text in base.items():
        write(repo / name, text)
    commit(repo, "base")
    git(repo, "checkout", "-q", "-b", "pr")
    for name, text in head.items():
        if text is None:
            git(repo, "rm", "-q", name)
        else:
            write(repo / name, text)
    commit(repo, "the pull request")
    return repo


def diff_lint(planlint, repo: Path, *args: str):
    result = planlint("--diff-base", "main", "--format", "json", *args, cwd=repo)
    assert result.status in (0, 1), result
    return result


def codes(result) -> list[tuple[str, str, str]]:
    return [(f["path"], f["code"], f["yaml_path"]) for f in result.json["findings"]]


# --------------------------------------------------------------------------- PL710


def test_a_pull_request_that_edits_only_the_graders_code_is_pl710(tmp_path, planlint):
    """The plan is untouched: diff mode must lint it because a file it names changed."""
    repo = pull_request(tmp_path, {"plans/plan.yaml": with_source(plan()), "graders/db_state.py": CODE}, {"graders/db_state.py": EDITED})
    result = diff_lint(planlint, repo)
    assert codes(result) == [("plans/plan.yaml", "PL710", "graders[0].version")]
    (finding,) = result.json["findings"]
    lines = (repo / "plans" / "plan.yaml").read_text(encoding="utf-8").splitlines()
    assert finding["line"] == lines.index("    version: 1.4.2") + 1 and finding["column"] == 14
    assert "'db-state'" in finding["message"] and "'graders/db_state.py'" in finding["message"]


def test_with_a_recorded_hash_both_rules_speak(tmp_path, planlint):
    """The hash the plan records no longer matches (PL311), and the code changed under 1.4.2 (PL710)."""
    repo = pull_request(tmp_path, {"plans/plan.yaml": with_source(plan(), code=CODE), "graders/db_state.py": CODE}, {"graders/db_state.py": EDITED})
    assert sorted(c for _, c, _ in codes(diff_lint(planlint, repo))) == ["PL311", "PL710"]


def test_a_moved_source_is_compared_with_the_old_file(tmp_path, planlint):
    base = {"plans/plan.yaml": with_source(plan()), "graders/db_state.py": CODE}
    moved = pull_request(tmp_path / "moved", base, {"graders/db_state.py": None, "graders/v2.py": CODE, "plans/plan.yaml": with_source(plan(), "graders/v2.py")})
    assert codes(diff_lint(planlint, moved)) == []  # the same code under another name
    edited = pull_request(tmp_path / "edited", base, {"graders/db_state.py": None, "graders/v2.py": EDITED, "plans/plan.yaml": with_source(plan(), "graders/v2.py")})
    result = diff_lint(planlint, edited)
    assert codes(result) == [("plans/plan.yaml", "PL710", "graders[0].version")]
    assert "'graders/db_state.py' -> 'graders/v2.py'" in result.json["findings"][0]["message"]


def test_a_new_version_with_a_new_baseline_is_the_honest_change(tmp_path, planlint):
    head = with_source(plan(**{"version: 1.4.2": "version: 1.5.0", "db-state: 1.4.2": "db-state: 1.5.0", "value: 0.41": "value: 0.39"}))
    repo = pull_request(tmp_path, {"plans/plan.yaml": with_source(plan()), "graders/db_state.py": CODE}, {"graders/db_state.py": EDITED, "plans/plan.yaml": head})
    assert codes(diff_lint(planlint, repo)) == []


def test_a_pull_request_that_only_changes_plans_reads_no_other_plan(tmp_path, planlint, monkeypatch):
    """Finding the plans a changed grader source concerns costs a pass over every plan: not for YAML-only changes."""
    from planlint.modes import diff as diff_mode

    repo = pull_request(tmp_path, {"plans/plan.yaml": plan(), "plans/other.yaml": plan("other")},
                        {"plans/plan.yaml": plan(**{"estimated_cost: 180": "estimated_cost: 170"})})
    read = []
    original = diff_mode.discover
    monkeypatch.setattr(diff_mode, "discover", lambda *a, **k: read.append(a) or original(*a, **k))
    diff_lint(planlint, repo)
    callers = len(read)
    repo2 = pull_request(tmp_path / "code", {"plans/plan.yaml": plan(), "README.md": "x\n"}, {"README.md": "y\n"})
    read.clear()
    diff_lint(planlint, repo2)
    assert len(read) == callers + 1  # the non-YAML change: one more pass, to look for the plans that name it


def test_a_head_source_linking_out_of_the_repository_is_not_read(tmp_path, planlint):
    """The attack: the pull request replaces the grader's code with a link to a file of the machine,
    so that PL710 compares (and, in a careless message, quotes) it. It is PL311's refusal, and no PL710."""
    secret = write(tmp_path / "outside" / "key.py", "SECRET = 'runner'\n")
    repo = pull_request(tmp_path, {"plans/plan.yaml": with_source(plan()), "graders/db_state.py": CODE}, {"graders/db_state.py": None})
    (repo / "graders").mkdir(exist_ok=True)
    os.symlink(secret, repo / "graders" / "db_state.py")  # untracked: diff mode's head is the working tree
    result = diff_lint(planlint, repo)
    assert codes(result) == [("plans/plan.yaml", "PL311", "graders[0].source")]
    assert "runner" not in result.out


# --------------------------------------------------------------------------- PL711 and the change card


def test_a_running_plans_decision_cannot_move(tmp_path, planlint):
    repo = pull_request(tmp_path, {"plans/plan.yaml": plan(status="running")},
                        {"plans/plan.yaml": plan(status="running", **{"target_improvement: 0.10": "target_improvement: 0.03", "max_steps: 400": "max_steps: 900"})})
    result = diff_lint(planlint, repo)
    assert codes(result) == [("plans/plan.yaml", "PL711", "decision.target_improvement")]
    message = result.json["findings"][0]["message"]
    assert "decision.target_improvement changed from '0.10' to '0.03'" in message and "decision.stopping changed" in message
    assert "running at the base revision" in message and "draft" in message


def test_going_back_to_draft_is_the_way_and_the_card_shows_it(tmp_path, planlint):
    repo = pull_request(tmp_path, {"plans/plan.yaml": plan(status="approved")},
                        {"plans/plan.yaml": plan(status="draft", **{"target_improvement: 0.10": "target_improvement: 0.05", "split: eval\n  target": "split: eval\n  alpha: 0.1\n  target"})})
    result = diff_lint(planlint, repo)
    assert codes(result) == []
    (card,) = result.json["changes"]
    assert card["status"] == ["approved", "draft"]
    assert {"yaml_path": "decision.target_improvement", "old": 0.1, "new": 0.05} in card["fields"]
    assert {"yaml_path": "decision.alpha", "old": None, "new": 0.1} in card["fields"]
    summary = planlint("--diff-base", "main", "--format", "markdown", cwd=repo).out
    assert "status approved → draft" in summary


def test_removing_the_decision_is_pl711_too(tmp_path, planlint):
    head = plan(status="completed").split("decision:\n")[0] + "budget:" + plan(status="completed").split("budget:")[1]
    head += "outcome: {value: 0.6, verdict: met}\n"
    repo = pull_request(tmp_path, {"plans/plan.yaml": plan(status="completed") + "outcome: {value: 0.6, verdict: met}\n"}, {"plans/plan.yaml": head})
    result = diff_lint(planlint, repo)
    assert ("plans/plan.yaml", "PL711", "decision") in codes(result)


def test_the_card_shows_the_verdict_and_what_the_numbers_give(tmp_path, planlint):
    sized = {"frozen: true": "frozen: true\n    size: 400", "rollouts: 64": "rollouts: 1600"}
    base = plan(status="running", **sized)
    head = plan(status="completed", **sized) + "outcome: {value: 0.47, verdict: met}\n"
    repo = pull_request(tmp_path, {"plans/plan.yaml": base}, {"plans/plan.yaml": head})
    result = diff_lint(planlint, repo)
    assert [c for _, c, _ in codes(result)] == ["PL615"]  # 0.06 on 400 paired items is within noise
    (card,) = result.json["changes"]
    assert card["verdict"] == {"recorded": "met", "computed": "inconclusive"}
    assert {"yaml_path": "outcome.verdict", "old": None, "new": "met"} in card["fields"]
    summary = planlint("--diff-base", "main", "--format", "markdown", cwd=repo).out
    assert "status running → completed · verdict met (its numbers give inconclusive)" in summary


def test_a_consistent_verdict_is_shown_once(tmp_path, planlint):
    head = plan(status="completed") + "outcome: {value: 0.55, verdict: met}\n"
    repo = pull_request(tmp_path, {"plans/plan.yaml": plan(status="running")}, {"plans/plan.yaml": head})
    result = diff_lint(planlint, repo)
    assert codes(result) == [] and result.json["changes"][0]["verdict"] == {"recorded": "met", "computed": "met"}
    summary = planlint("--diff-base", "main", "--format", "markdown", cwd=repo).out
    assert "status running → completed · verdict met" in summary
    assert "its numbers give" not in summary
