"""PL105/PL106 online: a real registry on 127.0.0.1, started by each test.

No mock of requests: the client talks HTTP to `registry_server.RegistryServer`,
which records every request. Covered: published / not published, retries on
5xx and 429 (Retry-After honoured and capped), a hang past the timeout, a
closed port, 401, redirects, caching, de-duplication, URL quoting, and that
the token never shows up in any output or file.
"""

from __future__ import annotations

import json
import os
import socket
import time

import pytest

from conftest import FIXTURES, run_process, write
from registry_server import RegistryServer, Reply

pytestmark = pytest.mark.integration

TOKEN = "ghp_" + "x7Q2" * 9  # looks like a GitHub token; must never be printed
REFERENCE = (FIXTURES / "reference_plan.yaml").read_text(encoding="utf-8")
RELEASE = "/v1/datasets/retail-refunds/releases/2026.11.03"
DB_STATE = "/v1/graders/tau-retail-db-state/versions/1.4.2"
TONE = "/v1/graders/polite-tone-judge/versions/3.0.1"
PUBLISHED = {("datasets", "retail-refunds", "2026.11.03"), ("graders", "tau-retail-db-state", "1.4.2"), ("graders", "polite-tone-judge", "3.0.1")}


@pytest.fixture
def registry():
    server = RegistryServer().start()
    server.published |= PUBLISHED
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def token(monkeypatch):
    monkeypatch.setenv("PLANLINT_REGISTRY_TOKEN", TOKEN)
    # `project()` sets it: the workflow names the registry the token may go to. Registered here so that it is undone.
    monkeypatch.setenv("PLANLINT_REGISTRY_URL", "")
    monkeypatch.delenv("PLANLINT_REGISTRY_TOKEN_ENV", raising=False)
    return TOKEN


def _plan(name: str, release: str = "2026.11.03") -> str:
    return REFERENCE.replace("name: retail-refund-window", f"name: {name}").replace('release: "2026.11.03"', f'release: "{release}"')


def project(tmp_path, url: str, *, catalog: str | None = None, trusted: bool = True, **settings) -> object:
    """A project whose config names the registry at `url`; `trusted`: the environment names it too
    ($PLANLINT_REGISTRY_URL, set by the workflow), so the token may go there."""
    if trusted:
        os.environ["PLANLINT_REGISTRY_URL"] = url  # the `token` fixture restores it
    registry = {"url": url, "token_env": "PLANLINT_REGISTRY_TOKEN", "timeout": 2, "backoff": 0.01, **settings}
    config = {"registry": registry}
    if catalog is not None:
        write(tmp_path / "catalog.yaml", catalog)
        config["catalog"] = "catalog.yaml"
    write(tmp_path / ".planlint.yaml", json.dumps(config) + "\n")
    return tmp_path


def _assert_no_token(tmp_path, *results) -> None:
    for result in results:
        assert TOKEN not in result.out and TOKEN not in result.err
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------- answers


def test_published_and_not_published(registry, tmp_path, planlint):
    root = project(tmp_path, registry.url)
    write(root / "plans" / "a.yaml", _plan("a"))
    write(root / "plans" / "b.yaml", _plan("b", "2026.11.30"))
    result = planlint("--online", "--format", "json", "plans/", cwd=root)
    assert result.status == 1, result
    [finding] = result.json["findings"]
    assert (finding["code"], finding["path"], finding["yaml_path"]) == ("PL105", "plans/b.yaml", "dataset.release")
    assert finding["message"].startswith(f"dataset 'retail-refunds' has no published release '2026.11.30' (according to the registry at {registry.url})")
    # Both plans share their graders: each distinct lookup is made once.
    assert sorted(registry.paths()) == sorted([RELEASE, "/v1/datasets/retail-refunds/releases/2026.11.30", DB_STATE, TONE])
    assert {r.authorization for r in registry.requests} == {f"Bearer {TOKEN}"}
    _assert_no_token(tmp_path, result)


def test_grader_version_not_published(registry, tmp_path, planlint):
    registry.published.discard(("graders", "polite-tone-judge", "3.0.1"))
    root = project(tmp_path, registry.url)
    write(root / "plans" / "a.yaml", _plan("a"))
    result = planlint("--online", "--format", "json", "plans/", cwd=root)
    assert [(f["code"], f["yaml_path"]) for f in result.json["findings"]] == [("PL106", "graders[1].version")]


