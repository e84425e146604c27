"""The sticky pull-request comment against a real HTTP server on 127.0.0.1 (tests/github_server.py)."""

from __future__ import annotations

import json
import time
import traceback
from pathlib import Path

import pytest

from conftest import write
from github_server import FakeGitHub
from planlint.formats.markdown import STICKY_MARKER
from planlint.integrations.github_api import GitHub, GitHubError, upsert_sticky_comment
from planlint.services.http import HTTPError, RetryPolicy

pytestmark = pytest.mark.integration

TOKEN = "ghp_" + "Zx9" * 12  # fake, shaped like a real one
FAST = RetryPolicy(attempts=4, backoff=0.05, max_backoff=0.2, max_wait=5.0)


def report_file(tmp_path: Path, errors: int = 1) -> Path:
    findings = [
        {"code": "PL102", "name": "dataset-release-floating", "severity": "error", "path": "plans/a.yaml",
         "line": 21, "column": 12, "end_line": 21, "end_column": 18,
         "message": "dataset.release 'latest' is floating", "yaml_path": "dataset.release"}
    ] * errors
    payload = {"version": 1, "files": 1, "findings": findings, "summary": {"errors": errors, "warnings": 0}}
    return write(tmp_path / "report.json", json.dumps(payload))


@pytest.fixture
def github():
    with FakeGitHub(TOKEN) as server:
        yield server


@pytest.fixture
def env(tmp_path, monkeypatch, github):
    event = write(tmp_path / "event.json", json.dumps({"action": "synchronize", "number": 7, "pull_request": {"number": 7}}))
    monkeypatch.setenv("GITHUB_API_URL", github.url)
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/plans")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.delenv("PLANLINT_GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


def client(server: FakeGitHub, logs: list[str] | None = None, read_timeout: float = 5.0, waits: list[float] | None = None) -> GitHub:
    """A GitHub client; with `waits`, its clock is injected: each wait is recorded, not taken."""
    return GitHub(
        TOKEN, server.url, timeout=(2.0, read_timeout), policy=FAST, log=(logs.append if logs is not None else lambda m: None),
        sleep=(waits.append if waits is not None else time.sleep),
    )


def assert_no_token(*texts: str) -> None:
    for text in texts:
        assert TOKEN not in text and TOKEN[4:] not in text


def sticky(server: FakeGitHub) -> list[dict]:
    return [c for c in server.comments if c["body"].startswith(STICKY_MARKER)]


# --------------------------------------------------------------------------- the command


def test_first_run_creates_the_next_updates(planlint, tmp_path, env, github):
    for i in range(5):  # three pages of two
        github.add_comment(f"review comment {i} mentioning {STICKY_MARKER} in passing")
    report = report_file(tmp_path)

    first = planlint("comment", "--report", report)
    assert first.status == 0, first
    assert github.calls() == ["GET /repos/acme/plans/issues/7/comments"] * 3 + ["POST /repos/acme/plans/issues/7/comments"]
    assert [r.headers.get("Authorization") for r in github.requests] == [f"Bearer {TOKEN}"] * 4
    assert len(sticky(github)) == 1
    body = sticky(github)[0]["body"]
    assert body.startswith(STICKY_MARKER + "\n## planlint") and "| PL102 | dataset-release-floating | error | 1 |" in body
    assert "created the comment on #7" in first.err

    github.requests.clear()
    second = planlint("comment", "--report", report_file(tmp_path, errors=2))
    assert second.status == 0, second
    assert github.calls()[-1].startswith("PATCH /repos/acme/plans/issues/comments/")
    assert "POST" not in " ".join(github.calls())
    assert len(sticky(github)) == 1 and "**2 errors**" in sticky(github)[0]["body"]
    assert "updated the comment on #7" in second.err
    assert_no_token(first.out, first.err, second.out, second.err)


