"""Diff mode (--diff-base) and PL701-PL704, on real git repositories built in tmp dirs.

Cases read like the product: `tests/fixtures/diff/*.yaml` hold a base and a
head fragment (the convention of the diff rules' docstrings, see
`planlint.rules.diff`) with the expected findings marked inline
(`# expect: PL701`); a marker on the `# head: deleted` / `# head: renamed`
line means line 1 of the deleted or renamed file. Every case is committed on
`main`, changed on a branch, and linted with `planlint --diff-base main`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from conftest import FIXTURES, REFERENCE_PLAN, run_process, write
from github_server import FakeGitHub
from plan_overlay import build, split_files, write_files
from planlint.rules import RULES

pytestmark = pytest.mark.integration

DIFF_FIXTURES = sorted((FIXTURES / "diff").glob("*.yaml"))
REF = REFERENCE_PLAN.read_text(encoding="utf-8")
_MARK = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")
_HEAD = re.compile(r"^#\s*head\s*(?::\s*(deleted|renamed))?\s*(?:#.*)?$")


# --------------------------------------------------------------------------- real git


@pytest.fixture(autouse=True)
def hermetic_git(monkeypatch, tmp_path):
    """Git (ours and GitPython's) reads no user or system config and commits with a fixed identity."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "planlint tests")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "tests@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "planlint tests")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "tests@example.invalid")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def new_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "commit.gpgsign", "false")
    return path


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)


# Commits every example's history starts with, made with a fixed identity and date so that
# their hashes are these: the commits the examples' run configs pin (commit_sha must be a
# commit of the repository, PL902; in diff mode one of the reviewed history whose rollout is
# the head's). The first holds the examples' rollout (an empty rollouts/retail-refund/main.py),
# the second is a later commit with the same rollout.
SEEDS = ("b616b904640efb0e4ff74ec7a18ad76c5f57dd1b", "a6e4c8d356b8ebda9e3ef77b73e19d80189886bc")
_SEED_FILES = ({"rollouts/retail-refund/main.py": ""}, {"NOTES.md": "a later commit, the rollout unchanged\n"})


def seed_commits(repo: Path) -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+0000", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+0000"}
    for message, files, sha in zip(("the reviewed rollout (seed)", "a later commit (seed)"), _SEED_FILES, SEEDS):
        write_files(repo, files)
        git(repo, "add", "-A")
        subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", message], cwd=repo, env=env, check=True, capture_output=True)
        assert git(repo, "rev-parse", "HEAD").strip() == sha


def plan(name: str = "retail-refund-window", status: str = "approved", **replace: str) -> str:
    text = REF.replace("name: retail-refund-window", f"name: {name}").replace("status: approved", f"status: {status}")
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


# --------------------------------------------------------------------------- base/head fragments


def split_example(text: str) -> tuple[str, str, str | None, Counter]:
    """(base fragment, head fragment, "deleted" | "renamed" | None, expectations on the head line)."""
    lines = text.splitlines()
    base_at = next(i for i, line in enumerate(lines) if line.strip() == "# base")
    head_at = next(i for i, line in enumerate(lines) if _HEAD.match(line.strip()))
    head_line = lines[head_at]
    action = _HEAD.match(head_line.strip()).group(1)
    at_line_1 = Counter()
    mark = _MARK.search(head_line)
    if mark:
        at_line_1.update((1, c.strip()) for c in mark.group(1).split(",") if c.strip())
    return "\n".join(lines[base_at + 1 : head_at]) + "\n", "\n".join(lines[head_at + 1 :]) + "\n", action, at_line_1


def expected(text: str) -> Counter:
    found = Counter()
    for number, line in enumerate(text.splitlines(), start=1):
        match = _MARK.search(line)
        if match:
            found.update((number, c.strip()) for c in match.group(1).split(",") if c.strip())
    return found