def test_lookups_are_deduplicated_across_many_plans(registry, tmp_path, planlint):
    root = project(tmp_path, registry.url)
    for index in range(12):
        write(root / "plans" / f"p{index}.yaml", _plan(f"p{index}", "2026.11.03" if index % 2 else "2026.10.01"))
    result = planlint("--online", "plans/", cwd=root)
    assert result.status == 1
    assert sorted(registry.paths()) == sorted([RELEASE, "/v1/datasets/retail-refunds/releases/2026.10.01", DB_STATE, TONE])


def test_the_registry_is_used_only_online(registry, tmp_path, planlint):
    root = project(tmp_path, registry.url)
    write(root / "plans" / "b.yaml", _plan("b", "2026.11.30"))
    assert planlint("plans/", cwd=root).status == 0
    assert registry.requests == []
    project(tmp_path, registry.url, online=True)  # `online: true`: every run checks
    assert planlint("plans/", cwd=root).status == 1
    assert len(registry.requests) == 3


def test_online_wins_over_the_catalog(registry, tmp_path, planlint):
    catalog = 'datasets: {retail-refunds: {releases: ["2026.11.03"]}}\n'
    registry.published.add(("datasets", "retail-refunds", "2026.11.30"))  # cut after the catalog was written
    root = project(tmp_path, registry.url, catalog=catalog)
    write(root / "plans" / "b.yaml", _plan("b", "2026.11.30"))
    assert [f["code"] for f in planlint("--format", "json", "plans/", cwd=root).json["findings"]] == ["PL105"]
    assert planlint("--online", "--format", "json", "plans/", cwd=root).json["findings"] == []


# --------------------------------------------------------------------------- cache


def test_a_second_run_makes_no_requests(registry, tmp_path, planlint):
    root = project(tmp_path, registry.url)
    write(root / "plans" / "b.yaml", _plan("b", "2026.11.30"))
    first = planlint("--online", "--format", "json", "plans/", cwd=root)
    assert len(registry.requests) == 3
    second = planlint("--online", "--format", "json", "plans/", cwd=root)
    assert len(registry.requests) == 3, "the cache answered"
    assert second.json["findings"] == first.json["findings"] and second.status == 1
    cache = root / ".planlint_cache"
    assert len(list((cache / "registry").glob("*.json"))) == 3
    assert (cache / ".gitignore").read_text(encoding="utf-8").endswith("*\n")
    _assert_no_token(tmp_path, first, second)


def test_no_cache_and_cache_dir(registry, tmp_path, planlint):
    root = project(tmp_path, registry.url)
    write(root / "plans" / "a.yaml", _plan("a"))
    planlint("--online", "--no-cache", "plans/", cwd=root)
    planlint("--online", "--no-cache", "plans/", cwd=root)
    assert len(registry.requests) == 6 and not (root / ".planlint_cache").exists()
    planlint("--online", "--cache-dir", "elsewhere", "plans/", cwd=root)
    planlint("--online", "--cache-dir", "elsewhere", "plans/", cwd=root)
    assert len(registry.requests) == 9
    assert len(list((root / "elsewhere" / "registry").glob("*.json"))) == 3


def test_cache_dir_from_config_and_ttl(registry, tmp_path, planlint):
    root = project(tmp_path, registry.url, cache_ttl=0)  # nothing is kept
    write(root / "plans" / "a.yaml", _plan("a"))
    planlint("--online", "plans/", cwd=root)
    planlint("--online", "plans/", cwd=root)
    assert len(registry.requests) == 6
    config = json.loads((root / ".planlint.yaml").read_text(encoding="utf-8"))
    config["cache_dir"] = "build/cache"
    del config["registry"]["cache_ttl"]
    write(root / ".planlint.yaml", json.dumps(config))
    planlint("--online", ".", cwd=root / "plans")  # relative to the config, wherever planlint runs
    assert (root / "build" / "cache" / "registry").is_dir()


