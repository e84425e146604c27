"""What planlint promises about HTTP, for both of its clients (the registry and the GitHub API).

Real servers on 127.0.0.1 (and 127.0.0.2 as "another host"), started by each
test; no mock of requests. Proven here:

* every request carries a finite (connect, read) timeout (the guard in
  conftest.py watches every in-process test; here it is shown to bite, and
  both flows run under it);
* GitHub's rate-limit rules: Retry-After, `x-ratelimit-remaining: 0` with
  `x-ratelimit-reset`, on 403 and on 429, with a cap on the total wait; the
  registry honours them too, with its own cap;
* no Authorization header after a redirect to another host;
* a server that trickles bytes is given up on after connect + 2 x read;
* what a server says (Location, Link, messages) reaches output escaped;
* a fake `ghp_` token never shows in stdout, stderr, log records, exception
  text or reprs, on the error paths too (401, timeouts, refused connections,
  5xx, a server that echoes it, a URL that contains it).
"""

from __future__ import annotations

import json
import logging
import re
import socket
import time
import traceback

import pytest

import conftest
from conftest import FIXTURES, write
from github_server import FakeGitHub
from registry_server import RegistryServer, Reply
from test_registry import PUBLISHED, registry  # noqa: F401 - registry is a fixture

pytestmark = pytest.mark.integration

TOKEN = "ghp_" + "T0kEn" * 7 + "x"  # fake, shaped like a GitHub token
RELEASE = "/v1/datasets/retail-refunds/releases/2026.11.03"
REFERENCE = (FIXTURES / "reference_plan.yaml").read_text(encoding="utf-8")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def assert_no_token(*texts: str) -> None:
    for text in texts:
        assert TOKEN not in text and TOKEN[4:] not in text and TOKEN[4:20] not in text, text[:3000]


@pytest.fixture
def github():
    with FakeGitHub(TOKEN) as server:
        yield server


@pytest.fixture
def logs(caplog):
    """Every log record at DEBUG, urllib3's included: the token must not be in any."""
    caplog.set_level(logging.DEBUG)
    return caplog


def registry_project(tmp_path, monkeypatch, url: str, **settings):
    monkeypatch.setenv("PLANLINT_REGISTRY_TOKEN", TOKEN)
    monkeypatch.setenv("PLANLINT_REGISTRY_URL", url)  # the workflow names the registry the token may go to
    monkeypatch.delenv("PLANLINT_REGISTRY_TOKEN_ENV", raising=False)
    config = {"registry": {"url": url, "token_env": "PLANLINT_REGISTRY_TOKEN", "timeout": 2, "backoff": 0.01, **settings}}
    write(tmp_path / ".planlint.yaml", json.dumps(config) + "\n")
    write(tmp_path / "plans" / "a.yaml", REFERENCE)
    return tmp_path


def comment_env(tmp_path, monkeypatch, api_url: str, token: str = TOKEN) -> str:
    event = write(tmp_path / "event.json", json.dumps({"number": 7, "pull_request": {"number": 7}}))
    monkeypatch.setenv("GITHUB_API_URL", api_url)
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/plans")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_TOKEN", token)
    monkeypatch.delenv("PLANLINT_GITHUB_TOKEN", raising=False)
    finding = {"code": "PL102", "name": "dataset-release-floating", "severity": "error", "path": "plans/a.yaml", "line": 1,
               "column": 1, "end_line": 1, "end_column": 2, "message": "m", "yaml_path": "dataset.release"}
    report = write(tmp_path / "report.json", json.dumps({"version": 1, "files": 1, "findings": [finding]}))
    return str(report)


# --------------------------------------------------------------------------- timeouts


def test_the_timeout_guard_catches_a_request_without_one(registry):
    """The conftest guard is real: a request without a (connect, read) pair is recorded."""
    import requests

    with requests.Session() as session:
        session.get(registry.url + RELEASE)  # no timeout at all
        session.get(registry.url + RELEASE, timeout=5.0)  # one number: the read may still be unbounded by intent
        session.get(registry.url + RELEASE, timeout=(2.0, 5.0))
    caught = list(conftest.UNTIMED_REQUESTS)
    conftest.UNTIMED_REQUESTS.clear()
    assert len(caught) == 2 and "timeout=None" in caught[0] and "timeout=5.0" in caught[1]


