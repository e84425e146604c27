"""A frozen eval set is frozen in its content, not only in the plan's keys (PL701), and a running
plan's train data is watched (PL709).

Attacks, end to end: a real git repository, the real CLI with `--diff-base main`,
and the outputs a reviewer reads (JSON, the job summary, the pull-request comment).
The pull request keeps every key of the plan and rewrites the data under it.
"""

from __future__ import annotations

import json

import pytest

from conftest import write
from test_diff_mode import commit, git, hermetic_git, new_repo, plan  # noqa: F401 - hermetic_git is an autouse fixture

pytestmark = pytest.mark.integration


def rows(prefix: str, count: int, start: int = 0) -> str:
    when = "2026-05-01" if prefix == "t" else "2026-08-10"
    return "".join(
        json.dumps({"id": f"{prefix}{i}", "customer_id": f"{prefix}-c{i}", "created_at": when, "prompt": f"{prefix} question {i}"}) + "\n"
        for i in range(start, start + count)
    )


def repository(tmp_path, status: str = "running", *, eval_path: str = "data/retail/eval.jsonl", files: dict | None = None):
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "retail.yaml", plan("retail", status=status, **{"path: data/retail/eval.jsonl": f"path: {eval_path}"}))
    write(repo / "data" / "retail" / "train.jsonl", rows("t", 30))
    for name, text in (files if files is not None else {"data/retail/eval.jsonl": rows("e", 20)}).items():
        write(repo / name, text)
    commit(repo, "base")
    git(repo, "checkout", "-q", "-b", "pr")
    return repo


def lint(planlint, repo, *extra):
    result = planlint("--diff-base", "main", "--format", "json", "--no-cache", *extra, cwd=repo)
    assert result.status in (0, 1), result
    return result


def found(result) -> list[tuple[str, str, str]]:
    return [(f["code"], f["severity"], f["yaml_path"]) for f in result.json["findings"]]


def test_attack_a_frozen_eval_file_loses_15_of_its_20_rows(tmp_path, planlint):
    repo = repository(tmp_path)
    write(repo / "data" / "retail" / "eval.jsonl", rows("e", 5))  # the hard rows are gone: the metric goes up
    commit(repo, "drop the hard eval rows")
    report, summary = tmp_path / "report.json", tmp_path / "summary.md"
    result = lint(planlint, repo, "--output", f"json={report}", "--summary", str(summary))
    assert result.status == 1 and found(result) == [("PL701", "error", "splits.eval.path")], result.out
    message = result.json["findings"][0]["message"]
    assert "the data of splits.eval ('data/retail/eval.jsonl') changed under the same path: 15 rows removed and 0 added" in message
    assert "already running at the base revision, so its evaluation is frozen" in message
    (card,) = result.json["changes"]
    field = {"yaml_path": "splits.eval.path: data/retail/eval.jsonl (data)", "old": "1 file",
             "new": "1 file: 15 rows removed and 0 added", "rows_added": 0, "rows_removed": 15}
    assert field in card["fields"], card
    row = "| splits.eval.path: data/retail/eval.jsonl (data) | 1 file → 1 file: 15 rows removed and 0 added |"
    assert row in summary.read_text(encoding="utf-8")
    comment = planlint("comment", "--report", str(report), "--dry-run")
    assert comment.status == 0 and row in comment.out


def test_rewritten_rows_count_as_removed_and_added(tmp_path, planlint):
    repo = repository(tmp_path, status="approved")
    write(repo / "data" / "retail" / "eval.jsonl", rows("e", 18) + rows("e", 3, start=40))
    result = lint(planlint, repo)  # uncommitted: the working tree is the head
    assert found(result) == [("PL701", "error", "splits.eval.path")]
    assert "2 rows removed and 3 added" in result.json["findings"][0]["message"]


def test_a_glob_is_compared_by_the_files_it_matches(tmp_path, planlint):
    shards = {"data/retail/eval/part-0.jsonl": rows("e", 10), "data/retail/eval/part-1.jsonl": rows("e", 10, start=10)}
    repo = repository(tmp_path, status="approved", eval_path="data/retail/eval/part-*.jsonl", files=shards)
    (repo / "data" / "retail" / "eval" / "part-1.jsonl").unlink()
    write(repo / "data" / "retail" / "eval" / "part-2.jsonl", rows("e", 2, start=20))
    commit(repo, "swap a shard")
    result = lint(planlint, repo)
    assert found(result) == [("PL701", "error", "splits.eval.path")], result.out
    assert "('data/retail/eval/part-*.jsonl') changed under the same path: 10 rows removed and 2 added" in result.json["findings"][0]["message"]


def test_a_remote_eval_whose_pinned_generation_changes_is_pl701(tmp_path, planlint):
    repo = repository(tmp_path, eval_path="gs://acme-eval/retail/eval.jsonl#1733171735123456", files={})
    text = (repo / "plans" / "retail.yaml").read_text(encoding="utf-8")
    write(repo / "plans" / "retail.yaml", text.replace("#1733171735123456", "#1733171799999999"))
    commit(repo, "a newer generation")
    result = lint(planlint, repo)
    assert ("PL701", "error", "splits.eval.path") in found(result), result.out


def test_attack_the_train_data_of_a_running_plan_is_rewritten(tmp_path, planlint):
    repo = repository(tmp_path)
    write(repo / "data" / "retail" / "train.jsonl", rows("t", 30) + rows("t", 5, start=100))
    commit(repo, "more train rows")
    result = lint(planlint, repo)
    assert found(result) == [("PL709", "warning", "splits.train.path")], result.out
    assert "5 rows removed" not in result.json["findings"][0]["message"]
    assert "changed under the same path while the plan was running at the base revision: 0 rows removed and 5 added" in result.json["findings"][0]["message"]


def test_not_frozen_yet_ignored_data_and_untouched_data_are_no_finding(tmp_path, planlint):
    repo = repository(tmp_path, status="draft")
    write(repo / "data" / "retail" / "eval.jsonl", rows("e", 5))
    commit(repo, "a draft may change its eval set")
    result = lint(planlint, repo)
    assert found(result) == []
    assert any(f["yaml_path"].startswith("splits.eval.path:") for card in result.json["changes"] for f in card["fields"])  # still shown

    # Data git does not hold (ignored, fetched by the workflow) cannot be compared: no finding, as before.
    repo = new_repo(tmp_path / "ignored")
    write(repo / ".gitignore", "data/\n")
    write(repo / "plans" / "retail.yaml", plan("retail", status="running"))
    commit(repo, "base")
    git(repo, "checkout", "-q", "-b", "pr")
    write(repo / "data" / "retail" / "train.jsonl", rows("t", 30))
    write(repo / "data" / "retail" / "eval.jsonl", rows("e", 20))
    write(repo / "NOTES.md", "unrelated\n")
    commit(repo, "notes")
    result = lint(planlint, repo)
    assert found(result) == [] and result.json["changes"] == [], result.out