def test_a_stale_or_corrupt_cache_entry_is_asked_again(registry, tmp_path, planlint):
    root = project(tmp_path, registry.url)
    write(root / "plans" / "a.yaml", _plan("a"))
    planlint("--online", "plans/", cwd=root)
    for entry in (root / ".planlint_cache" / "registry").glob("*.json"):
        data = json.loads(entry.read_text(encoding="utf-8"))
        if data["url"].endswith("/1.4.2"):
            entry.write_text("{not json", encoding="utf-8")
        else:
            data["stored"] -= 2 * 24 * 3600
            entry.write_text(json.dumps(data), encoding="utf-8")
    planlint("--online", "plans/", cwd=root)
    assert len(registry.requests) == 6


# --------------------------------------------------------------------------- failures


def test_5xx_is_retried(registry, tmp_path, planlint):
    registry.script[RELEASE] = [Reply(500), Reply(503)]
    root = project(tmp_path, registry.url, retries=2)
    write(root / "plans" / "a.yaml", _plan("a"))
    result = planlint("--online", "plans/", cwd=root)
    assert result.status == 0 and result.err_without_notes == "", result
    assert registry.paths().count(RELEASE) == 3


def test_429_honours_retry_after(registry, tmp_path, planlint, registry_waits):
    registry.script[RELEASE] = [Reply(429, {"Retry-After": "1"})]
    root = project(tmp_path, registry.url, retries=1)
    write(root / "plans" / "a.yaml", _plan("a"))
    assert planlint("--online", "plans/", cwd=root).status == 0
    assert registry.paths().count(RELEASE) == 2
    assert registry_waits == [1.0]  # waited as asked, not the 0.01 s backoff


def test_retry_after_is_capped(registry, tmp_path, planlint, registry_waits):
    registry.script[RELEASE] = [Reply(429, {"Retry-After": "3600"})]
    root = project(tmp_path, registry.url, retries=1, max_retry_after=0.2)
    write(root / "plans" / "a.yaml", _plan("a"))
    assert planlint("--online", "plans/", cwd=root).status == 0
    assert registry_waits == [pytest.approx(0.2)]  # cut to max_retry_after, not the hour asked
    assert registry.paths().count(RELEASE) == 2


def test_5xx_that_persists_is_one_warning(registry, tmp_path, planlint):
    registry.default = Reply(502)
    root = project(tmp_path, registry.url, retries=1)
    write(root / "plans" / "a.yaml", _plan("a"))
    result = planlint("--online", "plans/", cwd=root)
    assert result.status == 0
    assert result.err_without_notes == f"planlint: warning: registry {registry.url} is unavailable: server error 502 (after 2 attempts); pins were not checked for publication (registry.on_error: warn)\n"


def test_a_hang_past_the_timeout(registry, tmp_path, planlint):
    registry.default = Reply(delay=600)
    root = project(tmp_path, registry.url, timeout=0.3, retries=0)
    write(root / "plans" / "a.yaml", _plan("a"))
    write(root / "plans" / "b.yaml", _plan("b", "2026.11.30"))
    started = time.monotonic()
    result = planlint("--online", "plans/", cwd=root)
    # A real socket timeout, so real time, with a bound that only catches a hang:
    # the server would answer after ten minutes.
    assert time.monotonic() - started < 120
    assert result.status == 0
    assert result.err.count("planlint: warning:") == 1
    assert "is unavailable: no answer within 0.3s" in result.err


def test_connection_refused_warns_once_and_falls_back_to_the_catalog(tmp_path, planlint):
    url = f"http://127.0.0.1:{_closed_port()}"
    catalog = 'datasets: {retail-refunds: {releases: ["2026.11.03"]}}\n'
    root = project(tmp_path, url, catalog=catalog)
    write(root / "plans" / "a.yaml", _plan("a"))
    write(root / "plans" / "b.yaml", _plan("b", "2026.11.30"))
    result = planlint("--online", "--format", "json", "plans/", cwd=root)
    assert result.status == 1
    assert [f["code"] for f in result.json["findings"]] == ["PL105"]
    assert "according to catalog.yaml" in result.json["findings"][0]["message"]
    assert result.err == (
        f"planlint: warning: registry {url} is unavailable: connection refused (after 3 attempts); "
        "pins were checked against catalog.yaml only (registry.on_error: warn)\n"
    )