def test_a_clean_run_updates_but_never_opens_a_comment(planlint, tmp_path, env, github):
    clean = report_file(tmp_path, errors=0)
    result = planlint("comment", "--report", clean)
    assert result.status == 0 and github.comments == [] and "nothing to post" in result.err
    github.add_comment(STICKY_MARKER + "\nold: 3 errors", login="github-actions[bot]")
    planlint("comment", "--report", clean)
    assert "No findings in 1 plan." in sticky(github)[0]["body"]


def test_a_failed_comment_is_a_warning_not_a_failure(planlint, tmp_path, env, github, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_" + "W" * 36)  # wrong token: 401
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = planlint("comment", "--report", report_file(tmp_path))
    assert result.status == 0
    assert "planlint: warning: the pull request comment was not posted" in result.err
    assert "401" in result.err and "Bad credentials" in result.err
    assert result.out.startswith("::warning title=planlint comment::")
    assert "W" * 36 not in result.out + result.err
    assert github.calls() == ["GET /repos/acme/plans/issues/7/comments"]  # 401 is not retried


def test_no_pull_request_no_token_bad_report(planlint, tmp_path, env, monkeypatch, github):
    report = report_file(tmp_path)
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(write(tmp_path / "push.json", json.dumps({"ref": "refs/heads/main"}))))
    assert "not a pull request" in planlint("comment", "--report", report).err
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(tmp_path / "event.json"))
    monkeypatch.delenv("GITHUB_TOKEN")
    result = planlint("comment", "--report", report)
    assert result.status == 0 and "no token" in result.err
    assert github.requests == []
    bad = planlint("comment", "--report", write(tmp_path / "bad.json", '{"version": 1, "findings": [{"code": 1}]}'))
    assert bad.status == 2 and "findings[0]" in bad.err
    assert planlint("comment", "--report", tmp_path / "missing.json").status == 2


def test_dry_run_prints_the_body(planlint, tmp_path):
    result = planlint("comment", "--report", report_file(tmp_path), "--dry-run")
    assert result.status == 0 and result.out.startswith(STICKY_MARKER + "\n## planlint\n")


# --------------------------------------------------------------------------- whose comment is sticky

FORGED = STICKY_MARKER + "\n## planlint\n\n✅ No findings in 1 plan."  # what a PR author would post


def patched_ids(server: FakeGitHub) -> list[int]:
    return [int(r.path.rsplit("/", 1)[1]) for r in server.requests if r.method == "PATCH"]


def test_attack_a_marker_posted_first_by_the_pr_author_is_not_adopted(planlint, tmp_path, env, github):
    """The PR author comments planlint's marker before planlint runs. With the workflow's GITHUB_TOKEN
    (GET /user: 403 "Resource not accessible by integration"), planlint's comments are by
    github-actions[bot]: it writes its own comment, and never edits or trusts the author's."""
    forged = github.add_comment(FORGED, login="mallory")
    first = planlint("comment", "--report", report_file(tmp_path))
    assert first.status == 0, first
    assert "warning" not in first.err  # no refused edit: the author's comment was never tried
    assert github.calls() == ["GET /repos/acme/plans/issues/7/comments", "GET /user", "POST /repos/acme/plans/issues/7/comments"]
    assert forged["body"] == FORGED and patched_ids(github) == []
    ours = [c for c in sticky(github) if c["id"] != forged["id"]]
    assert len(ours) == 1 and ours[0]["user"]["login"] == "github-actions[bot]" and "PL102" in ours[0]["body"]
    assert "ignored 1 comment(s) starting with planlint's marker written by @mallory" in first.err
    assert "created the comment on #7" in first.err

    # Later pushes update planlint's own comment, whatever the author's says or however many they post.
    github.add_comment(FORGED, login="mallory")
    second = planlint("comment", "--report", report_file(tmp_path, errors=2))
    assert second.status == 0 and patched_ids(github) == [ours[0]["id"]]
    assert "**2 errors**" in ours[0]["body"] and forged["body"] == FORGED
    assert len(sticky(github)) == 3 and "POST" not in " ".join(github.calls()[3:])