def run_example(tmp_path: Path, planlint, example: str):
    """Commit the base on main, the head on a branch; lint with --diff-base main. (result, head path, head text)."""
    base_fragment, head_fragment, action, at_line_1 = split_example(example)
    base_fragment, base_files = split_files(base_fragment)  # `--- PATH` sections: other files (run configs)
    head_fragment, head_files = split_files(head_fragment)
    base_text = build(base_fragment)
    head_text = build(head_fragment, reference=base_text)
    repo = new_repo(tmp_path / "repo")
    seed_commits(repo)
    write(repo / "plans" / "plan.yaml", base_text)
    write_files(repo, base_files)
    commit(repo, "base")
    git(repo, "checkout", "-q", "-b", "change")
    write_files(repo, head_files)
    head_path = "plans/plan.yaml"
    if action == "deleted":
        git(repo, "rm", "-q", head_path)
        head_text = None
    elif action == "renamed":
        git(repo, "mv", head_path, "plans/renamed.yaml")
        head_path = "plans/renamed.yaml"
        write(repo / head_path, head_text)
    else:
        write(repo / head_path, head_text)
    commit(repo, "change")
    with pull_request_reviews(tmp_path, example):
        result = planlint("--diff-base", "main", "--format", "json", cwd=repo)
    assert result.status in (0, 1), result
    return result, head_path, head_text, at_line_1


_REVIEWS = re.compile(r"^#\s*reviews:\s*(.*?)(?:,\s*author:\s*(\S+))?\s*$", re.M)
TOKEN = "ghp_" + "Rv7" * 12
HEAD_SHA = "2" * 40  # the pull request's head, as the event names it


@contextlib.contextmanager
def pull_request_reviews(tmp_path: Path, example: str):
    """`# reviews: alice APPROVED, carol CHANGES_REQUESTED, author: bob` in an example: run it as
    a GitHub pull request (#12) whose reviews a local GitHub imitation serves (PL707)."""
    match = _REVIEWS.search(example)
    if not match:
        yield None
        return
    with FakeGitHub(TOKEN) as github:
        github.add_pull(12, author=match.group(2) or "octocat", head_sha=HEAD_SHA)  # the reviews are of the head judged
        for item in filter(None, (part.strip() for part in match.group(1).split(","))):
            login, state = item.split()
            github.add_review(12, login, state)
        event = write(tmp_path / "event.json", json.dumps({"action": "opened", "number": 12, "pull_request": {
            "number": 12, "user": {"login": match.group(2) or "octocat"}, "head": {"sha": HEAD_SHA}}}))
        env = {"GITHUB_EVENT_PATH": str(event), "GITHUB_EVENT_NAME": "pull_request", "GITHUB_API_URL": github.url,
               "GITHUB_REPOSITORY": "o/r", "PLANLINT_GITHUB_TOKEN": TOKEN}
        saved = {key: os.environ.get(key) for key in env}
        os.environ.update(env)
        try:
            yield github
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


@pytest.mark.parametrize("fixture", DIFF_FIXTURES, ids=lambda p: p.stem)
def test_diff_fixture(fixture: Path, tmp_path, planlint):
    text = fixture.read_text(encoding="utf-8")
    result, head_path, head_text, at_line_1 = run_example(tmp_path, planlint, text)
    findings = result.json["findings"]
    want = Counter({(head_path, line, code): n for (line, code), n in (expected(head_text or "") + at_line_1).items()})
    for path, other in split_files(split_example(text)[1])[1].items():  # markers in the head's other files
        want.update({(path, line, code): n for (line, code), n in expected(other).items()})
    got = Counter((f["path"], f["line"], f["code"]) for f in findings)
    assert got == want, "\n".join(f"{f['path']}:{f['line']}:{f['column']} {f['code']} {f['message']}" for f in findings)
    assert result.status == (1 if any(f["severity"] == "error" for f in findings) else 0)  # warnings (PL709) pass


DIFF_CODES = sorted(code for code, rule in RULES.items() if rule.scope == "diff")


def test_diff_rules_are_registered():
    assert DIFF_CODES == ["PL701", "PL702", "PL703", "PL704", "PL706", "PL707", "PL708", "PL709", "PL710", "PL711"]