def test_on_error_fail_exits_2_with_a_clear_message(tmp_path):
    url = f"http://127.0.0.1:{_closed_port()}"
    root = project(tmp_path, url, on_error="fail", retries=0)
    write(root / "plans" / "a.yaml", _plan("a"))
    result = run_process("--online", "plans/", cwd=root, env={"PLANLINT_REGISTRY_TOKEN": TOKEN})
    assert result.status == 2
    assert result.err == f"planlint: error: registry {url} is unavailable: connection refused (registry.on_error: fail; set on_error: warn to lint without it)\n"
    assert result.out == ""
    _assert_no_token(tmp_path, result)


def test_401_names_the_variable_never_the_token(registry, tmp_path, planlint, monkeypatch):
    registry.default = Reply(401)
    root = project(tmp_path, registry.url)
    write(root / "plans" / "a.yaml", _plan("a"))
    result = planlint("--online", "plans/", cwd=root)
    assert result.status == 0
    assert "HTTP 401: the registry refused the token in $PLANLINT_REGISTRY_TOKEN" in result.err
    assert len(registry.requests) <= 3  # 401 is an answer: not retried
    monkeypatch.delenv("PLANLINT_REGISTRY_TOKEN")
    result = planlint("--online", "--no-cache", "plans/", cwd=root)
    assert "HTTP 401: $PLANLINT_REGISTRY_TOKEN is not set, so no token was sent" in result.err
    assert registry.requests[-1].authorization is None
    project(tmp_path, registry.url, on_error="fail")
    result = planlint("--online", "plans/", cwd=root)
    assert result.status == 2 and "HTTP 401" in result.err
    _assert_no_token(tmp_path, result)


@pytest.mark.parametrize("bad", ["sk-abc\ndef", "ghp_abc def", "tökén"])
def test_a_malformed_token_is_refused_without_showing_it(bad, registry, tmp_path, planlint, monkeypatch):
    monkeypatch.setenv("PLANLINT_REGISTRY_TOKEN", bad)
    root = project(tmp_path, registry.url)
    write(root / "plans" / "a.yaml", _plan("a"))
    result = planlint("--online", "plans/", cwd=root)
    assert result.status == 2
    assert "$PLANLINT_REGISTRY_TOKEN contains characters an HTTP header cannot carry" in result.err
    assert bad not in result.err and "abc" not in result.err
    assert registry.requests == []


def test_the_token_stays_with_its_origin_across_redirects(registry, tmp_path, planlint):
    other = RegistryServer().start()
    try:
        other.published |= PUBLISHED
        registry.script[RELEASE] = [Reply(302, {"Location": f"{other.url}{RELEASE}"})]
        registry.script[DB_STATE] = [Reply(307, {"Location": "/mirror" + DB_STATE})]
        registry.script["/mirror" + DB_STATE] = [Reply(200)]
        root = project(tmp_path, registry.url)
        write(root / "plans" / "a.yaml", _plan("a"))
        result = planlint("--online", "plans/", cwd=root)
        assert result.status == 0, result
        assert [(r.path, r.authorization) for r in other.requests] == [(RELEASE, None)]
        assert {r.authorization for r in registry.requests} == {f"Bearer {TOKEN}"}  # same origin keeps it
        assert "/mirror" + DB_STATE in registry.paths()
    finally:
        other.stop()


def test_names_are_quoted_into_one_path_segment(registry, tmp_path, planlint):
    root = project(tmp_path, registry.url)
    plan = _plan("a").replace("name: retail-refunds", 'name: "../../admin?x=1#y"').replace("name: polite-tone-judge", "name: ..")
    write(root / "plans" / "a.yaml", plan)
    result = planlint("--online", "--format", "json", "plans/", cwd=root)
    assert "/v1/datasets/..%2F..%2Fadmin%3Fx%3D1%23y/releases/2026.11.03" in registry.paths()
    assert not any("/graders/../" in p or p.startswith("/admin") for p in registry.paths())
    assert len(registry.requests) == 2  # a name that cannot be a path segment is not looked up
    assert [f["code"] for f in result.json["findings"]] == ["PL105"]