def test_attack_a_clean_run_does_not_adopt_the_authors_marker(planlint, tmp_path, env, github):
    forged = github.add_comment(STICKY_MARKER + "\n❌ 9 errors (written by the PR author)", login="mallory")
    result = planlint("comment", "--report", report_file(tmp_path, errors=0))
    assert result.status == 0 and "nothing to post" in result.err
    assert patched_ids(github) == [] and forged["body"].endswith("(written by the PR author)") and len(github.comments) == 1


def test_attack_with_a_user_token_only_its_user_is_adopted(planlint, tmp_path, env, monkeypatch):
    """A personal access token: GET /user names the identity. A marked comment by github-actions[bot]
    (say, from an earlier setup) or by the PR author is someone else's."""
    with FakeGitHub(TOKEN, login="planlint-bot", user_token=True) as server:
        monkeypatch.setenv("GITHUB_API_URL", server.url)
        author = server.add_comment(FORGED, login="mallory")
        actions = server.add_comment(FORGED, login="github-actions[bot]")
        own = server.add_comment(STICKY_MARKER + "\nold", login="PlanLint-Bot")  # logins ignore case
        result = planlint("comment", "--report", report_file(tmp_path))
        assert result.status == 0 and "updated the comment on #7" in result.err, result
        assert patched_ids(server) == [own["id"]] and "PL102" in own["body"]
        assert author["body"] == actions["body"] == FORGED
        assert "GET /user" in server.calls()


def test_attack_a_github_app_token_adopts_only_the_named_app(planlint, tmp_path, env, monkeypatch):
    """Another app's installation token: the workflow names the app's bot (PLANLINT_COMMENT_AUTHOR, the
    action's comment-author input); a marked comment by github-actions[bot] or anyone else is left alone."""
    with FakeGitHub(TOKEN, login="acme-planlint[bot]") as server:
        monkeypatch.setenv("GITHUB_API_URL", server.url)
        monkeypatch.setenv("PLANLINT_COMMENT_AUTHOR", "acme-planlint[bot]")
        others = [server.add_comment(FORGED, login="github-actions[bot]"), server.add_comment(FORGED, login="mallory")]
        first = planlint("comment", "--report", report_file(tmp_path))
        assert first.status == 0 and "created the comment on #7" in first.err and patched_ids(server) == []
        planlint("comment", "--report", report_file(tmp_path, errors=2))
        ours = server.comments[-1]
        assert ours["user"]["login"] == "acme-planlint[bot]" and patched_ids(server) == [ours["id"]]
        assert all(c["body"] == FORGED for c in others)
        bad = planlint("comment", "--report", report_file(tmp_path), "--author", "x[bot]; rm -rf /")
        assert bad.status == 0 and "must be a GitHub login" in bad.err and len(patched_ids(server)) == 1


def test_an_identity_that_cannot_be_read_adopts_nothing(planlint, tmp_path, env, github):
    """GET /user failing otherwise (here a 404) is a warning: no comment is guessed to be planlint's."""
    github.add_comment(FORGED, login="github-actions[bot]")
    github.user_answer = (404, {"message": "Not Found"})
    result = planlint("comment", "--report", report_file(tmp_path))
    assert result.status == 0 and "GET /user answered 404" in result.err and "was not posted" in result.err
    assert patched_ids(github) == [] and "POST" not in " ".join(github.calls())


# --------------------------------------------------------------------------- retries and timeouts


def test_server_errors_are_retried_then_succeed(github):
    github.fail("GET", 500)
    github.fail("GET", 502)
    logs: list[str] = []
    action, comment = upsert_sticky_comment(client(github, logs), "acme/plans", 7, STICKY_MARKER + "\nx", STICKY_MARKER)
    assert action == "created"
    assert github.calls() == ["GET /repos/acme/plans/issues/7/comments"] * 3 + ["POST /repos/acme/plans/issues/7/comments"]
    assert len(logs) == 2 and "server error 500" in logs[0] and "attempt 2 of 4" in logs[0]