@pytest.mark.parametrize("code", DIFF_CODES)
def test_failing_example_fires(code, tmp_path, planlint):
    result, *_ = run_example(tmp_path, planlint, RULES[code].sections()["fails"])
    assert code in {f["code"] for f in result.json["findings"]}, result


@pytest.mark.parametrize("code", DIFF_CODES)
def test_passing_example_is_clean(code, tmp_path, planlint):
    result, *_ = run_example(tmp_path, planlint, RULES[code].sections()["passes"])
    assert result.json["findings"] == [], result


def test_every_diff_rule_fires_in_a_fixture():
    seen = set()
    for fixture in DIFF_FIXTURES:
        _, head, _, at_line_1 = split_example(fixture.read_text(encoding="utf-8"))
        seen |= {code for _, code in expected(head) + at_line_1}  # the plan's and its other files' markers
    assert set(DIFF_CODES) <= seen


def test_pl701_points_at_the_splits_key_when_eval_is_removed(tmp_path, planlint):
    example = "# base\n# head\nsplits:\n  train: {path: data/retail/train.jsonl}\n  boundary: {group_key: customer_id, time_key: created_at, cutoff: 2026-08-01}\n"
    result, _, head_text, _ = run_example(tmp_path, planlint, example)
    (pl701,) = [f for f in result.json["findings"] if f["code"] == "PL701"]
    line = head_text.splitlines().index("splits:") + 1
    assert (pl701["line"], pl701["column"], pl701["yaml_path"]) == (line, 1, "splits.eval")
    assert "removed" in pl701["message"] and "approved" in pl701["message"]


# --------------------------------------------------------------------------- a pull request


def test_pull_request_with_every_kind_of_change(tmp_path, planlint):
    """Modified, added, renamed, deleted, uncommitted and untracked plans; files outside PATHs; main moving on."""
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "frozen.yaml", plan("frozen"))
    write(repo / "plans" / "release.yaml", plan("release", **{'release: "2026.11.03"': 'release: "2026.10.01"'}))
    write(repo / "plans" / "spend.yaml", plan("spend"))
    write(repo / "plans" / "running.yaml", plan("running", status="running"))
    write(repo / "plans" / "moving.yaml", plan("moving", status="running"))
    write(repo / "plans" / "untouched.yaml", plan("untouched", **{'release: "2026.11.03"': "release: latest"}))
    write(repo / "other" / "outside.yaml", plan("outside"))
    write(repo / "README.md", "plans live in plans/\n")
    commit(repo, "base")
    git(repo, "checkout", "-q", "-b", "feature")

    # committed on the branch
    write(repo / "plans" / "frozen.yaml", plan("frozen", **{"path: data/retail/eval.jsonl": "path: data/retail/eval-v2.jsonl"}))
    write(repo / "plans" / "release.yaml", plan("release"))  # back to 2026.11.03, baseline unchanged
    git(repo, "rm", "-q", "plans/running.yaml")
    (repo / "plans" / "archive").mkdir()
    git(repo, "mv", "plans/moving.yaml", "plans/archive/moving.yaml")
    write(repo / "plans" / "added.yaml", plan("added", **{'release: "2026.11.03"': "release: latest"}))
    write(repo / "other" / "outside.yaml", plan("outside", **{'release: "2026.11.03"': "release: latest"}))
    write(repo / "README.md", "plans live in plans/ (changed)\n")
    commit(repo, "feature work")

    # main moves on after the branch point: not part of this pull request
    git(repo, "checkout", "-q", "main")
    write(repo / "plans" / "untouched.yaml", plan("untouched", status="draft", **{'release: "2026.11.03"': "release: nightly"}))
    commit(repo, "main moves on")
    git(repo, "checkout", "-q", "feature")

    # not committed at all: a modification and a new, untracked plan
    write(repo / "plans" / "spend.yaml", plan("spend", **{"max_spend: 250": "max_spend: 400"}))
    write(repo / "plans" / "scratch.yaml", plan("untouched"))  # reuses an unchanged plan's name

    result = planlint("--diff-base", "main", "--format", "json", cwd=repo)
    assert result.status == 1, result
    got = sorted((f["path"], f["code"], f["yaml_path"]) for f in result.json["findings"])
    assert got == [
        ("plans/added.yaml", "PL102", "dataset.release"),
        ("plans/archive/moving.yaml", "PL704", ""),
        ("plans/frozen.yaml", "PL701", "splits.eval.path"),
        ("plans/release.yaml", "PL702", "dataset.release"),
        ("plans/running.yaml", "PL704", ""),
        ("plans/scratch.yaml", "PL005", "metadata.name"),
        ("plans/spend.yaml", "PL703", "budget.max_spend"),
    ]
    deleted = next(f for f in result.json["findings"] if f["path"] == "plans/running.yaml")
    assert (deleted["line"], deleted["column"]) == (1, 1)
    scratch = next(f for f in result.json["findings"] if f["code"] == "PL005")
    assert "plans/untouched.yaml" in scratch["message"]
    # seven changed plans were looked at (README and other/ are outside PATHs)
    assert result.json["files"] == 7

    # Restricting PATHs restricts the check; naming other/ brings its change in.
    only = planlint("--diff-base", "main", "--format", "json", "plans/archive", "other", cwd=repo)
    assert sorted((f["path"], f["code"]) for f in only.json["findings"]) == [
        ("other/outside.yaml", "PL102"), ("other/outside.yaml", "PL702"), ("plans/archive/moving.yaml", "PL704")
    ]

    # A plain run still lints everything, unchanged plans included.
    full = planlint("--format", "json", "plans/", cwd=repo)
    assert ("plans/untouched.yaml", "PL102") in {(f["path"], f["code"]) for f in full.json["findings"]}


