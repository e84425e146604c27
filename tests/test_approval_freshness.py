"""PL707 counts an approval only for what was approved, and only from someone the base revision trusts.

Attacks, end to end: a real git repository (main, and a pull request branch
with several commits), the real CLI in diff mode, and the GitHub imitation on
127.0.0.1 serving reviews whose `commit_id` is the head each was of and whose
`author_association` says what the reviewer is to the repository.

* A stale approval: the author gets 600 -> 700 approved, then pushes
  700 -> 50,000 under the same standing review.
* A self-chosen approver: `approved_by: "@mallory"`, and mallory, with no
  access to the repository, approves.
"""

from __future__ import annotations

import json

import pytest

from conftest import write
from github_server import FakeGitHub
from test_diff_mode import commit, git, hermetic_git, new_repo, plan  # noqa: F401 - hermetic_git is an autouse fixture

pytestmark = pytest.mark.integration

TOKEN = "ghp_" + "Fr5" * 12
BASE = plan("retail", status="approved", **{"max_spend: 250": "max_spend: 600"})


def head_sha(repo) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def pull_request(tmp_path, *caps: int, approved_by: str = "@carol", base_config: str | None = None):
    """main holds BASE; branch `pr` has one commit per cap in `caps` (each sets max_spend). -> (repo, [shas])."""
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "retail.yaml", BASE)
    if base_config is not None:
        write(repo / ".planlint.yaml", base_config)
    commit(repo, "base")
    git(repo, "checkout", "-q", "-b", "pr")
    shas = []
    for cap in caps:
        write(repo / "plans" / "retail.yaml", BASE.replace("max_spend: 600", f"max_spend: {cap}").replace('approved_by: "@ml-leads"', f'approved_by: "{approved_by}"'))
        commit(repo, f"max_spend {cap}")
        shas.append(head_sha(repo))
    return repo, shas


@pytest.fixture
def github(tmp_path, monkeypatch):
    """The GitHub imitation with pull request #12 by bob, and an Actions run's environment for it."""
    with FakeGitHub(TOKEN) as server:
        server.add_pull(12, author="bob")
        monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
        monkeypatch.setenv("GITHUB_API_URL", server.url)
        monkeypatch.setenv("GITHUB_REPOSITORY", "o/r")
        monkeypatch.setenv("PLANLINT_GITHUB_TOKEN", TOKEN)
        monkeypatch.delenv("GITHUB_TOKEN", raising=False)
        yield server


def judge(planlint, tmp_path, repo, github, head: str, monkeypatch):
    """Lint the pull request whose head is `head`, as the workflow's run for its pull_request event."""
    github.pulls[12]["head_sha"] = head
    event = write(tmp_path / "event.json", json.dumps({
        "action": "synchronize", "number": 12,
        "pull_request": {"number": 12, "user": {"login": "bob"}, "head": {"sha": head}, "base": {"ref": "main"}},
        "repository": {"full_name": "o/r"},
    }))
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    result = planlint("--diff-base", "main", "--format", "json", "--no-cache", cwd=repo)
    assert result.status in (0, 1), result
    assert TOKEN not in result.out + result.err
    return result


def pl707(result) -> list[dict]:
    return [f for f in result.json["findings"] if f["code"] == "PL707"]


# --------------------------------------------------------------------------- stale approvals


def test_attack_an_approval_of_700_does_not_approve_50000(tmp_path, planlint, github, monkeypatch):
    repo, (approved, raised) = pull_request(tmp_path, 700, 50000)
    github.add_review(12, "carol", "APPROVED", commit_id=approved)
    result = judge(planlint, tmp_path, repo, github, raised, monkeypatch)
    (finding,) = pl707(result)
    assert result.status == 1 and finding["yaml_path"] == "budget.approved_by"
    assert f"@carol approved commit {approved[:12]}, which is stale: since then budget.max_spend changed from 700 to 50000" in finding["message"], finding
    # The same review of the head being judged counts.
    github.pulls[12]["reviews"].clear()
    github.add_review(12, "carol", "APPROVED", commit_id=raised)
    assert pl707(judge(planlint, tmp_path, repo, github, raised, monkeypatch)) == []