def test_every_request_has_a_timeout(registry, tmp_path, planlint, monkeypatch):
    """A guard, not a mock: the real request runs, but only with a timeout."""
    import requests

    original = requests.Session.request
    calls = []

    def guarded(self, method, url, *args, **kwargs):
        assert kwargs.get("timeout") is not None, f"request without a timeout: {method} {url}"
        calls.append(url)
        return original(self, method, url, *args, **kwargs)

    monkeypatch.setattr(requests.Session, "request", guarded)
    registry.listings[("datasets", "retail-refunds")] = ["2026.11.03"]
    root = project(tmp_path, registry.url)
    write(root / "plans" / "a.yaml", _plan("a", "latest"))
    planlint("--online", "--fix", "plans/", cwd=root)
    assert calls and len(calls) == len(registry.requests)


# --------------------------------------------------------------------------- --fix online


def test_fix_pins_to_the_registrys_newest_release(registry, tmp_path, planlint):
    registry.published.add(("datasets", "retail-refunds", "2026.12.01"))
    registry.listings[("datasets", "retail-refunds")] = ["2026.11.03", "2026.12.01"]
    catalog = 'datasets: {retail-refunds: {releases: ["2026.10.01", "2026.11.03"]}}\n'
    root = project(tmp_path, registry.url, catalog=catalog)
    plan = write(root / "plans" / "a.yaml", _plan("a", "latest"))
    result = planlint("--online", "--fix", "plans/", cwd=root)
    assert result.status == 0, result
    assert 'release: "2026.12.01"' in plan.read_text(encoding="utf-8")
    assert f"(newest published in the registry at {registry.url})" in result.err
    assert "/v1/datasets/retail-refunds/releases" in registry.paths()


def test_fix_falls_back_to_the_catalog_without_the_listing(registry, tmp_path, planlint):
    catalog = 'datasets: {retail-refunds: {releases: ["2026.10.01", "2026.11.03"]}}\n'
    root = project(tmp_path, registry.url, catalog=catalog)
    plan = write(root / "plans" / "a.yaml", _plan("a", "latest"))
    result = planlint("--online", "--fix", "plans/", cwd=root)
    assert result.status == 0, result
    assert 'release: "2026.11.03"' in plan.read_text(encoding="utf-8")
    assert "(newest published in catalog.yaml)" in result.err


# --------------------------------------------------------------------------- settings


@pytest.mark.parametrize(
    "registry_setting, message",
    [
        ({"url": "ftp://example.org"}, "expected an http:// or https:// URL"),
        ({"url": "https://user:pw@example.org"}, "must not contain credentials"),
        ({"url": "https://example.org", "on_error": "ignore"}, "on_error: expected warn or fail"),
        ({"url": "https://example.org", "timeout": 0}, "timeout: expected a positive number"),
        ({"url": "https://example.org", "token_env": "NOT A NAME"}, "token_env: expected the name of an environment variable"),
        ({"url": "https://example.org", "tiemout": 3}, "unknown key 'tiemout'"),
    ],
)
def test_bad_registry_settings_are_config_errors(registry_setting, message, tmp_path, planlint):
    write(tmp_path / ".planlint.yaml", json.dumps({"registry": registry_setting}))
    write(tmp_path / "plans" / "a.yaml", _plan("a"))
    result = planlint("plans/", cwd=tmp_path)
    assert result.status == 2 and message in result.err, result


def test_a_registry_without_a_url_anywhere_is_a_usage_error(tmp_path, planlint):
    write(tmp_path / ".planlint.yaml", json.dumps({"registry": {"timeout": 3}}))
    write(tmp_path / "plans" / "a.yaml", _plan("a"))
    assert planlint("plans/", cwd=tmp_path).status == 0  # offline: the registry is not used
    result = planlint("--online", "plans/", cwd=tmp_path)
    assert result.status == 2 and "no registry URL: set url in the config's registry section or $PLANLINT_REGISTRY_URL" in result.err


def test_online_without_a_registry_is_a_usage_error(tmp_path, planlint):
    write(tmp_path / "plans" / "a.yaml", _plan("a"))
    result = planlint("--online", "plans/", cwd=tmp_path)
    assert result.status == 2 and "--online needs a registry" in result.err


def test_retry_after_header_forms():
    from email.utils import formatdate

    from planlint.services.http import retry_after

    assert retry_after("7") == 7.0
    assert retry_after(None) is None and retry_after("soon") is None and retry_after("-1") is None
    now = time.time()
    assert 55 <= retry_after(formatdate(now + 60, usegmt=True), now=now) <= 60
    assert retry_after(formatdate(now - 60, usegmt=True), now=now) == 0.0


