"""Diff mode as a gate a pull request cannot talk its way through (issue 10, items 3-5).

Every case is a real git repository: the base committed on `main`, the pull
request's change on a branch (committed, like a PR head checkout), linted with
`planlint --diff-base main`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import write
from test_diff_mode import commit, git, hermetic_git, new_repo, plan  # noqa: F401 - hermetic_git is an autouse fixture

pytestmark = pytest.mark.integration


def pr(tmp_path: Path, base: dict[str, str], change, *, message: str = "the pull request") -> Path:
    """A repo with `base` files committed on main, then `change(repo)` committed on branch `pr`."""
    repo = new_repo(tmp_path / "repo")
    for name, text in base.items():
        write(repo / name, text)
    commit(repo, "base")
    git(repo, "checkout", "-q", "-b", "pr")
    change(repo)
    commit(repo, message)
    return repo


def findings(result) -> list[tuple[str, str]]:
    return [(f["path"], f["code"]) for f in result.json["findings"]]


def diff_lint(planlint, repo: Path, *args: str):
    result = planlint("--diff-base", "main", "--format", "json", *args, "plans/", cwd=repo)
    assert result.status in (0, 1), result
    return result


# --------------------------------------------------------------------------- item 5: a running plan cannot vanish


RUNNING = {"plans/run.yaml": plan("run", status="running")}


def _empty(repo: Path) -> None:
    (repo / "plans" / "run.yaml").write_text("", encoding="utf-8")


def _comments_only(repo: Path) -> None:
    (repo / "plans" / "run.yaml").write_text("# retired\n", encoding="utf-8")


def _dangling(repo: Path) -> None:
    (repo / "plans" / "run.yaml").unlink()
    os.symlink("gone.yaml", repo / "plans" / "run.yaml")


def _kind_changed(repo: Path) -> None:
    write(repo / "plans" / "run.yaml", plan("run", status="running").replace("kind: ExperimentPlan", "kind: Notes"))


def _api_changed(repo: Path) -> None:
    text = plan("run", status="running")
    write(repo / "plans" / "run.yaml", text.replace(text.splitlines()[0], "apiVersion: other/v9"))


def _unparseable(repo: Path) -> None:
    write(repo / "plans" / "run.yaml", plan("run", status="running") + "budget: [unclosed\n")


def _not_utf8(repo: Path) -> None:
    (repo / "plans" / "run.yaml").write_bytes(plan("run", status="running").encode("utf-8") + b"\n# \xff\xfe\xfa\n")


def _too_big(repo: Path) -> None:
    write(repo / "plans" / "run.yaml", plan("run", status="running") + "# " + "x" * (1 << 20) + "\n")


def _a_list(repo: Path) -> None:
    write(repo / "plans" / "run.yaml", "- just\n- a list\n")


def _deleted(repo: Path) -> None:
    (repo / "plans" / "run.yaml").unlink()


def _renamed_out_of_yaml(repo: Path) -> None:
    (repo / "plans" / "run.yaml").rename(repo / "plans" / "run.yaml.bak")


VANISHING = {
    "emptied": (_empty, "empty"),
    "only comments": (_comments_only, "empty"),
    "dangling symlink": (_dangling, "symbolic link"),
    "kind changed": (_kind_changed, "'Notes'"),
    "apiVersion changed": (_api_changed, "'other/v9'"),
    "unparseable": (_unparseable, "cannot be parsed"),
    "not UTF-8": (_not_utf8, "cannot be read"),
    "over max_file_size": (_too_big, "cannot be read"),
    "a list": (_a_list, "not a plan"),
    "deleted": (_deleted, "deleted"),
    "renamed to a non-YAML name": (_renamed_out_of_yaml, "renamed"),
}


@pytest.mark.parametrize("case", sorted(VANISHING))
def test_a_running_plan_that_stops_being_a_plan_is_pl704(case, tmp_path, planlint):
    change, words = VANISHING[case]
    repo = pr(tmp_path, RUNNING, change)
    result = diff_lint(planlint, repo)
    pl704 = [f for f in result.json["findings"] if f["code"] == "PL704"]
    assert len(pl704) == 1, result
    assert result.status == 1
    assert pl704[0]["line"] == 1 and pl704[0]["severity"] == "error"
    assert "'run'" in pl704[0]["message"] and words in pl704[0]["message"], pl704[0]["message"]


@pytest.mark.parametrize("case", ["emptied", "kind changed", "dangling symlink", "unparseable"])
def test_a_plan_that_was_not_running_may_stop_being_one(case, tmp_path, planlint):
    change, _ = VANISHING[case]
    repo = pr(tmp_path, {"plans/run.yaml": plan("run", status="completed")}, change)
    result = diff_lint(planlint, repo)
    assert "PL704" not in {code for _, code in findings(result)}, result


def test_pl704_for_a_vanished_plan_shows_in_every_format(tmp_path, planlint):
    repo = pr(tmp_path, RUNNING, _kind_changed)
    for fmt in ("text", "github", "sarif", "junit"):
        result = planlint("--diff-base", "main", "--format", fmt, "plans/", cwd=repo)
        assert result.status == 1 and "PL704" in result.out, (fmt, result)


# --------------------------------------------------------------------------- item 3: changes that are not plan files


def _rows(prefix: str, customers: list[str], prompts: list[str] | None = None) -> str:
    return "".join(
        json.dumps({"id": f"{prefix}{i}", "customer_id": c, "created_at": "2026-05-01" if prefix == "t" else "2026-08-10",
                    "prompt": (prompts[i] if prompts else f"{prefix} question {i}")}) + "\n"
        for i, c in enumerate(customers)
    )


def data_repo_files() -> dict[str, str]:
    text = plan("leaky", status="running").replace("path: data/retail/train.jsonl", "path: data/train.jsonl").replace("path: data/retail/eval.jsonl", "path: data/eval.jsonl")
    return {
        "plans/leaky.yaml": text,
        "plans/other.yaml": plan("other"),  # its split files are not in the repository
        "data/train.jsonl": _rows("t", ["c-1", "c-2", "c-3"]),
        "data/eval.jsonl": _rows("e", ["e-1", "e-2"]),
        "data/unrelated.jsonl": _rows("u", ["c-1"]),
    }


def test_the_base_is_clean(tmp_path, planlint):
    repo = pr(tmp_path, data_repo_files(), lambda repo: None)
    assert planlint("--format", "json", "plans/", cwd=repo).json["findings"] == []


def test_a_pr_that_only_adds_leaking_rows_to_a_split_file_is_pl207(tmp_path, planlint):
    def leak(repo):
        with open(repo / "data" / "eval.jsonl", "a", encoding="utf-8") as fh:
            fh.write(_rows("x", ["c-2"]))

    repo = pr(tmp_path, data_repo_files(), leak)
    full = planlint("--format", "json", "plans/", cwd=repo)
    assert findings(full) == [("plans/leaky.yaml", "PL207")]
    result = diff_lint(planlint, repo)
    assert result.status == 1 and findings(result) == [("plans/leaky.yaml", "PL207")], result
    assert result.json["files"] == 1  # only the plan whose split file changed


def test_a_pr_that_only_changes_the_frozen_eval_file_is_pl209(tmp_path, planlint):
    def copy_a_train_prompt(repo):
        write(repo / "data" / "eval.jsonl", _rows("e", ["e-1", "e-2"], ["e question 0", "t question 1"]))

    repo = pr(tmp_path, data_repo_files(), copy_a_train_prompt)
    result = diff_lint(planlint, repo)
    assert result.status == 1 and findings(result) == [("plans/leaky.yaml", "PL209")], result


def test_a_split_file_reached_through_a_symlink_counts(tmp_path, planlint):
    files = data_repo_files()
    files["plans/leaky.yaml"] = files["plans/leaky.yaml"].replace("path: data/eval.jsonl", "path: data/current-eval.jsonl")

    def base_extra(repo):
        pass

    repo = new_repo(tmp_path / "repo")
    for name, text in files.items():
        write(repo / name, text)
    os.symlink("eval.jsonl", repo / "data" / "current-eval.jsonl")
    commit(repo, "base")
    git(repo, "checkout", "-q", "-b", "pr")
    with open(repo / "data" / "eval.jsonl", "a", encoding="utf-8") as fh:
        fh.write(_rows("x", ["c-3"]))
    commit(repo, "leak through the link's target")
    result = diff_lint(planlint, repo)
    assert findings(result) == [("plans/leaky.yaml", "PL207")], result


def test_an_unrelated_data_file_does_not_relint_anything(tmp_path, planlint):
    def touch(repo):
        with open(repo / "data" / "unrelated.jsonl", "a", encoding="utf-8") as fh:
            fh.write(_rows("v", ["c-2"]))

    repo = pr(tmp_path, data_repo_files(), touch)
    result = diff_lint(planlint, repo)
    assert result.status == 0 and result.json["files"] == 0, result


def test_an_uncommitted_split_file_edit_counts_too(tmp_path, planlint):
    repo = pr(tmp_path, data_repo_files(), lambda repo: None)
    with open(repo / "data" / "train.jsonl", "a", encoding="utf-8") as fh:
        fh.write(_rows("t", ["e-2"], ["late train question"]))
    result = diff_lint(planlint, repo)
    assert findings(result) == [("plans/leaky.yaml", "PL207")], result