def test_text_output_of_a_deleted_plan_has_no_excerpt(tmp_path, planlint):
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "running.yaml", plan("running", status="running"))
    commit(repo, "base")
    git(repo, "rm", "-q", "plans/running.yaml")  # uncommitted deletion, against HEAD itself
    result = planlint("--diff-base", "HEAD", cwd=repo)
    assert result.status == 1
    lines = result.out.splitlines()
    assert lines[0].startswith("plans/running.yaml:1:1: PL704 ") and lines[0].endswith("[active-plan-removed]")
    assert lines[1] == "" and lines[2] == "1 file checked: 1 error, 0 warnings."


def test_every_output_format_copes_with_a_deleted_plan(tmp_path, planlint):
    from planlint.formats.reporters import REPORTERS

    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "running.yaml", plan("running", status="running"))
    commit(repo, "base")
    (repo / "plans" / "running.yaml").unlink()
    for fmt in REPORTERS:
        result = planlint("--diff-base", "HEAD", "--format", fmt, cwd=repo)
        assert result.status == 1, (fmt, result)
        assert "plans/running.yaml" in result.out, fmt
        assert "Traceback" not in result.err


def test_unstaged_move_is_followed_as_a_rename(tmp_path, planlint):
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "a.yaml", plan("a", status="running"))
    commit(repo, "base")
    (repo / "plans" / "a.yaml").rename(repo / "plans" / "b.yaml")  # mv, not git mv
    result = planlint("--diff-base", "HEAD", "--format", "json", cwd=repo)
    (finding,) = result.json["findings"]
    assert (finding["path"], finding["code"], finding["line"]) == ("plans/b.yaml", "PL704", 1)
    assert "renamed from 'plans/a.yaml'" in finding["message"]


def test_no_change_no_finding_and_unchanged_plans_are_not_linted(tmp_path, planlint):
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "bad.yaml", plan("bad", **{'release: "2026.11.03"': "release: latest"}))
    commit(repo, "base")
    result = planlint("--diff-base", "HEAD", "--format", "json", cwd=repo)
    assert result.status == 0 and result.json["findings"] == [] and result.json["files"] == 0