def test_fix_writes_nothing_when_the_registry_fails_and_on_error_is_fail(registry, tmp_path, planlint):
    registry.script["/v1/datasets/retail-refunds/releases"] = [Reply(503)] * 3
    catalog = 'datasets: {retail-refunds: {releases: ["2026.10.01", "2026.11.03"]}}\n'
    root = project(tmp_path, registry.url, catalog=catalog, on_error="fail")
    plan = write(root / "plans" / "a.yaml", _plan("a", "latest"))
    before = plan.read_bytes()
    result = planlint("--online", "--fix", "plans/", cwd=root)
    assert result.status == 2 and "server error 503 (after 3 attempts)" in result.err
    assert plan.read_bytes() == before


def test_an_unwritable_cache_is_one_warning_and_the_run_goes_on(registry, tmp_path, planlint):
    root = project(tmp_path, registry.url)
    write(root / "plans" / "a.yaml", _plan("a"))
    write(root / "not-a-dir", "a file where the cache directory should be\n")
    result = planlint("--online", "--cache-dir", "not-a-dir", "plans/", cwd=root)
    assert result.status == 0
    assert result.err.count("planlint: warning:") == 1
    assert "cannot write the cache in not-a-dir" in result.err and "answers were not saved" in result.err


# --------------------------------------------------------------------------- the config does not choose the token
#
# Issue 10 item 8. `.planlint.yaml` and `pyproject.toml` come with the pull request: once they named both the
# variable sent as the bearer token and the server it went to, and AWS_SECRET_ACCESS_KEY went to a server the
# config named. Every attack runs the real CLI in a child process against a real server on 127.0.0.1.

SECRET = "aws-" + "S3cr3tK3y" * 4


@pytest.fixture
def attacker():
    server = RegistryServer().start()
    server.default = Reply(200)  # "everything is published"
    yield server
    server.stop()


def _hostile(root, attacker_url: str, config_file: str = ".planlint.yaml", **extra) -> None:
    registry = {"url": attacker_url, "token_env": "AWS_SECRET_ACCESS_KEY", "online": True, **extra}
    if config_file == "pyproject.toml":
        lines = "\n".join(f"{k} = {json.dumps(v)}" for k, v in registry.items())  # JSON scalars are TOML here
        write(root / "pyproject.toml", f"[tool.planlint.registry]\n{lines}\n")
    else:
        write(root / config_file, json.dumps({"registry": registry}) + "\n")
    write(root / "plans" / "a.yaml", _plan("a"))


def _assert_secret_kept(attacker, *results) -> None:
    assert all(SECRET not in (r.authorization or "") and TOKEN not in (r.authorization or "") for r in attacker.requests)
    assert all(r.authorization is None for r in attacker.requests)
    for result in results:
        assert SECRET not in result.out + result.err and TOKEN not in result.out + result.err


@pytest.mark.parametrize("config_file", [".planlint.yaml", "pyproject.toml"])
def test_attack_a_config_cannot_send_a_secret_variable_to_its_server(attacker, tmp_path, config_file):
    """The config names AWS_SECRET_ACCESS_KEY as token_env and its own server as url, with online: true."""
    _hostile(tmp_path, attacker.url, config_file)
    env = {"AWS_SECRET_ACCESS_KEY": SECRET}
    result = run_process("plans/", cwd=tmp_path, env=env)
    assert result.status == 2, result
    assert "registry.token_env in the config names $AWS_SECRET_ACCESS_KEY, but the config does not choose" in result.err
    assert attacker.requests == []
    _assert_secret_kept(attacker, result)
    # Also when the workflow does name a registry and a token: the config's variable is still refused.
    result = run_process("plans/", cwd=tmp_path, env={**env, "PLANLINT_REGISTRY_URL": attacker.url + "/x"})
    assert result.status == 2 and attacker.requests == []
    _assert_secret_kept(attacker, result)