def test_server_errors_until_the_attempts_run_out(github):
    for _ in range(4):
        github.fail("GET", 503)
    with pytest.raises(HTTPError) as info:
        list(client(github).issue_comments("acme/plans", 7))
    assert "GitHub API: GET /repos/acme/plans/issues/7/comments: server error 503 (after 4 attempts)" == str(info.value)
    assert len(github.requests) == 4


def test_429_honours_retry_after(github):
    github.fail("GET", 429, headers={"Retry-After": "1"})
    logs: list[str] = []
    waits: list[float] = []
    comments = list(client(github, logs, waits=waits).issue_comments("acme/plans", 7))
    assert comments == [] and waits == [1.0]
    assert len(github.requests) == 2 and "rate limited (429); retrying in 1.0s" in logs[0]


def test_secondary_rate_limit_403_waits_for_the_reset(github):
    github.fail("POST", 403, headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(time.time()))},
                body={"message": "You have exceeded a secondary rate limit"})
    action, _ = upsert_sticky_comment(client(github), "acme/plans", 7, STICKY_MARKER + "\nx", STICKY_MARKER)
    assert action == "created" and github.calls().count("POST /repos/acme/plans/issues/7/comments") == 2
    assert len(sticky(github)) == 1


def test_a_wait_past_the_cap_gives_up_at_once(github):
    github.fail("GET", 429, headers={"Retry-After": "3600"})
    logs: list[str] = []
    waits: list[float] = []
    with pytest.raises(HTTPError) as info:
        list(client(github, logs, waits=waits).issue_comments("acme/plans", 7))
    assert waits == []  # gave up without waiting
    assert str(info.value) == "GitHub API: GET /repos/acme/plans/issues/7/comments: rate limited (429); the server asks to wait 3600s, past the 5s limit on waiting"
    assert "limit, giving up" in logs[0]


def test_slow_answer_past_the_read_timeout_is_retried(github):
    github.delay("GET", 1.5)
    logs: list[str] = []
    assert list(client(github, logs, read_timeout=0.4).issue_comments("acme/plans", 7)) == []
    # Had it waited the 1.5 s for the slow answer, there would be no retry and no such line.
    assert len(github.requests) == 2 and "no answer within 0.4s" in logs[0]


def test_a_slow_create_is_not_repeated_blindly(github):
    """POST is not idempotent: after a timeout, list again and update what GitHub did create."""
    github.delay("POST", 1.5)
    logs: list[str] = []
    action, _ = upsert_sticky_comment(client(github, logs, read_timeout=0.4), "acme/plans", 7, STICKY_MARKER + "\nnew", STICKY_MARKER)
    time.sleep(1.2)  # let the slow handler finish
    assert action == "updated"
    assert github.calls() == [
        "GET /repos/acme/plans/issues/7/comments",
        "POST /repos/acme/plans/issues/7/comments",
        "GET /repos/acme/plans/issues/7/comments",
        "GET /user",  # a marked comment: is it this token's?
        f"PATCH /repos/acme/plans/issues/comments/{sticky(github)[0]['id']}",
    ]
    assert len(sticky(github)) == 1
    assert any("checking whether it exists" in line for line in logs)


def test_a_create_answered_with_500_is_checked_before_retrying(github):
    github.fail("POST", 500)
    action, _ = upsert_sticky_comment(client(github), "acme/plans", 7, STICKY_MARKER + "\nnew", STICKY_MARKER)
    assert action == "created" and len(sticky(github)) == 1
    assert github.calls().count("POST /repos/acme/plans/issues/7/comments") == 2


def test_401_is_not_retried_and_keeps_the_token_secret(github):
    wrong = "ghp_" + "Q" * 36
    gh = GitHub(wrong, github.url, timeout=(2.0, 5.0), policy=FAST, log=lambda m: None)
    with pytest.raises(GitHubError) as info:
        upsert_sticky_comment(gh, "acme/plans", 7, "body", STICKY_MARKER)
    assert info.value.status == 401 and "answered 401" in str(info.value) and "Bad credentials" in str(info.value)
    assert len(github.requests) == 1
    rendered = "".join(traceback.format_exception(info.value)) + repr(info.value) + repr(gh.session.__dict__.get("auth"))
    assert wrong not in rendered and wrong[4:] not in rendered


