"""PL707 approval-not-verified: `budget.approved_by` checked against the pull request's GitHub reviews.

Real git repositories, the real CLI, and a GitHub imitation on 127.0.0.1
(tests/github_server.py) serving the reviews API's response shapes: several
reviews per user, pagination over 100 reviews, 403 and 404.
"""

from __future__ import annotations

import json

import pytest

from conftest import write
from github_server import FakeGitHub
from test_diff_mode import commit, git, hermetic_git, new_repo, plan  # noqa: F401 - hermetic_git is an autouse fixture

pytestmark = pytest.mark.integration

TOKEN = "ghp_" + "Zq4" * 12
APPROVE = {"max_spend: 250": "max_spend: 1600", 'approved_by: "@ml-leads"': 'approved_by: "@carol"'}


def repository(tmp_path, head_plan: str, base_plan: str | None = None, base_config: str | None = None, head_config: str | None = None):
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "retail.yaml", base_plan or plan("retail", status="draft", **{"max_spend: 250": "max_spend: 600"}))
    if base_config is not None:
        write(repo / ".planlint.yaml", base_config)
    commit(repo, "base")
    git(repo, "checkout", "-q", "-b", "pr")
    write(repo / "plans" / "retail.yaml", head_plan)
    if head_config is not None:
        write(repo / ".planlint.yaml", head_config)
    commit(repo, "pull request")
    return repo


@pytest.fixture
def github(tmp_path, monkeypatch):
    """A pull request #12 by bob on the GitHub imitation, and the environment of an Actions run for it."""
    with FakeGitHub(TOKEN) as server:
        server.add_pull(12, author="bob", head_sha="1" * 40)  # reviews are of the head the event names
        event = write(tmp_path / "event.json", json.dumps({
            "action": "opened", "number": 12,
            "pull_request": {"number": 12, "user": {"login": "bob"}, "base": {"sha": "0" * 40}, "head": {"sha": "1" * 40}},
            "repository": {"full_name": "o/r"},
        }))
        for key, value in {"GITHUB_EVENT_PATH": str(event), "GITHUB_EVENT_NAME": "pull_request", "GITHUB_API_URL": server.url,
                           "GITHUB_REPOSITORY": "o/r", "PLANLINT_GITHUB_TOKEN": TOKEN}.items():
            monkeypatch.setenv(key, value)
        monkeypatch.delenv("GITHUB_TOKEN", raising=False)
        yield server


def pl707(result) -> list[dict]:
    return [f for f in result.json["findings"] if f["code"] == "PL707"]


def lint(planlint, repo, *extra):
    result = planlint("--diff-base", "main", "--format", "json", "--no-cache", *extra, cwd=repo)
    assert result.status in (0, 1), result
    assert TOKEN not in result.out + result.err
    return result


def test_fires_without_approval_and_not_with_one(tmp_path, planlint, github):
    repo = repository(tmp_path, plan("retail", status="approved", **APPROVE))
    (finding,) = pl707(lint(planlint, repo))
    assert (finding["severity"], finding["yaml_path"]) == ("error", "budget.approved_by")
    assert "metadata.status becomes 'approved' from 'draft' and budget.max_spend rose from 600 to 1600" in finding["message"]
    assert "@carol has not approved" in finding["message"]
    github.add_review(12, "dave", "APPROVED")  # approves, but is not named
    assert pl707(lint(planlint, repo))
    github.add_review(12, "Carol", "APPROVED")  # logins compare without case
    assert pl707(lint(planlint, repo)) == []
    assert github.calls().count("GET /repos/o/r/pulls/12/reviews") == 3
    seen = [r for r in github.requests if "/reviews" in r.path]
    assert all(r.headers["Authorization"] == f"Bearer {TOKEN}" for r in seen)
    assert all(r.path.endswith("?per_page=100") for r in seen)


@pytest.mark.parametrize("reviews, words", [
    ([("bob", "APPROVED")], "@bob is the pull request's author (self-approval does not count)"),
    ([("carol", "DISMISSED")], "@carol had their approval dismissed"),
    ([("carol", "APPROVED"), ("carol", "CHANGES_REQUESTED")], "@carol requested changes"),
    ([("carol", "COMMENTED")], "@carol has not approved"),
])
def test_approvals_that_do_not_count(reviews, words, tmp_path, planlint, github):
    repo = repository(tmp_path, plan("retail", status="approved", **{
        "max_spend: 250": "max_spend: 1600", 'approved_by: "@ml-leads"': 'approved_by: "@carol @bob"'}))
    for login, state in reviews:
        github.add_review(12, login, state)
    (finding,) = pl707(lint(planlint, repo))
    assert words in finding["message"]


def test_a_later_comment_does_not_undo_an_approval(tmp_path, planlint, github):
    repo = repository(tmp_path, plan("retail", status="approved", **APPROVE))
    github.add_review(12, "carol", "CHANGES_REQUESTED")
    github.add_review(12, "carol", "APPROVED")
    github.add_review(12, "carol", "COMMENTED")
    assert pl707(lint(planlint, repo)) == []