def test_attack_a_config_url_never_receives_the_token(attacker, tmp_path):
    """Without token_env the config still names the server: the token in the environment is not sent there."""
    _hostile(tmp_path, attacker.url)
    config = json.loads((tmp_path / ".planlint.yaml").read_text())
    del config["registry"]["token_env"]
    write(tmp_path / ".planlint.yaml", json.dumps(config))
    result = run_process("plans/", cwd=tmp_path, env={"PLANLINT_REGISTRY_TOKEN": TOKEN})
    assert result.status == 0, result
    assert attacker.requests and all(r.authorization is None for r in attacker.requests)
    assert f"the token in $PLANLINT_REGISTRY_TOKEN was not sent to the registry at {attacker.url}" in result.err
    _assert_secret_kept(attacker, result)


def test_attack_the_environments_registry_wins_over_the_configs(attacker, registry, tmp_path):
    """The workflow names the registry ($PLANLINT_REGISTRY_URL): lookups and the token go there only,
    and a config's server (which would answer "published" to everything) is never asked."""
    _hostile(tmp_path, attacker.url)
    config = json.loads((tmp_path / ".planlint.yaml").read_text())
    config["registry"]["token_env"] = "PLANLINT_REGISTRY_TOKEN"  # the one variable a config may repeat
    write(tmp_path / ".planlint.yaml", json.dumps(config))
    write(tmp_path / "plans" / "a.yaml", _plan("a", "2026.11.30"))  # not published
    result = run_process("plans/", "--format", "json", cwd=tmp_path, env={
        "PLANLINT_REGISTRY_TOKEN": TOKEN, "PLANLINT_REGISTRY_URL": registry.url, "AWS_SECRET_ACCESS_KEY": SECRET})
    assert result.status == 1, result
    assert [f["code"] for f in result.json["findings"]] == ["PL105"]
    assert attacker.requests == []
    assert registry.requests and {r.authorization for r in registry.requests} == {f"Bearer {TOKEN}"}
    _assert_secret_kept(attacker, result)


def test_the_environment_can_name_another_token_variable(registry, tmp_path):
    root = project(tmp_path, registry.url)
    config = json.loads((root / ".planlint.yaml").read_text())
    config["registry"]["token_env"] = "REGISTRY_PAT"  # accepted: the environment names the same variable
    write(root / ".planlint.yaml", json.dumps(config))
    write(root / "plans" / "a.yaml", _plan("a"))
    result = run_process("--online", "plans/", cwd=root, env={"PLANLINT_REGISTRY_TOKEN_ENV": "REGISTRY_PAT", "REGISTRY_PAT": TOKEN,
                                                              "PLANLINT_REGISTRY_TOKEN": ""})
    assert result.status == 0, result
    assert {r.authorization for r in registry.requests} == {f"Bearer {TOKEN}"}
    bad = run_process("--online", "plans/", cwd=root, env={"PLANLINT_REGISTRY_TOKEN_ENV": "not a name"})
    assert bad.status == 2 and "$PLANLINT_REGISTRY_TOKEN_ENV: expected the name of an environment variable" in bad.err


def test_the_environment_alone_names_the_registry(registry, tmp_path):
    write(tmp_path / "plans" / "a.yaml", _plan("a"))
    result = run_process("--online", "plans/", cwd=tmp_path, env={"PLANLINT_REGISTRY_URL": registry.url, "PLANLINT_REGISTRY_TOKEN": TOKEN})
    assert result.status == 0, result
    assert len(registry.requests) == 3 and {r.authorization for r in registry.requests} == {f"Bearer {TOKEN}"}
def test_a_registry_verdict_never_lists_the_catalogs_values(registry, tmp_path, planlint):
    """Issue 12.10: the registry said "no such release"; the catalog's list (holding that very release) is not quoted."""
    catalog = 'datasets: {retail-refunds: {releases: ["2026.11.03", "2026.11.30"]}}\n'
    root = project(tmp_path, registry.url, catalog=catalog)
    write(root / "plans" / "b.yaml", _plan("b", "2026.11.30"))
    [finding] = planlint("--online", "--format", "json", "plans/", cwd=root).json["findings"]
    assert finding["code"] == "PL105"
    host = registry.url.split("://", 1)[1]
    assert f"(according to the registry at {host})" in finding["message"] or "according to the registry at" in finding["message"]
    assert "2026.11.03" not in finding["message"] and "catalog" not in finding["message"]
    assert "lists as published" in finding["message"]
