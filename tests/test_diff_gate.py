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
    # The plan is running: its eval file is frozen, so the new rows are PL701 too.
    assert result.status == 1 and findings(result) == [("plans/leaky.yaml", "PL207"), ("plans/leaky.yaml", "PL701")], result
    assert result.json["files"] == 1  # only the plan whose split file changed


def test_a_pr_that_only_changes_the_frozen_eval_file_is_pl209(tmp_path, planlint):
    def copy_a_train_prompt(repo):
        write(repo / "data" / "eval.jsonl", _rows("e", ["e-1", "e-2"], ["e question 0", "t question 1"]))

    repo = pr(tmp_path, data_repo_files(), copy_a_train_prompt)
    result = diff_lint(planlint, repo)
    assert result.status == 1 and findings(result) == [("plans/leaky.yaml", "PL209"), ("plans/leaky.yaml", "PL701")], result


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
    assert findings(result) == [("plans/leaky.yaml", "PL207"), ("plans/leaky.yaml", "PL701")], result  # the frozen eval data, through the link


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
    assert findings(result) == [("plans/leaky.yaml", "PL709"), ("plans/leaky.yaml", "PL207")], result  # PL709: a running plan's train data


# --------------------------------------------------------------------------- item 4: the PR does not set its own policy

BAD = plan("bad-plan", **{'release: "2026.11.03"': "release: latest"})  # PL102, an error


def policy_repo(tmp_path, config_text: str, change, extra: dict | None = None) -> Path:
    base = {".planlint.yaml": config_text, "plans/good.yaml": plan("good-plan"), **(extra or {})}
    return pr(tmp_path, base, change)


def pl705(result) -> list[dict]:
    return [f for f in result.json["findings"] if f["code"] == "PL705"]


def test_ignore_everything_in_the_same_pr_does_not_pass(tmp_path, planlint):
    def attack(repo):
        write(repo / "plans" / "bad.yaml", BAD)
        write(repo / ".planlint.yaml", "select: [PL]\nignore: [PL]\n")

    repo = policy_repo(tmp_path, "ignore: [PL305]\n", attack)
    result = diff_lint(planlint, repo)
    assert result.status == 1, result
    assert ("plans/bad.yaml", "PL102") in findings(result)
    [policy] = [f for f in pl705(result) if f["yaml_path"] == "ignore"]
    assert policy["path"] == ".planlint.yaml" and policy["severity"] == "warning"
    assert (policy["line"], policy["column"]) == (2, 1)  # at the changed key
    assert "turn off every rule" in policy["message"] and "base revision's configuration" in policy["message"]


def test_a_severity_downgrade_in_the_same_pr_does_not_pass(tmp_path, planlint):
    def attack(repo):
        write(repo / "plans" / "bad.yaml", BAD)
        write(repo / ".planlint.yaml", "ignore: [PL305]\nseverity:\n  PL102: warning\n")

    repo = policy_repo(tmp_path, "ignore: [PL305]\n", attack)
    result = diff_lint(planlint, repo)
    assert result.status == 1
    [bad] = [f for f in result.json["findings"] if f["code"] == "PL102"]
    assert bad["severity"] == "error"
    [policy] = pl705(result)
    assert (policy["line"], policy["yaml_path"]) == (3, "severity.PL102")
    assert "downgrade PL102" in policy["message"] and "no longer fail the check" in policy["message"]


def test_exclude_everything_in_the_same_pr_does_not_pass(tmp_path, planlint):
    def attack(repo):
        write(repo / "plans" / "bad.yaml", BAD)
        write(repo / ".planlint.yaml", "ignore: [PL305]\nexclude: [plans/**]\n")

    repo = policy_repo(tmp_path, "ignore: [PL305]\n", attack)
    result = diff_lint(planlint, repo)
    assert result.status == 1 and ("plans/bad.yaml", "PL102") in findings(result), result
    [policy] = pl705(result)
    assert (policy["line"], policy["yaml_path"]) == (2, "exclude")
    assert "stop checking 2 plan files" in policy["message"]