def test_teams_come_from_the_base_revisions_approvers_map(tmp_path, planlint, github):
    base_config = 'approvers: {"@acme/ml-leads": [carol, "@Dave"]}\n'
    head = plan("retail", status="approved", **{"max_spend: 250": "max_spend: 1600", 'approved_by: "@ml-leads"': 'approved_by: "@acme/ml-leads"'})
    repo = repository(tmp_path, head, base_config=base_config)
    (finding,) = pl707(lint(planlint, repo))
    assert "@carol has not approved; @dave has not approved" in finding["message"]
    github.add_review(12, "dave", "APPROVED")
    assert pl707(lint(planlint, repo)) == []

    # The pull request adds its own author's friend to the team: the base map decides, so it does not count.
    github2 = tmp_path / "two"
    repo = repository(github2, head, base_config=base_config,
                      head_config='approvers: {"@acme/ml-leads": [carol, dave, mallory]}\n')
    github.pulls[12]["reviews"].clear()
    github.add_review(12, "mallory", "APPROVED")
    (finding,) = pl707(lint(planlint, repo))
    assert "mallory" not in finding["message"]

    # A team the base map does not list cannot be verified.
    repo = repository(tmp_path / "three", head)
    (finding,) = pl707(lint(planlint, repo))
    assert "@acme/ml-leads is not in the approvers map of the base revision's configuration" in finding["message"]


def test_pagination_over_100_reviews(tmp_path, planlint, github):
    repo = repository(tmp_path, plan("retail", status="approved", **APPROVE))
    for index in range(140):
        github.add_review(12, f"reader{index}", "COMMENTED")
    github.add_review(12, "carol", "APPROVED")  # on page 2
    assert pl707(lint(planlint, repo)) == []
    pages = [r.path for r in github.requests if "/reviews" in r.path]
    assert pages == ["/repos/o/r/pulls/12/reviews?per_page=100", "/repositories/1296269/pulls/12/reviews?per_page=100&page=2"]
    for index in range(60):
        github.add_review(12, f"late{index}", "COMMENTED")
    github.add_review(12, "carol", "CHANGES_REQUESTED")  # on page 3, superseding the approval on page 2
    (finding,) = pl707(lint(planlint, repo))
    assert "@carol requested changes" in finding["message"]


@pytest.mark.parametrize("status, message, words", [
    (403, "Resource not accessible by integration", "answered 403 Forbidden: Resource not accessible by integration (the token needs pull-requests: read)"),
    (404, "Not Found", "answered 404 Not Found: Not Found (is #12 a pull request of o/r, and can the token see it?)"),
])
def test_reviews_that_cannot_be_read_fail_closed(status, message, words, tmp_path, planlint, github):
    repo = repository(tmp_path, plan("retail", status="approved", **APPROVE))
    github.add_review(12, "carol", "APPROVED")
    body = {"message": message, "documentation_url": "https://docs.github.com/rest/pulls/reviews#list-reviews-for-a-pull-request",
            "status": str(status)}
    github.fail("GET", status, body=body)
    (finding,) = pl707(lint(planlint, repo))
    assert "could not be verified: the pull request's reviews could not be read: GitHub API: GET /repos/o/r/pulls/12/reviews " in finding["message"]
    assert words in finding["message"]
    assert github.calls().count("GET /repos/o/r/pulls/12/reviews") == 1  # a 403 that is no rate limit, and a 404, are not retried


def test_a_pull_request_the_token_cannot_see_is_a_404(tmp_path, planlint, github, monkeypatch):
    repo = repository(tmp_path, plan("retail", status="approved", **APPROVE))
    event = write(tmp_path / "event99.json", json.dumps({"pull_request": {"number": 99, "user": {"login": "bob"}}}))
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    (finding,) = pl707(lint(planlint, repo))
    assert "404 Not Found" in finding["message"]


def test_a_server_error_is_retried(tmp_path, planlint, github):
    repo = repository(tmp_path, plan("retail", status="approved", **APPROVE))
    github.add_review(12, "carol", "APPROVED")
    github.fail("GET", 502)
    result = lint(planlint, repo)
    assert pl707(result) == []
    assert github.calls().count("GET /repos/o/r/pulls/12/reviews") == 2
    assert "server error 502; retrying" in result.err


def test_no_token_fails_closed_and_no_output_holds_the_token(tmp_path, planlint, github, monkeypatch):
    repo = repository(tmp_path, plan("retail", status="approved", **APPROVE))
    monkeypatch.delenv("PLANLINT_GITHUB_TOKEN")
    (finding,) = pl707(lint(planlint, repo))
    assert "no token in PLANLINT_GITHUB_TOKEN or GITHUB_TOKEN" in finding["message"]
    assert github.requests == []
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    github.fail("GET", 401, body={"message": f"Bad credentials {TOKEN}"})  # a server that echoes the token
    for fmt in ("json", "text", "sarif", "github", "markdown", "junit"):
        result = planlint("--diff-base", "main", "--format", fmt, "--no-cache", cwd=repo)
        assert TOKEN not in result.out + result.err and TOKEN[4:] not in result.out + result.err, fmt