def test_paths_are_shown_relative_to_the_current_directory(tmp_path, planlint):
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "a.yaml", plan("a"))
    commit(repo, "base")
    write(repo / "plans" / "a.yaml", plan("a", **{"max_spend: 250": "max_spend: 300"}))
    result = planlint("--diff-base", "HEAD", "--format", "json", ".", cwd=repo / "plans")
    assert [f["path"] for f in result.json["findings"]] == ["a.yaml"]


def test_annotated_tag_as_base(tmp_path, planlint):
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "a.yaml", plan("a"))
    commit(repo, "base")
    git(repo, "tag", "-a", "v1", "-m", "release 1")
    write(repo / "plans" / "a.yaml", plan("a", **{"max_spend: 250": "max_spend: 260"}))
    commit(repo, "raise")
    result = planlint("--diff-base", "v1", "--format", "json", cwd=repo)
    assert [f["code"] for f in result.json["findings"]] == ["PL703"]


def test_subprocess_run_has_no_traceback_and_right_exit(tmp_path):
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "a.yaml", plan("a", status="running"))
    commit(repo, "base")
    (repo / "plans" / "a.yaml").unlink()
    result = run_process("--diff-base", "HEAD", cwd=repo)
    assert result.status == 1 and "PL704" in result.out and result.err_without_notes == ""


# --------------------------------------------------------------------------- errors: exit 2, with the fix


def test_unknown_revision(tmp_path, planlint):
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "a.yaml", plan("a"))
    commit(repo, "base")
    result = planlint("--diff-base", "no-such-branch", cwd=repo)
    assert result.status == 2 and result.out == ""
    assert "unknown revision 'no-such-branch'" in result.err and "git fetch" in result.err


def test_missing_local_branch_suggests_the_remote_one(tmp_path, planlint):
    origin = new_repo(tmp_path / "origin")
    write(origin / "plans" / "a.yaml", plan("a"))
    commit(origin, "base")
    git(origin, "checkout", "-q", "-b", "feature")
    write(origin / "plans" / "a.yaml", plan("a", **{"max_spend: 250": "max_spend: 300"}))
    commit(origin, "raise")
    git(tmp_path, "clone", "-q", "--branch", "feature", f"file://{origin}", "work")
    result = planlint("--diff-base", "main", cwd=tmp_path / "work")
    assert result.status == 2 and "did you mean origin/main?" in result.err
    result = planlint("--diff-base", "origin/main", "--format", "json", cwd=tmp_path / "work")
    assert [f["code"] for f in result.json["findings"]] == ["PL703"]


def test_not_a_repository(tmp_path, planlint):
    write(tmp_path / "plans" / "a.yaml", plan("a"))
    result = planlint("--diff-base", "main", cwd=tmp_path)
    assert result.status == 2 and result.out == ""
    assert "not inside one" in result.err and "run planlint from the repository" in result.err


def test_shallow_clone_says_fetch_depth_0(tmp_path, planlint):
    origin = new_repo(tmp_path / "origin")
    write(origin / "plans" / "a.yaml", plan("a"))
    commit(origin, "base")
    git(origin, "checkout", "-q", "-b", "feature")
    for n in range(3):
        write(origin / "plans" / "a.yaml", plan("a", **{"max_spend: 250": f"max_spend: {300 + n}"}))
        commit(origin, f"raise {n}")
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{origin}", "shallow")
    shallow = tmp_path / "shallow"
    assert (shallow / ".git" / "shallow").exists()
    for rev in ("main", "origin/main"):
        result = planlint("--diff-base", rev, cwd=shallow)
        assert result.status == 2, result
        assert "shallow clone" in result.err and "fetch-depth: 0" in result.err
    # The base commit fetched but not the history between: still no merge-base.
    git(shallow, "fetch", "-q", "--depth", "1", "origin", "main:refs/remotes/origin/main")
    result = planlint("--diff-base", "origin/main", cwd=shallow)
    assert result.status == 2 and "no common ancestor" in result.err and "fetch-depth: 0" in result.err
    # With the whole history it works.
    git(shallow, "fetch", "-q", "--unshallow", "origin")
    result = planlint("--diff-base", "origin/main", "--format", "json", cwd=shallow)
    assert result.status == 1 and [f["code"] for f in result.json["findings"]] == ["PL703"]