def test_every_request_of_both_flows_has_a_timeout(registry, github, tmp_path, monkeypatch, planlint):
    import requests.adapters

    sent = []
    real = requests.adapters.HTTPAdapter.send  # the guard's wrapper

    def counting(self, request, *args, **kwargs):
        sent.append(kwargs.get("timeout"))
        return real(self, request, *args, **kwargs)

    monkeypatch.setattr(requests.adapters.HTTPAdapter, "send", counting)
    registry.listings[("datasets", "retail-refunds")] = ["2026.11.03"]
    registry.script[RELEASE] = [Reply(503), Reply(302, {"Location": RELEASE + "?again"})]
    root = registry_project(tmp_path, monkeypatch, registry.url)
    write(root / "plans" / "a.yaml", REFERENCE.replace('release: "2026.11.03"', "release: latest"))
    assert planlint("--online", "--fix", "--no-cache", "plans/", cwd=root).status == 0
    github.fail("GET", 500)
    github.redirect("POST", f"{github.url}/repos/acme/plans/issues/7/comments")
    report = comment_env(tmp_path, monkeypatch, github.url)
    result = planlint("comment", "--report", report, "--timeout", "3")
    assert "created the comment on #7" in result.err, result
    assert len(sent) == len(registry.requests) + len(github.requests) >= 8
    assert all(conftest._finite_pair(t) for t in sent), sent
    assert conftest.UNTIMED_REQUESTS == []


# --------------------------------------------------------------------------- rate limits


def _client(server, logs=None, max_wait: float = 10.0, read_timeout: float = 5.0, waits=None):
    """A GitHub client whose clock is injected: each wait is recorded in `waits`, not taken."""
    from planlint.integrations.github_api import GitHub
    from planlint.services.http import RetryPolicy

    policy = RetryPolicy(attempts=5, backoff=0.05, max_backoff=0.2, max_wait=max_wait)
    return GitHub(
        TOKEN, server.url, timeout=(2.0, read_timeout), policy=policy, log=(logs.append if logs is not None else lambda m: None),
        sleep=(waits.append if waits is not None else time.sleep),
    )


def test_github_primary_rate_limit_waits_for_the_reset(github):
    reset = int(time.time()) + 1
    github.fail("GET", 403, headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)},
                body={"message": "API rate limit exceeded"})
    lines: list[str] = []
    waits: list[float] = []
    asked = time.time()
    assert list(_client(github, lines, waits=waits).issue_comments("acme/plans", 7)) == []
    done = time.time()
    # The wait, counted from when the answer came (between `asked` and `done`), ends a
    # second past the reset: not the 0.05 s backoff.
    assert len(waits) == 1 and reset + 1 - done - 0.001 <= waits[0] <= reset + 1 - asked + 0.001, (waits, reset, asked, done)
    assert len(github.requests) == 2 and "rate limited (403); retrying in" in lines[0]


@pytest.mark.parametrize("status", [403, 429])
def test_github_retry_after_on_403_and_429(github, status):
    github.fail("GET", status, headers={"Retry-After": "1"}, body={"message": "slow down"})
    lines: list[str] = []
    waits: list[float] = []
    assert list(_client(github, lines, waits=waits).issue_comments("acme/plans", 7)) == []
    assert waits == [1.0]
    assert len(github.requests) == 2 and f"rate limited ({status}); retrying in 1.0s" in lines[0]


def test_github_total_wait_is_capped(github):
    from planlint.services.http import HTTPError

    for _ in range(5):
        github.fail("GET", 429, headers={"Retry-After": "1"})
    lines: list[str] = []
    waits: list[float] = []
    with pytest.raises(HTTPError) as info:
        list(_client(github, lines, max_wait=2.5, waits=waits).issue_comments("acme/plans", 7))
    assert waits == [1.0, 1.0]
    assert len(github.requests) == 3  # waited 1 s twice; a third second would pass 2.5 s
    assert str(info.value).endswith("rate limited (429) (after 3 attempts); the server asks to wait 1s, past the 2.5s limit on waiting")


def test_github_a_403_that_is_not_a_rate_limit_is_an_answer(github):
    from planlint.integrations.github_api import GitHubError

    github.fail("GET", 403, body={"message": "Resource not accessible by integration"})
    with pytest.raises(GitHubError) as info:
        list(_client(github).issue_comments("acme/plans", 7))
    assert info.value.status == 403 and "Resource not accessible by integration" in str(info.value)
    assert len(github.requests) == 1