def test_connection_refused_is_retried_then_reported_without_the_token(github):
    url = github.url
    github.__exit__()  # nothing listens there any more
    gh = GitHub(TOKEN, url, timeout=(1.0, 1.0), policy=FAST, log=lambda m: None)
    with pytest.raises(HTTPError) as info:
        list(gh.issue_comments("acme/plans", 7))
    assert str(info.value) == "GitHub API: GET /repos/acme/plans/issues/7/comments: connection refused (after 4 attempts)"
    assert_no_token("".join(traceback.format_exception(info.value)))


# --------------------------------------------------------------------------- redirects


def test_redirect_to_another_host_is_not_followed(github):
    with FakeGitHub(TOKEN, host="127.0.0.2") as other:
        github.redirect("GET", f"{other.url}/repos/acme/plans/issues/7/comments")
        with pytest.raises(HTTPError) as info:
            list(client(github).issue_comments("acme/plans", 7))
        assert other.requests == []  # the token never left for 127.0.0.2
    assert "redirected to another host (127.0.0.2)" in str(info.value)
    assert_no_token(str(info.value))


def test_redirect_on_the_same_host_is_followed_with_the_token(github):
    github.add_comment(STICKY_MARKER + "\nold", login="github-actions[bot]")
    github.redirect("PATCH", f"{github.url}/repos/acme/plans/issues/comments/{github.comments[0]['id']}", status=307)
    action, _ = upsert_sticky_comment(client(github), "acme/plans", 7, STICKY_MARKER + "\nnew", STICKY_MARKER)
    assert action == "updated" and github.comments[0]["body"].endswith("new")
    assert [r.method for r in github.requests] == ["GET", "GET", "PATCH", "PATCH"]  # comments, /user, PATCH, PATCH
    assert github.requests[-1].headers["Authorization"] == f"Bearer {TOKEN}"


def test_pagination_links_to_another_host_are_refused(github):
    with FakeGitHub(TOKEN, host="127.0.0.2") as other:
        for i in range(3):
            github.add_comment(f"c{i}")
        gh = client(github)
        github.url = other.url  # the Link headers now point at the other host
        pages = gh.issue_comments("acme/plans", 7)
        assert [c["body"] for c in [next(pages), next(pages)]] == ["c0", "c1"]
        with pytest.raises(GitHubError, match="refusing to send the token"):
            next(pages)
        assert other.requests == []


def test_retry_after_as_an_http_date(github):
    from email.utils import formatdate

    github.fail("GET", 503, headers={"Retry-After": formatdate(time.time() + 1, usegmt=True)})
    logs: list[str] = []
    assert list(client(github, logs).issue_comments("acme/plans", 7)) == []
    assert len(github.requests) == 2 and "server error 503; retrying in" in logs[0]


def test_a_server_that_echoes_the_token_is_scrubbed(github):
    github.fail("GET", 400, body={"message": f"token {TOKEN} is not allowed here"})
    with pytest.raises(GitHubError) as info:
        list(client(github).issue_comments("acme/plans", 7))
    assert "token *** is not allowed here" in str(info.value)
    assert_no_token("".join(traceback.format_exception(info.value)))


def test_a_refused_create_is_retried(github):
    """A refused connection never reached the server, so even a POST may be tried again."""
    from planlint.services.http import request_with_retries, make_session

    url = github.url
    github.__exit__()
    logs: list[str] = []
    with pytest.raises(HTTPError) as info:
        request_with_retries(make_session(), "POST", f"{url}/x", json={}, policy=FAST, timeout=(1.0, 1.0), log=logs.append)
    assert len(logs) == FAST.attempts - 1 and not info.value.ambiguous