@pytest.mark.parametrize("rev", ["--output={target}", "-o{target}", "--no-index", "main..feature", "HEAD:plans/a.yaml", ":/raise", "main feature", "../../etc/passwd", "/etc/passwd"])
def test_option_like_and_odd_revisions_are_refused(rev, tmp_path, planlint):
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "a.yaml", plan("a"))
    commit(repo, "base")
    target = tmp_path / "written-by-git"
    result = planlint(f"--diff-base={rev.format(target=target)}", cwd=repo)
    assert result.status == 2 and "is not a revision" in result.err, result
    assert not target.exists()


def test_option_as_separate_argument_writes_nothing(tmp_path, planlint):
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "a.yaml", plan("a"))
    commit(repo, "base")
    target = tmp_path / "x"
    result = planlint("--diff-base", f"--output={target}", cwd=repo)
    assert result.status == 2 and not target.exists()


def test_a_tree_is_not_a_base(tmp_path, planlint):
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "a.yaml", plan("a"))
    commit(repo, "base")
    result = planlint("--diff-base", "HEAD^{tree}", cwd=repo)
    assert result.status == 2 and "names a tree, not a commit" in result.err


def test_empty_repository(tmp_path, planlint):
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "a.yaml", plan("a"))
    result = planlint("--diff-base", "HEAD", cwd=repo)
    assert result.status == 2, result


def test_unrelated_histories(tmp_path, planlint):
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "a.yaml", plan("a"))
    commit(repo, "base")
    git(repo, "checkout", "-q", "--orphan", "other")
    commit(repo, "unrelated")
    result = planlint("--diff-base", "main", cwd=repo)
    assert result.status == 2 and "no common history" in result.err


def test_path_outside_the_repository_or_missing(tmp_path, planlint):
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "a.yaml", plan("a"))
    commit(repo, "base")
    (tmp_path / "elsewhere").mkdir()
    result = planlint("--diff-base", "HEAD", str(tmp_path / "elsewhere"), cwd=repo)
    assert result.status == 2 and "outside the git repository" in result.err
    result = planlint("--diff-base", "HEAD", "nope/", cwd=repo)
    assert result.status == 2 and "no such file or directory" in result.err


def test_deleted_directory_is_still_a_path(tmp_path, planlint):
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "a.yaml", plan("a", status="running"))
    commit(repo, "base")
    git(repo, "rm", "-q", "-r", "plans")
    result = planlint("--diff-base", "HEAD", "--format", "json", cwd=repo)  # default PATH plans/ is gone
    assert [(f["path"], f["code"]) for f in result.json["findings"]] == [("plans/a.yaml", "PL704")]


def test_diff_rules_respect_select_and_ignore(tmp_path, planlint):
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "a.yaml", plan("a"))
    commit(repo, "base")
    write(repo / "plans" / "a.yaml", plan("a", **{"max_spend: 250": "max_spend: 300"}))
    assert planlint("--diff-base", "HEAD", "--ignore", "PL7", cwd=repo).status == 0
    result = planlint("--diff-base", "HEAD", "--select", "PL703", "--format", "json", cwd=repo)
    assert [f["code"] for f in result.json["findings"]] == ["PL703"]


def test_git_rename_that_changes_the_plan_name_is_a_deletion(tmp_path, planlint):
    """Plans from one template look alike to git; a plan is the same plan only if it keeps its name."""
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "a.yaml", plan("a", status="running"))
    commit(repo, "base")
    git(repo, "mv", "plans/a.yaml", "plans/b.yaml")
    write(repo / "plans" / "b.yaml", plan("b", status="draft"))
    result = planlint("--diff-base", "HEAD", "--format", "json", cwd=repo)
    (finding,) = result.json["findings"]
    assert (finding["path"], finding["code"]) == ("plans/a.yaml", "PL704")
    assert "deleted" in finding["message"]