def test_registry_honours_rate_limits_with_a_cap_on_total_waiting(registry, tmp_path, monkeypatch, planlint, registry_waits):
    registry.script[RELEASE] = [Reply(429, {"Retry-After": "1"})] * 10
    root = registry_project(tmp_path, monkeypatch, registry.url, retries=8, max_retry_after=2.5, workers=1)
    result = planlint("--online", "--no-cache", "plans/", cwd=root)
    times = [r.at for r in registry.requests if r.path == RELEASE]
    assert len(times) == 4  # waits of 1, 1 and the 0.5 s left of the budget
    assert registry_waits == [1.0, 1.0, pytest.approx(0.5)]
    assert f"registry {registry.url} is unavailable: rate limited (429) (after 4 attempts); the server asks to wait 1s, past the 2.5s limit on waiting" in result.err


def test_registry_honours_github_style_rate_limit_headers(registry, tmp_path, monkeypatch, planlint, registry_waits):
    reset = int(time.time()) + 1
    registry.script[RELEASE] = [Reply(403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)})]
    root = registry_project(tmp_path, monkeypatch, registry.url, retries=1, workers=1)
    result = planlint("--online", "--no-cache", "plans/", cwd=root)
    assert result.status == 0 and result.err_without_notes == "", result  # a rate limit, not "the registry refused the token"
    assert len([r for r in registry.requests if r.path == RELEASE]) == 2
    assert len(registry_waits) == 1 and registry_waits[0] >= 1.0  # the reset plus a second, not the backoff


# --------------------------------------------------------------------------- redirects


def test_registry_redirect_to_another_host_drops_the_token(registry, tmp_path, monkeypatch, planlint):
    other = RegistryServer(host="127.0.0.2").start()
    try:
        other.published |= PUBLISHED
        registry.script[RELEASE] = [Reply(301, {"Location": f"{other.url}{RELEASE}"})]
        other.script[RELEASE] = [Reply(307, {"Location": f"{registry.url}/back{RELEASE}"})]
        registry.script["/back" + RELEASE] = [Reply(200)]
        root = registry_project(tmp_path, monkeypatch, registry.url)
        result = planlint("--online", "--no-cache", "plans/", cwd=root)
        assert result.status == 0, result
        assert [(r.path, r.authorization) for r in other.requests] == [(RELEASE, None)]
        assert {r.authorization for r in registry.requests} == {f"Bearer {TOKEN}"}  # its own origin, also coming back
    finally:
        other.stop()


def test_comment_redirect_to_another_host_is_refused(github, tmp_path, monkeypatch, planlint, logs):
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    with FakeGitHub(TOKEN, host="127.0.0.2") as other:
        github.redirect("GET", f"{other.url}/repos/acme/plans/issues/7/comments", status=302)
        report = comment_env(tmp_path, monkeypatch, github.url)
        result = planlint("comment", "--report", report)
        assert other.requests == []
    assert result.status == 0 and "redirected to another host (127.0.0.2)" in result.err
    assert_no_token(result.out, result.err, logs.text)


# --------------------------------------------------------------------------- the token never shows


def _registry_case(name, registry, tmp_path, monkeypatch):
    """(project root, extra CLI args) for one registry error path."""
    if name == "401":
        registry.default = Reply(401)
        return registry_project(tmp_path, monkeypatch, registry.url)
    if name == "5xx":
        registry.default = Reply(503, {"X-Echo": TOKEN}, json.dumps({"error": f"bad token {TOKEN}"}).encode())
        return registry_project(tmp_path, monkeypatch, registry.url, retries=1)
    if name == "timeout":
        registry.default = Reply(delay=5)
        return registry_project(tmp_path, monkeypatch, registry.url, timeout=0.3, retries=1)
    if name == "refused":
        return registry_project(tmp_path, monkeypatch, f"http://127.0.0.1:{_closed_port()}", retries=1)
    if name == "token-in-url-path":
        return registry_project(tmp_path, monkeypatch, f"http://127.0.0.1:{_closed_port()}/{TOKEN}")
    if name == "token-in-bad-url":
        return registry_project(tmp_path, monkeypatch, f"http://127.0.0.1:99999/{TOKEN}")
    if name == "token-as-credentials":
        return registry_project(tmp_path, monkeypatch, f"http://user:{TOKEN}@127.0.0.1:1")
    if name == "redirect-echo":
        registry.default = Reply(302, {"Location": f"http://127.0.0.2:1/{TOKEN}?t={TOKEN}"})
        return registry_project(tmp_path, monkeypatch, registry.url, retries=0)
    raise AssertionError(name)


REGISTRY_CASES = ["401", "5xx", "timeout", "refused", "token-in-url-path", "token-in-bad-url", "token-as-credentials", "redirect-echo"]