def test_a_new_approved_plan_needs_approval_and_unrelated_changes_ask_github_nothing(tmp_path, planlint, github):
    repo = repository(tmp_path, plan("retail", status="draft", **{"max_steps: 400": "max_steps: 300"}))
    assert pl707(lint(planlint, repo)) == [] and github.requests == []  # nothing needs an approval: no API call
    write(repo / "plans" / "new.yaml", plan("new", status="running"))
    (finding,) = pl707(lint(planlint, repo))
    assert finding["path"] == "plans/new.yaml" and "metadata.status becomes 'running'" in finding["message"]
    github.add_review(12, "ml-leads", "APPROVED")  # the reference plan's approved_by: "@ml-leads"
    assert pl707(lint(planlint, repo)) == []


def test_pull_request_review_event(tmp_path, planlint, github, monkeypatch):
    repo = repository(tmp_path, plan("retail", status="approved", **APPROVE))
    event = write(tmp_path / "review.json", json.dumps({
        "action": "submitted", "review": {"id": 1, "state": "approved", "user": {"login": "carol"}},
        "pull_request": {"number": 12, "user": {"login": "bob"}, "head": {"sha": "1" * 40}}, "repository": {"full_name": "o/r"},
    }))
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request_review")
    assert pl707(lint(planlint, repo))  # the payload's review is not trusted as a verdict: the API's list is
    github.add_review(12, "carol", "APPROVED")
    assert pl707(lint(planlint, repo)) == []


def test_without_a_pull_request_pl707_does_not_run_and_says_so(tmp_path, planlint, monkeypatch):
    for key in ("GITHUB_EVENT_PATH", "GITHUB_EVENT_NAME"):
        monkeypatch.delenv(key, raising=False)
    repo = repository(tmp_path, plan("retail", status="approved", **APPROVE))
    result = planlint("--diff-base", "main", "--no-cache", cwd=repo)
    assert "PL707" not in result.out
    assert "planlint: note: PL707 (approval-not-verified) did not run: this is no GitHub pull request run" in result.err
    markdown = planlint("--diff-base", "main", "--format", "markdown", "--no-cache", cwd=repo).out
    assert "PL707 (approval-not-verified) did not run" in markdown
    event = write(tmp_path / "push.json", json.dumps({"ref": "refs/heads/main", "pull_request": {"number": 3}}))
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_EVENT_NAME", "push")
    assert "PL707 (approval-not-verified) did not run" in planlint("--diff-base", "main", "--no-cache", cwd=repo).err
    assert "did not run" not in planlint("--diff-base", "main", "--no-cache", "--ignore", "PL707", cwd=repo).err.replace("PL207", "")


def test_client_lists_reviews_across_pages():
    from planlint.integrations.github_api import GitHub
    from planlint.core.reviews import standing_verdicts

    with FakeGitHub(TOKEN) as server:
        server.add_pull(5, author="bob")
        for index in range(230):
            server.add_review(5, f"u{index % 7}", ("APPROVED", "COMMENTED", "CHANGES_REQUESTED", "DISMISSED")[index % 4])
        reviews = GitHub(TOKEN, server.url).pull_request_reviews("o/r", 5)
        assert len(reviews) == 230 and [r["id"] for r in reviews] == sorted(r["id"] for r in reviews)
        assert {"id", "user", "state", "commit_id", "submitted_at", "author_association", "_links"} <= set(reviews[0])
        assert len([r for r in server.requests if "/reviews" in r.path]) == 3
        expected: dict[str, str] = {}
        for review in reviews:
            if review["state"] != "COMMENTED":
                expected[review["user"]["login"]] = review["state"]
        assert standing_verdicts(reviews) == expected


def test_a_suppression_comment_in_the_plan_does_not_silence_pl707(tmp_path, planlint, github):
    head = plan("retail", status="approved", **{
        "max_spend: 250": "max_spend: 1600",
        'approved_by: "@ml-leads"': 'approved_by: "@carol"  # planlint: disable=PL707 -- approved in chat',
    })
    head = "# planlint: disable-file=PL707 -- trust me\n" + head
    repo = repository(tmp_path, head)
    result = lint(planlint, repo)
    assert len(pl707(result)) == 1
    assert {f["code"] for f in result.json["findings"]} == {"PL707", "PL010"}  # and both comments are called useless


def test_approvers_may_also_sit_under_budget(tmp_path, planlint, github):
    head = plan("retail", status="approved", **{"max_spend: 250": "max_spend: 1600", 'approved_by: "@ml-leads"': 'approved_by: "@acme/leads"'})
    repo = repository(tmp_path, head, base_config="budget:\n  committed_limit: {USD: 100000}\n  approvers: {acme/leads: [dave]}\n")
    assert pl707(lint(planlint, repo))
    github.add_review(12, "dave", "APPROVED")
    assert pl707(lint(planlint, repo)) == []