def test_plain_runs_do_not_import_git(tmp_path):
    """Start-up stays lean: GitPython is imported only by --diff-base."""
    import sys

    from conftest import ROOT

    code = (
        "import sys; from planlint.cli import main; "
        "status = main(['--format', 'json', '--output', 'out.json', 'plans/']); "
        "print(status, 'git' in sys.modules, 'planlint.modes.diff' in sys.modules)"
    )
    write(tmp_path / "plans" / "a.yaml", plan("a"))
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert proc.stdout.split() == ["0", "False", "False"], proc


def test_git_refusing_the_repository_is_reported_with_gits_reason(tmp_path, planlint):
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "a.yaml", plan("a"))
    commit(repo, "base")
    (repo / ".git" / "config").write_text("[core\nthis is not git config\n", encoding="utf-8")
    result = planlint("--diff-base", "HEAD", cwd=repo)
    assert result.status == 2 and "git cannot use the repository" in result.err and "config" in result.err, result


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to hand the repository to another user")
def test_dubious_ownership_says_safe_directory(tmp_path, planlint):
    import shutil

    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "a.yaml", plan("a"))
    commit(repo, "base")
    for path in [repo, *repo.rglob("*")]:
        os.chown(path, 65534, 65534, follow_symlinks=False)
    try:
        result = planlint("--diff-base", "HEAD", cwd=repo)
        assert result.status == 2 and "dubious ownership" in result.err and "safe.directory" in result.err, result
    finally:
        shutil.rmtree(repo, ignore_errors=True)


def test_deeply_nested_change_is_compared_without_recursion(tmp_path, planlint):
    """Even with the parser's depth limit raised, comparing versions cannot overflow the stack."""
    depth = 3000
    repo = new_repo(tmp_path / "repo")
    (repo / ".planlint.yaml").write_text("limits: {max_depth: 10000}\n", encoding="utf-8")
    deep = lambda leaf: "[" * depth + leaf + "]" * depth  # noqa: E731
    eval_line = "    path: data/retail/eval.jsonl"
    write(repo / "plans" / "a.yaml", plan("a", **{eval_line: eval_line + f"\n    x-notes: {deep('1')}"}))
    commit(repo, "base")
    write(repo / "plans" / "a.yaml", plan("a", **{eval_line: eval_line + f"\n    x-notes: {deep('2')}"}))
    result = planlint("--diff-base", "HEAD", "--format", "json", cwd=repo)
    assert result.status == 1, result
    (finding,) = [f for f in result.json["findings"] if f["code"] == "PL701"]
    assert finding["yaml_path"].startswith("splits.eval[\"x-notes\"][0][0]") or finding["yaml_path"].startswith("splits.eval.x-notes[0][0]")


def test_suppressing_a_diff_rule_is_judged_only_where_diff_rules_ran(tmp_path, planlint):
    """A `disable=PL703` is not 'unused' (PL010) in a plain run, where PL703 cannot fire."""
    repo = new_repo(tmp_path / "repo")
    suppressed = {"max_spend: 250": "max_spend: 250  # planlint: disable=PL703 -- raises approved in FIN-1"}
    write(repo / "plans" / "a.yaml", plan("a", **suppressed))
    commit(repo, "base")
    assert planlint("--format", "json", cwd=repo).json["findings"] == []
    # Diff mode, plan unchanged in a way PL703 cares about: now the suppression is judged, and unused.
    write(repo / "plans" / "a.yaml", plan("a", **suppressed, **{"estimated_cost: 180": "estimated_cost: 170"}))
    result = planlint("--diff-base", "HEAD", "--format", "json", cwd=repo)
    assert [f["code"] for f in result.json["findings"]] == ["PL010"]
    # ... and used when it silences a real PL703.
    write(repo / "plans" / "a.yaml", plan("a", **{"max_spend: 250": "max_spend: 300  # planlint: disable=PL703 -- raises approved in FIN-1"}))
    assert planlint("--diff-base", "HEAD", "--format", "json", cwd=repo).json["findings"] == []