@pytest.mark.parametrize("on_error", ["warn", "fail"])
@pytest.mark.parametrize("case", REGISTRY_CASES)
def test_registry_error_paths_never_show_the_token(case, on_error, registry, tmp_path, monkeypatch, planlint, logs):
    root = _registry_case(case, registry, tmp_path, monkeypatch)
    config = json.loads((root / ".planlint.yaml").read_text())
    config["registry"]["on_error"] = on_error
    write(root / ".planlint.yaml", json.dumps(config))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    results = [planlint("--online", "--format", fmt, "plans/", cwd=root) for fmt in ("text", "github", "json")]
    for result in results:
        assert result.status in (0, 1, 2) and "Traceback" not in result.err, result
        assert result.err.strip(), result  # the failure is said, once, in words
        assert_no_token(result.out, result.err)
    assert_no_token(logs.text)
    for path in root.rglob("*"):
        if path.is_file() and path.name != ".planlint.yaml":
            assert TOKEN.encode() not in path.read_bytes(), path


def test_registry_objects_never_show_the_token(registry, monkeypatch):
    from planlint.core.registry_settings import parse_settings
    from planlint.services.registry import Registry

    registry.default = Reply(401)
    settings = parse_settings({"url": registry.url, "token_env": "T", "retries": 0})
    reg = Registry(settings, environ={"T": TOKEN, "PLANLINT_REGISTRY_TOKEN_ENV": "T", "PLANLINT_REGISTRY_URL": registry.url})
    assert reg.published(("datasets", "retail-refunds", "2026.11.03")) is None
    assert "refused the token in $T" in reg.failure
    assert_no_token(repr(reg), repr(reg._client), repr(reg._client.session.__dict__), reg.failure, repr(vars(reg._client)), repr(vars(reg)))


def _comment_case(name, github, tmp_path, monkeypatch):
    """(api url, extra args) for one GitHub error path."""
    if name == "401":
        github.token = "ghp_" + "other" * 7 + "y"  # the server wants another token
        return github.url, []
    if name == "5xx":
        for _ in range(6):
            github.fail("GET", 502, headers={"X-Echo": TOKEN}, body={"message": f"upstream said {TOKEN}"})
        return github.url, ["--max-wait", "1"]
    if name == "echo-400":
        github.fail("GET", 400, body={"message": f"token {TOKEN} is not allowed, nor {TOKEN[4:]}"})
        return github.url, []
    if name == "timeout":
        for _ in range(6):
            github.delay("GET", 2.0)
        return github.url, ["--timeout", "0.3", "--max-wait", "0.5"]
    if name == "refused":
        return f"http://127.0.0.1:{_closed_port()}", ["--max-wait", "0.5"]
    if name == "token-in-url-path":
        return f"http://127.0.0.1:{_closed_port()}/{TOKEN}", ["--max-wait", "0.5"]
    if name == "token-in-bad-url":
        return f"http://127.0.0.1:99999/{TOKEN}", []
    if name == "token-in-query":
        return f"{github.url}/?access_token={TOKEN}", []
    if name == "token-as-credentials":
        return f"http://x-access-token:{TOKEN}@127.0.0.1:{_closed_port()}", []
    if name == "redirect-echo":
        github.redirect("GET", f"http://127.0.0.2:1/{TOKEN}?t={TOKEN}")
        return github.url, []
    raise AssertionError(name)


COMMENT_CASES = ["401", "5xx", "echo-400", "timeout", "refused", "token-in-url-path", "token-in-bad-url", "token-in-query", "token-as-credentials", "redirect-echo"]


@pytest.mark.parametrize("case", COMMENT_CASES)
def test_comment_error_paths_never_show_the_token(case, github, tmp_path, monkeypatch, planlint, logs):
    api_url, args = _comment_case(case, github, tmp_path, monkeypatch)
    report = comment_env(tmp_path, monkeypatch, api_url)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = planlint("comment", "--report", report, *args)
    assert result.status == 0 and "planlint: warning: the pull request comment was not posted" in result.err, result
    assert result.out.startswith("::warning title=planlint comment::"), result
    assert_no_token(result.out, result.err, logs.text)


@pytest.mark.parametrize("case", COMMENT_CASES)
def test_github_client_exceptions_never_show_the_token(case, github, tmp_path, monkeypatch):
    from planlint.integrations.github_api import GitHub, GitHubError, upsert_sticky_comment
    from planlint.services.http import HTTPError, RetryPolicy

    api_url, _ = _comment_case(case, github, tmp_path, monkeypatch)
    lines: list[str] = []
    with pytest.raises(HTTPError) as info:
        gh = GitHub(TOKEN, api_url, timeout=(1.0, 0.3), policy=RetryPolicy(attempts=3, backoff=0.05, max_wait=0.5), log=lines.append)
        upsert_sticky_comment(gh, "acme/plans", 7, "body", "<!-- m -->")
    text = "".join(traceback.format_exception(info.value)) + repr(info.value) + repr(info.value.args)
    assert_no_token(text, *lines)
    if case in ("token-in-url-path", "token-in-bad-url", "token-in-query"):
        assert isinstance(info.value, GitHubError) and "must not contain the token" in str(info.value)