def test_pyproject_policy_change_is_reported_at_its_key(tmp_path, planlint):
    def attack(repo):
        write(repo / "plans" / "bad.yaml", BAD)
        write(repo / "pyproject.toml", '[project]\nname = "x"\n\n[tool.planlint]\nignore = ["PL305"]\n\n[tool.planlint.severity]\nPL102 = "warning"\n')

    repo = pr(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n\n[tool.planlint]\nignore = ["PL305"]\n', "plans/good.yaml": plan("good-plan")}, attack)
    result = diff_lint(planlint, repo)
    assert result.status == 1
    [policy] = pl705(result)
    assert (policy["path"], policy["line"], policy["yaml_path"]) == ("pyproject.toml", 8, "severity.PL102")


def test_a_config_the_pr_adds_is_judged_by_the_defaults(tmp_path, planlint):
    def attack(repo):
        write(repo / "plans" / "bad.yaml", BAD)
        write(repo / ".planlint.yaml", "ignore: [PL1]\n")

    repo = pr(tmp_path, {"plans/good.yaml": plan("good-plan")}, attack)
    result = diff_lint(planlint, repo)
    assert result.status == 1 and ("plans/bad.yaml", "PL102") in findings(result)
    assert [f["yaml_path"] for f in pl705(result)] == ["ignore"]


def test_removing_the_config_is_reported(tmp_path, planlint):
    repo = policy_repo(tmp_path, "severity: {PL405: error}\n", lambda repo: (repo / ".planlint.yaml").unlink())
    result = diff_lint(planlint, repo)
    [policy] = pl705(result)
    assert (policy["path"], policy["line"]) == (".planlint.yaml", 1) and "severity" in policy["message"]


def test_an_unchanged_config_is_no_finding_and_comments_are_no_change(tmp_path, planlint):
    repo = policy_repo(tmp_path, "ignore: [PL305]\n", lambda repo: write(repo / ".planlint.yaml", "# tidy\nignore: [PL305]   # why\n"))
    assert pl705(diff_lint(planlint, repo)) == []


CATALOG = 'datasets: {retail-refunds: {releases: ["2026.10.01", "2026.11.03"]}}\n'


def test_an_unpublished_release_added_to_the_catalog_in_the_same_pr_is_pl105_and_listed(tmp_path, planlint):
    def attack(repo):
        write(repo / "plans" / "new.yaml", plan("new-plan", **{'release: "2026.11.03"': 'release: "2026.12.24"'}))
        write(repo / "catalog.yaml", 'datasets: {retail-refunds: {releases: ["2026.10.01", "2026.11.03", "2026.12.24"]}}\n')

    repo = policy_repo(tmp_path, "catalog: catalog.yaml\n", attack, {"catalog.yaml": CATALOG})
    assert planlint("--format", "json", "plans/", cwd=repo).json["findings"] == []  # the PR's own catalog says fine
    summary = repo.parent / "summary.md"
    result = planlint("--diff-base", "main", "--format", "json", "--summary", str(summary), "plans/", cwd=repo)
    assert result.status == 1 and findings(result) == [("plans/new.yaml", "PL105")], result
    assert result.json["catalog_added"] == [{"catalog": "catalog.yaml", "kind": "dataset", "name": "retail-refunds", "release": "2026.12.24"}]
    text = summary.read_text(encoding="utf-8")
    assert "### Catalog entries added by this pull request" in text and "| catalog.yaml | dataset | retail-refunds | 2026.12.24 |" in text


def test_raising_max_spend_with_a_new_disable_file_is_listed_with_its_reason(tmp_path, planlint, monkeypatch):
    base_plan = plan("spendy", **{"max_spend: 250": "max_spend: 600", "estimated_cost: 180": "estimated_cost: 500"})

    def attack(repo):
        text = base_plan.replace("max_spend: 600", "max_spend: 50000")
        write(repo / "plans" / "spendy.yaml", "# planlint: disable-file=PL703 -- approved in chat\n" + text)

    repo = policy_repo(tmp_path, "ignore: [PL305]\n", attack, {"plans/spendy.yaml": base_plan})
    summary = repo.parent / "summary.md"
    report = repo.parent / "report.json"
    result = planlint("--diff-base", "main", "--format", "json", "--output", f"json={report}", "--summary", str(summary), "plans/", cwd=repo)
    assert result.status == 0 and result.json["findings"] == [], result  # the suppression holds, but it is not silent:
    assert result.json["suppressions_added"] == [
        {"path": "plans/spendy.yaml", "line": 1, "kind": "disable-file", "codes": ["PL703"], "reason": "approved in chat", "silences": ["PL703"]}
    ]
    text = summary.read_text(encoding="utf-8")
    assert "### Suppressions added by this pull request" in text
    assert "| plans/spendy.yaml:1 | disable-file=PL703 | approved in chat | PL703 |" in text
    comment = planlint("comment", "--report", str(report), "--dry-run")
    assert comment.status == 0 and "| plans/spendy.yaml:1 | disable-file=PL703 | approved in chat | PL703 |" in comment.out


def test_a_suppression_that_was_already_there_is_not_listed(tmp_path, planlint):
    base_plan = "# planlint: disable=PL405 -- metric names differ on purpose\n" + plan("kept")
    repo = policy_repo(tmp_path, "ignore: [PL305]\n", lambda repo: write(repo / "plans" / "kept.yaml", base_plan.replace("owner:", "owner:  ")), {"plans/kept.yaml": base_plan})
    result = diff_lint(planlint, repo)
    assert result.json["suppressions_added"] == [] and result.json["catalog_added"] == []


def test_a_config_change_relints_every_plan_by_the_base_config(tmp_path, planlint):
    files = {".planlint.yaml": "ignore: [PL1]\n", "plans/old.yaml": BAD}
    repo = pr(tmp_path, files, lambda repo: write(repo / ".planlint.yaml", "ignore: [PL1, PL4]\n"))
    result = diff_lint(planlint, repo)
    assert result.json["files"] == 1 and findings(result) == [(".planlint.yaml", "PL705")], result  # PL102 ignored at the base too


def _config_example(text: str) -> tuple[str, str]:
    lines = text.splitlines()
    base_at = lines.index("# base")
    head_at = lines.index("# head")
    return "\n".join(lines[base_at + 1 : head_at]) + "\n", "\n".join(lines[head_at + 1 :]) + "\n"


@pytest.mark.parametrize("which", ["fails", "passes"])
def test_pl705_documented_examples(which, tmp_path, planlint):
    from planlint.rules import RULES

    base, head = _config_example(RULES["PL705"].sections()[which])
    repo = policy_repo(tmp_path, base, lambda repo: write(repo / ".planlint.yaml", head))
    got = [f["code"] for f in diff_lint(planlint, repo).json["findings"]]
    assert got == (["PL705"] if which == "fails" else []), got


def test_pl705_is_listed_and_explained(planlint):
    rules = json.loads(planlint("rules", "--format", "json").out)
    [row] = [r for r in rules if r["code"] == "PL705"]
    assert (row["name"], row["severity"]) == ("policy-changed", "warning")
    explained = planlint("explain", "PL705")
    assert explained.status == 0 and "PL705 policy-changed" in explained.out and "Example (fails):" in explained.out