def _fuzz_pair():
    """Strategy: a corpus plan as base, and a head made from it by edits the diff rules care about."""
    import copy
    import json

    from hypothesis import given, strategies as st

    from test_fuzz import CORPUS_DATA, FUZZ, values  # puts tests/fuzz on sys.path

    from harness import to_yaml

    routes = [("metadata", "status"), ("splits", "eval"), ("splits", "eval", "path"), ("splits", "boundary"),
              ("splits", "boundary", "cutoff"), ("dataset", "release"), ("baseline",), ("baseline", "result", "value"),
              ("budget", "max_spend"), ("budget", "approved_by"), ("budget",), ("splits",), ("metadata",)]
    edit_value = st.one_of(values, st.sampled_from(["running", "approved", "completed", "draft", 250, 400, 1e308, -1, "2026.12.01"]))

    @st.composite
    def pair(draw):
        base = copy.deepcopy(draw(st.sampled_from(CORPUS_DATA)))
        if draw(st.booleans()) and isinstance(base.get("metadata"), dict):
            base["metadata"]["status"] = draw(st.sampled_from(["running", "approved", "completed", "draft"]))
        head = copy.deepcopy(base)
        for _ in range(draw(st.integers(1, 4))):
            route = draw(st.sampled_from(routes))
            parent = head
            for part in route[:-1]:
                parent = parent.get(part) if isinstance(parent, dict) else None
            if not isinstance(parent, dict):
                continue
            if draw(st.integers(0, 3)) == 0:
                parent.pop(route[-1], None)
            elif route[-1] == "max_spend" and draw(st.booleans()):
                parent[route[-1]] = draw(st.integers(1, 10**6))
            else:
                parent[route[-1]] = draw(edit_value)
        dump = to_yaml if draw(st.booleans()) else json.dumps
        return dump(base).encode("utf-8", "surrogatepass"), dump(head).encode("utf-8", "surrogatepass")

    return FUZZ, given(pair(), st.sampled_from(["modified", "renamed", "deleted"]))


_FUZZ_SETTINGS, _FUZZ_GIVEN = _fuzz_pair()


@_FUZZ_SETTINGS
@_FUZZ_GIVEN
def test_fuzz_diff_rules_on_mutated_base_and_head(versions, kind):
    """The diff rules on hostile base/head pairs: no crash, findings placed and clean in every format."""
    import json
    import tempfile

    from planlint.core.config import Config
    from planlint.modes.diff import _run_diff_rules  # the real placement and suppression path
    from planlint.core.model import FileResult, is_plan
    from planlint.engine.lint import lint_file
    from planlint.engine.run import finish
    from planlint.formats.reporters import REPORTERS
    from planlint.core.loader import load_text
    from planlint.rules.diff import PlanChange

    base_bytes, head_bytes = versions
    base_loaded = load_text(base_bytes.decode("utf-8", "replace"))
    base = base_loaded.data if not base_loaded.fatal and is_plan(base_loaded.data) else None
    with tempfile.TemporaryDirectory() as tmp:
        config = Config(root=Path(tmp))
        if kind == "deleted":
            result = FileResult("plans/gone.yaml", is_plan=True)
        else:
            path = Path(tmp) / "plan.yaml"
            path.write_bytes(head_bytes)
            result = lint_file("plan.yaml", path, True, config)
        _run_diff_rules(result, base, PlanChange(kind, result.path, "plans/old.yaml"), config)
        report = finish([result], config)
        for fmt, reporter in REPORTERS.items():
            out = reporter(report, color=False, quiet=False, statistics=True)
            if fmt == "json":
                json.loads(out)
    for finding in report.findings:
        assert finding.line >= 1 and finding.column >= 1, finding
        assert "\n" not in finding.message and "\x1b" not in finding.message and "\u202e" not in finding.message, finding
        assert finding.yaml_path.isprintable(), finding