# --------------------------------------------------------------------------- trickling servers


#: Seconds that only a hang takes: a trickling server would hold a client without
#: a deadline for hours (100,000 bytes at 0.1 s each).
HANG = 120.0


class Trickle:
    """A server on 127.0.0.1 that answers one byte at a time, each just inside the read timeout.

    `part="headers"`: the status line, then the headers byte by byte;
    `part="body"`: the headers, then a 100,000-byte body byte by byte.
    It stops by itself when the test ends (or the client leaves).
    """

    def __init__(self, part: str, every: float = 0.1) -> None:
        import threading

        self.part, self.every = part, every
        self.stop = threading.Event()
        self.connections = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> "Trickle":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(5)
        self.sock.close()

    def _serve(self) -> None:
        import threading

        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn) -> None:
        try:
            conn.recv(65536)
            if self.part == "headers":
                head, drip = b"HTTP/1.1 200 OK\r\n", b"X-Slow: " + b"a" * 100_000 + b"\r\n\r\n"
            else:
                head, drip = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n", b"a" * 100_000
            conn.sendall(head)
            for byte in drip:
                if self.stop.wait(self.every):
                    break
                conn.sendall(bytes([byte]))
        except OSError:
            pass
        finally:
            conn.close()


@pytest.mark.parametrize("part", ["headers", "body"])
def test_a_trickling_github_answer_is_given_up_at_the_deadline(part):
    from planlint.integrations.github_api import GitHub
    from planlint.services.http import HTTPError, RetryPolicy

    with Trickle(part) as server:
        gh = GitHub(TOKEN, server.url, timeout=(0.5, 0.5), policy=RetryPolicy(attempts=2, backoff=0.05, max_wait=1.0), log=lambda m: None)
        start = time.monotonic()
        with pytest.raises(HTTPError) as info:
            list(gh.issue_comments("acme/plans", 7))
        elapsed = time.monotonic() - start
    # Two attempts of connect + 2 x read, then done. A real socket deadline, so real
    # time: at least the two deadlines, and an upper bound that only catches a hang
    # (the server would trickle for hours), never one that measures speed.
    assert 2 * 1.5 <= elapsed < HANG
    assert str(info.value).endswith("no complete answer within 1.5s (after 2 attempts)")
    assert server.connections == 2


def test_a_trickling_registry_is_one_warning_within_the_deadline(tmp_path, monkeypatch, planlint):
    with Trickle("body") as server:
        root = registry_project(tmp_path, monkeypatch, server.url, timeout=0.5, retries=0, workers=1)
        start = time.monotonic()
        result = planlint("--online", "--no-cache", "plans/", cwd=root)
        elapsed = time.monotonic() - start
    assert result.status == 0 and result.err.count("planlint: warning:") == 1, result
    assert "is unavailable: no complete answer within 1.5s" in result.err
    assert 1.5 <= elapsed < HANG  # the deadline, and no hang (see above)


# --------------------------------------------------------------------------- what a server says is escaped


@pytest.mark.parametrize("location", ["http://ev\x1b]8;;x\x07il.example/x", "http://ev\x1bil\x85.example/x", "http://[unclosed/x", "ftp://127.0.0.1/x", "http://127.0.0.1:99999999/x"])
def test_a_hostile_redirect_is_one_clean_line(location, github, registry, tmp_path, monkeypatch, planlint):
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    github.redirect("GET", location)
    result = planlint("comment", "--report", comment_env(tmp_path, monkeypatch, github.url))
    registry.default = Reply(302, {"Location": location})
    lint = planlint("--online", "--no-cache", "plans/", cwd=registry_project(tmp_path / "r", monkeypatch, registry.url, retries=0))
    for output in (result, lint):
        text = output.out + output.err
        assert output.status in (0, 1) and "Traceback" not in text and "internal error" not in text, output
        assert "\x1b" not in text and "\x07" not in text, text
        assert all(re.fullmatch(r"::(error|warning|notice) [^:]*::[^\r\n]*", line) for line in output.out.splitlines() if line.startswith("::"))
    assert "planlint: warning: the pull request comment was not posted" in result.err
    assert "planlint: warning: registry" in lint.err