def test_an_approval_stands_while_what_it_approved_is_unchanged(tmp_path, planlint, github, monkeypatch):
    repo, (approved,) = pull_request(tmp_path, 700)
    github.add_review(12, "carol", "APPROVED", commit_id=approved)
    text = (repo / "plans" / "retail.yaml").read_text(encoding="utf-8")
    write(repo / "plans" / "retail.yaml", text.replace("owner:", "owner: ", 1))  # layout only
    write(repo / "NOTES.md", "why the run needs 700\n")
    commit(repo, "notes")
    assert pl707(judge(planlint, tmp_path, repo, github, head_sha(repo), monkeypatch)) == []
    # ... and a later change of status is a change of what was approved.
    write(repo / "plans" / "retail.yaml", text.replace("status: approved", "status: running"))
    commit(repo, "start")
    (finding,) = pl707(judge(planlint, tmp_path, repo, github, head_sha(repo), monkeypatch))
    assert f"@carol approved commit {approved[:12]}, which is stale: since then metadata.status changed from 'approved' to 'running'" in finding["message"]


def test_a_merge_commit_checkout_still_counts_the_heads_approval(tmp_path, planlint, github, monkeypatch):
    """actions/checkout of a pull_request checks out refs/pull/N/merge: HEAD is a merge commit, not the reviewed head."""
    repo, (approved,) = pull_request(tmp_path, 700)
    git(repo, "checkout", "-q", "main")
    write(repo / "README.md", "moved on\n")
    commit(repo, "main moves on")
    git(repo, "checkout", "-q", "--detach", approved)
    git(repo, "merge", "-q", "--no-edit", "main")
    github.add_review(12, "carol", "APPROVED", commit_id=approved)
    assert pl707(judge(planlint, tmp_path, repo, github, approved, monkeypatch)) == []


def test_an_approval_of_a_commit_this_clone_does_not_have_does_not_count(tmp_path, planlint, github, monkeypatch):
    repo, (raised,) = pull_request(tmp_path, 50000)
    github.add_review(12, "carol", "APPROVED", commit_id="ab" * 20)  # force-pushed away, or never fetched
    (finding,) = pl707(judge(planlint, tmp_path, repo, github, raised, monkeypatch))
    assert f"@carol approved commit {'ab' * 6}, which is not in this clone, so what it approved cannot be compared with the head" in finding["message"]


# --------------------------------------------------------------------------- who may approve


def test_attack_the_pull_request_names_its_own_approver(tmp_path, planlint, github, monkeypatch):
    repo, (raised,) = pull_request(tmp_path, 50000, approved_by="@mallory")
    github.add_review(12, "mallory", "APPROVED", commit_id=raised, association="NONE")
    result = judge(planlint, tmp_path, repo, github, raised, monkeypatch)
    (finding,) = pl707(result)
    assert result.status == 1
    assert ("@mallory approved but has no write access to the repository (author_association NONE, not OWNER, MEMBER or "
            "COLLABORATOR) and is in no team of the base revision's approvers map") in finding["message"], finding
    for association in ("CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR"):
        github.pulls[12]["reviews"].clear()
        github.add_review(12, "mallory", "APPROVED", commit_id=raised, association=association)
        assert f"(author_association {association}," in pl707(judge(planlint, tmp_path, repo, github, raised, monkeypatch))[0]["message"]
    for association in ("OWNER", "MEMBER", "COLLABORATOR"):  # write access: a user named directly may approve
        github.pulls[12]["reviews"].clear()
        github.add_review(12, "mallory", "APPROVED", commit_id=raised, association=association)
        assert pl707(judge(planlint, tmp_path, repo, github, raised, monkeypatch)) == [], association


def test_a_reviewer_the_base_approvers_map_lists_may_approve_without_write_access(tmp_path, planlint, github, monkeypatch):
    repo, (raised,) = pull_request(tmp_path, 50000, approved_by="@erin", base_config='approvers: {"@acme/finance": [erin]}\n')
    github.add_review(12, "erin", "APPROVED", commit_id=raised, association="NONE")  # an outside finance reviewer
    assert pl707(judge(planlint, tmp_path, repo, github, raised, monkeypatch)) == []
