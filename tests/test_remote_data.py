"""Split paths that are URIs or globs: the data checks where the data lives (issue 16).

Against a real S3 API (moto's server on 127.0.0.1, reached through
AWS_ENDPOINT_URL via a recording proxy, tests/object_store.py) and a local
HTTP server with Range support: a versioned bucket, sharded Parquet and gzip
JSON Lines, a missing object, a 403, a stalled response, the byte cap, the
per-object cache. Nothing is mocked and nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from object_store import SECRET_ACCESS_KEY, MotoS3, RangeHTTPServer, stop_client_threads
from split_files import jsonl_gz, parquet_bytes, plan_text, put_leaky_shards

pytest.importorskip("s3fs")
pytest.importorskip("moto.server")
pytest.importorskip("pyarrow")
pytest.importorskip("pyarrow.parquet")

from array import array  # noqa: E402

from planlint.rules.leakage_findings import findings  # noqa: E402
from planlint.services import split_data  # noqa: E402
from planlint.services.split_data import CACHE_VERSION, _addresses, _index_parts, schemes  # noqa: E402


def check_split_data(*args, **kwargs):
    """The data check as the rules see it: its facts worded as findings and notes."""
    return findings(split_data.check_split_data(*args, **kwargs))

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", autouse=True)
def no_threads_left_behind():
    """Later tests fork worker processes, which the data checks do only in a process without threads."""
    yield
    assert stop_client_threads() == []


@pytest.fixture(scope="module")
def s3(no_threads_left_behind):
    store = MotoS3()
    yield store
    store.stop()


@pytest.fixture
def store(s3, monkeypatch):
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    for name, value in s3.env().items():
        monkeypatch.setenv(name, value)
    s3.proxy.faults.deny.clear()
    s3.proxy.faults.stall.clear()
    s3.proxy.clear()
    return s3


def shards(store: MotoS3, bucket: str) -> None:
    """train: 3 Parquet shards of 20 rows; eval: 2 gzip JSON Lines shards of 10 rows.
    Customer 'cust-leak' is planted in train shard 00001 row 7 and eval shard 1 row 4."""
    put_leaky_shards(store, bucket, 20, 10)


def check(train, eval_, **options):
    options.setdefault("group_key", "customer_id")
    options.setdefault("time_key", None)
    options.setdefault("cutoff", None)
    options.setdefault("input_fields", None)
    options.setdefault("cache_dir", None)
    return check_split_data(train, eval_, **options)


def test_leak_in_one_shard_is_found_and_located_by_shard_and_row(store):
    bucket = store.bucket()
    shards(store, bucket)
    issues, notes = check(f"s3://{bucket}/train/*.parquet", f"s3://{bucket}/eval/*.jsonl.gz")
    assert notes == []
    assert [issue.code for issue in issues] == ["PL207"]
    message = issues[0].message
    assert "'cust-leak' (train row 7 of part-00001.parquet, eval row 4 of part-1.jsonl.gz)" in message
    assert "1 train row, 1 eval row" in message


def test_clean_shards_pass_and_every_shard_is_read(store):
    bucket = store.bucket()
    shards(store, bucket)
    store.client().delete_object(Bucket=bucket, Key="eval/part-1.jsonl.gz")
    issues, notes = check(f"s3://{bucket}/train/*.parquet", f"s3://{bucket}/eval/*.jsonl.gz")
    assert issues == [] and notes == []
    read = {request.path for request in store.proxy.body_gets(bucket)}
    assert read == {f"/{bucket}/train/part-{n:05d}.parquet" for n in range(3)} | {f"/{bucket}/eval/part-0.jsonl.gz"}


def test_a_versioned_object_is_read_at_its_version(store):
    bucket = store.bucket(versioned=True)
    shards(store, bucket)
    leaking = store.put(bucket, "eval/pinned.jsonl", b'{"customer_id": "cust-leak", "prompt": "p"}\n')
    store.put(bucket, "eval/pinned.jsonl", b'{"customer_id": "someone-else", "prompt": "p"}\n')  # overwritten since
    pinned = f"s3://{bucket}/eval/pinned.jsonl?versionId={leaking['VersionId']}"
    issues, _ = check(f"s3://{bucket}/train/*.parquet", pinned)
    assert [issue.code for issue in issues] == ["PL207"]
    assert "eval row 1" in issues[0].message
    latest, _ = check(f"s3://{bucket}/train/*.parquet", f"s3://{bucket}/eval/pinned.jsonl")
    assert latest == []
    gets = [request for request in store.proxy.body_gets(bucket) if request.path.endswith("pinned.jsonl")]
    assert any(f"versionId={leaking['VersionId']}" in request.query for request in gets)


def test_a_missing_object_is_a_note_not_a_pass(store):
    bucket = store.bucket()
    shards(store, bucket)
    issues, notes = check(f"s3://{bucket}/train/*.parquet", f"s3://{bucket}/eval/nothing-here.jsonl")
    assert issues == []
    assert [note.split for note in notes] == ["eval"]
    assert notes[0].incomplete  # PL006 with --require-data
    assert f"s3://{bucket}/eval/nothing-here.jsonl: does not exist" in notes[0].message
    issues, notes = check(f"s3://{bucket}/train/*.parquet", f"s3://{bucket}/eval/*.csv")
    assert "matches no object" in notes[0].message and notes[0].incomplete


def test_access_denied_is_a_note(store):
    bucket = store.bucket()
    shards(store, bucket)
    store.proxy.faults.deny.add(f"/{bucket}/eval/part-1.jsonl.gz")
    issues, notes = check(f"s3://{bucket}/train/*.parquet", f"s3://{bucket}/eval/*.jsonl.gz")
    assert issues == []
    assert len(notes) == 1 and notes[0].incomplete
    assert "part-1.jsonl.gz" in notes[0].message and "access denied" in notes[0].message.lower()
    assert "data-aware checks skipped" in notes[0].message


def test_parquet_reads_only_the_checked_columns(store):
    bucket = store.bucket()
    rows = [{"customer_id": f"c{n}", "prompt": f"p{n}", "payload": os.urandom(512).hex()} for n in range(4000)]
    body = parquet_bytes(rows)  # ~4 MB, almost all of it the unchecked payload column
    store.put(bucket, "train/big.parquet", body)
    store.put(bucket, "eval/small.jsonl", b'{"customer_id": "c17", "prompt": "x"}\n')
    store.proxy.clear()
    issues, notes = check(f"s3://{bucket}/train/big.parquet", f"s3://{bucket}/eval/small.jsonl")
    assert [issue.code for issue in issues] == ["PL207"] and notes == []
    gets = [request for request in store.proxy.body_gets(bucket) if request.path.endswith("big.parquet")]
    assert gets and all(request.range for request in gets)  # range requests only
    fetched = sum(request.sent for request in gets)
    assert fetched < len(body) // 10, (fetched, len(body))


def test_the_byte_cap_stops_a_split_with_a_note(store):
    bucket = store.bucket()
    shards(store, bucket)
    issues, notes = check(f"s3://{bucket}/train/*.parquet", f"s3://{bucket}/eval/*.jsonl.gz", max_bytes=300)
    assert issues == []
    assert len(notes) == 1 and notes[0].incomplete
    assert "more than 300 bytes (limit data.max_bytes)" in notes[0].message
    sent = sum(request.sent for request in store.proxy.body_gets(bucket))
    assert sent < 5 * 4096  # stopped early, not after reading everything


def test_a_stalled_response_hits_the_time_budget(store):
    """A stalled GET is asked once and given up at the budget: s3fs (5 attempts of its own around
    each call) and botocore (max_attempts) retried it, each attempt waiting the whole remaining
    budget again, so the checks ran five times past data.time_budget."""
    bucket = store.bucket()
    shards(store, bucket)
    stalled = f"/{bucket}/eval/part-0.jsonl.gz"
    store.proxy.faults.stall.add(stalled)
    started = time.monotonic()
    issues, notes = check(f"s3://{bucket}/train/*.parquet", f"s3://{bucket}/eval/*.jsonl.gz", time_budget=2.0)
    elapsed = time.monotonic() - started
    assert issues == []
    assert len(notes) == 1 and notes[0].incomplete
    # where it stopped (the eval split, whose server stalls), and no claim about why
    assert notes[0].split == "eval", notes
    assert notes[0].message == "the data checks stopped after 2s (limit data.time_budget) while reading the eval split; data-aware checks skipped"
    time.sleep(1.0)  # a retry would come after the first attempt's read timeout, at the budget
    assert [r.path for r in store.proxy.requests if r.method == "GET" and r.path == stalled] == [stalled]
    assert elapsed < 3 * 2.0  # a hang bound (the budget, not a multiple of it), not a speed check


def test_the_time_budget_is_checked_at_every_read_of_a_remote_object(store):
    """Work counted on an injected clock: one tick per deadline check, the budget in ticks."""
    bucket = store.bucket()
    rows = [{"customer_id": f"c{n}", "prompt": f"prompt number {n} " + "x" * 200} for n in range(40000)]
    store.put(bucket, "train/big.jsonl.gz", jsonl_gz(rows))  # ~9 MB of lines: 3 blocks of 4 MiB
    store.put(bucket, "eval/small.jsonl", b'{"customer_id": "nobody", "prompt": "x"}\n')
    ticks = [0]

    def clock() -> float:
        ticks[0] += 1
        return float(ticks[0])

    issues, notes = check(f"s3://{bucket}/train/big.jsonl.gz", f"s3://{bucket}/eval/small.jsonl", clock=clock, time_budget=1e9)
    assert issues == [] and notes == []
    needed = ticks[0]
    ticks[0] = 0
    issues, notes = check(f"s3://{bucket}/train/big.jsonl.gz", f"s3://{bucket}/eval/small.jsonl", clock=clock, time_budget=needed // 2)
    assert issues == [] and notes[0].incomplete and "limit data.time_budget" in notes[0].message


def test_results_are_cached_per_object_version_and_etag(store, tmp_path, monkeypatch):
    monkeypatch.setenv("PLANLINT_CACHE_KEY", str(tmp_path / "key" / "seal.key"))
    bucket = store.bucket()
    shards(store, bucket)
    cache = tmp_path / "cache"
    first = check(f"s3://{bucket}/train/*.parquet", f"s3://{bucket}/eval/*.jsonl.gz", cache_dir=cache, project_root=tmp_path / "repo")
    assert store.proxy.body_gets(bucket)
    store.proxy.clear()
    second = check(f"s3://{bucket}/train/*.parquet", f"s3://{bucket}/eval/*.jsonl.gz", cache_dir=cache, project_root=tmp_path / "repo")
    assert second[0] and [i.message for i in second[0]] == [i.message for i in first[0]]
    assert store.proxy.body_gets(bucket) == []  # listings only: no object body downloaded again
    # one shard changes: its new ETag misses the cache, and the change is seen
    store.put(bucket, "eval/part-1.jsonl.gz", jsonl_gz([{"customer_id": "fresh", "prompt": "new"}]))
    store.proxy.clear()
    third = check(f"s3://{bucket}/train/*.parquet", f"s3://{bucket}/eval/*.jsonl.gz", cache_dir=cache, project_root=tmp_path / "repo")
    assert third == ([], [])
    assert store.proxy.body_gets(bucket)


def test_a_scheme_whose_extra_is_missing_names_the_extra(monkeypatch):
    real = schemes._installed
    monkeypatch.setattr(schemes, "_installed", lambda module: module != "gcsfs" and real(module))
    issues, notes = check("gs://bucket/train/*.parquet", "gs://bucket/eval.jsonl")
    assert issues == []
    assert [note.split for note in notes] == ["train", "eval"] and all(note.incomplete for note in notes)
    assert all("pip install 'planlint[gcs]' (gcsfs)" in note.message for note in notes)
    monkeypatch.setattr(schemes, "_installed", lambda module: module != "huggingface_hub" and real(module))
    _, notes = check("hf://datasets/acme/refunds@" + "a" * 40 + "/train.parquet", "hf://datasets/acme/refunds@" + "a" * 40 + "/eval.parquet")
    assert "pip install 'planlint[hf]' (huggingface_hub)" in notes[0].message
    # each split's problem is named, not only the first: the user installs both extras in one go
    monkeypatch.setattr(schemes, "_installed", lambda module: module not in ("s3fs", "huggingface_hub") and real(module))
    _, notes = check("s3://bucket/train.jsonl", "hf://datasets/acme/refunds@" + "a" * 40 + "/eval.parquet")
    assert [note.split for note in notes] == ["train", "eval"]
    assert "planlint[s3]" in notes[0].message and "planlint[hf]" in notes[1].message


# --------------------------------------------------------------------------
# https:// (plain http on 127.0.0.1 only in tests)


@pytest.fixture
def web(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    server = RangeHTTPServer(root).start()
    yield server, root
    server.stop()


def test_https_style_paths_are_read_with_range_requests(web, monkeypatch):
    server, root = web
    monkeypatch.setenv(_addresses.PLAIN_HTTP_VARIABLE, "1")
    rows = [{"customer_id": f"c{n}", "prompt": f"p{n}", "payload": os.urandom(256).hex()} for n in range(3000)]
    (root / "train.parquet").write_bytes(parquet_bytes(rows))
    (root / "eval.jsonl").write_text('{"customer_id": "c1", "prompt": "x"}\n{"customer_id": "c2999", "prompt": "y"}\n')
    issues, notes = check(f"{server.url}/train.parquet", f"{server.url}/eval.jsonl")
    assert notes == [] and [issue.code for issue in issues] == ["PL207"]
    assert "(train row 2, eval row 1)" in issues[0].message
    fetched = sum(request.sent for request in server.requests if request.path == "/train.parquet")
    assert fetched < (root / "train.parquet").stat().st_size // 5


def test_a_stalled_https_response_is_asked_once_and_ends_at_the_time_budget(web, monkeypatch):
    """aiohttp's socket timeouts are per read, and fsspec asks a server that does not answer a
    HEAD again with a GET: a stalled server held the checks twice data.time_budget."""
    server, root = web
    monkeypatch.setenv(_addresses.PLAIN_HTTP_VARIABLE, "1")
    (root / "train.jsonl").write_text('{"customer_id": "c1", "prompt": "x"}\n')
    (root / "eval.jsonl").write_text('{"customer_id": "c2", "prompt": "y"}\n')
    server.stall.add("/eval.jsonl")
    started = time.monotonic()
    issues, notes = check(f"{server.url}/train.jsonl", f"{server.url}/eval.jsonl", time_budget=2.0)
    elapsed = time.monotonic() - started
    assert issues == [] and len(notes) == 1 and notes[0].incomplete
    assert "limit data.time_budget" in notes[0].message
    time.sleep(1.0)  # a retry would come after the first attempt's timeout, at the budget
    assert [r.path for r in server.requests if r.path == "/eval.jsonl"] == ["/eval.jsonl"]
    assert elapsed < 3 * 2.0  # a hang bound (the budget, not a multiple of it), not a speed check


def test_plain_http_is_refused_outside_tests(web, monkeypatch):
    server, root = web
    monkeypatch.delenv(_addresses.PLAIN_HTTP_VARIABLE, raising=False)
    (root / "eval.jsonl").write_text('{"customer_id": "c1"}\n')
    issues, notes = check(f"{server.url}/eval.jsonl", f"{server.url}/eval.jsonl?x=1")
    assert issues == [] and notes[0].incomplete
    assert "plain http:// is not read" in notes[0].message and "use https://" in notes[0].message
    assert server.requests == []
    monkeypatch.setenv(_addresses.PLAIN_HTTP_VARIABLE, "1")  # the test switch opens loopback addresses only
    _, notes = check("http://example.invalid/eval.jsonl", f"{server.url}/eval.jsonl")
    assert "plain http:// is not read" in notes[0].message


def test_a_redirect_is_not_followed_past_the_address_check(web, monkeypatch):
    """The attack: a split URL on an allowed host answers 302 to an address the runner must not read
    (its instance metadata, the private network: here a second local server standing in for it)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    inside, root = web  # what the redirect points at
    (root / "credentials").write_text('{"customer_id": "AKIA-from-the-metadata-service"}\n')
    target = f"{inside.url}/credentials"

    class Redirect(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(302)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_HEAD = do_GET

    outside = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=outside.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv(_addresses.PLAIN_HTTP_VARIABLE, "1")
        (root / "eval.jsonl").write_text('{"customer_id": "c1"}\n')
        issues, notes = check(f"http://127.0.0.1:{outside.server_port}/train.jsonl", f"{inside.url}/eval.jsonl")
    finally:
        outside.shutdown()
        outside.server_close()
    assert issues == [] and len(notes) == 1
    assert "redirects are not followed" in notes[0].message and "does not exist" not in notes[0].message
    assert [request.path for request in inside.requests if request.path == "/credentials"] == []


# --------------------------------------------------------------------------
# the CLI, every output format, and no secret anywhere


def run_cli(tmp_path: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    full = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    full.update(env)
    return subprocess.run([sys.executable, "-m", "planlint", *args], cwd=tmp_path, env=full, capture_output=True, text=True, timeout=300)


def write_plan(tmp_path: Path, train: str, eval_: str) -> None:
    (tmp_path / "plans").mkdir(exist_ok=True)
    (tmp_path / "plans" / "remote.yaml").write_text(plan_text(train, eval_))
    (tmp_path / ".git").mkdir(exist_ok=True)


def test_cli_finds_the_shard_leak_and_require_data_turns_a_missing_object_into_pl006(store, tmp_path):
    bucket = store.bucket()
    shards(store, bucket)
    write_plan(tmp_path, f"s3://{bucket}/train/*.parquet", f"s3://{bucket}/eval/*.jsonl.gz")
    result = run_cli(tmp_path, store.env(), "--format", "json", "--no-cache", "plans/")
    report = json.loads(result.stdout)
    found = [f for f in report["findings"] if f["code"] == "PL207"]
    assert len(found) == 1 and "train row 7 of part-00001.parquet" in found[0]["message"]
    write_plan(tmp_path, f"s3://{bucket}/train/*.parquet", f"s3://{bucket}/eval/gone.jsonl")
    result = run_cli(tmp_path, store.env(), "--format", "json", "--no-cache", "plans/")
    report = json.loads(result.stdout)
    assert not [f for f in report["findings"] if f["code"] == "PL006"]
    assert any("gone.jsonl: does not exist" in note for note in report["notes"])
    result = run_cli(tmp_path, store.env(), "--format", "json", "--no-cache", "--require-data", "plans/")
    report = json.loads(result.stdout)
    pl006 = [f for f in report["findings"] if f["code"] == "PL006"]
    assert len(pl006) == 1 and "does not exist" in pl006[0]["message"] and "--require-data" in pl006[0]["message"]
    assert result.returncode == 1


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif", "junit", "markdown"])
def test_no_secret_reaches_any_output_format(store, web, tmp_path, fmt):
    server, root = web
    bucket = store.bucket()
    shards(store, bucket)
    url_secret = "urlpass-Hq82Lw0Zr"
    token_secret = "tok-Vb71Xs93Kd"
    fragment_secret = "frag-Jt40Mw28Qe"  # an OAuth implicit-flow token rides in the fragment
    eval_url = server.url.replace("http://", f"http://reader:{url_secret}@") + f"/missing.jsonl?token={token_secret}#access_token={fragment_secret}"
    write_plan(tmp_path, f"s3://{bucket}/train/*.parquet", eval_url)
    env = dict(store.env(), **{_addresses.PLAIN_HTTP_VARIABLE: "1", "HF_TOKEN": "hf-secret-Nn2Kq8Pp5"})
    result = run_cli(tmp_path, env, "--format", fmt, "--no-cache", "--require-data", "plans/")
    output = result.stdout + result.stderr
    assert "PL006" in output and "PL107" in output
    assert "missing.jsonl" in output  # the note (or PL006) names the object...
    for secret in (SECRET_ACCESS_KEY, url_secret, token_secret, fragment_secret, "hf-secret-Nn2Kq8Pp5"):
        assert secret not in output, (secret, output)  # ...and shows none of the secrets


def test_https_paths_to_non_public_addresses_are_refused(web, monkeypatch):
    server, root = web
    (root / "train.jsonl").write_text('{"customer_id": "c1"}\n')
    monkeypatch.delenv(_addresses.PLAIN_HTTP_VARIABLE, raising=False)
    url = server.url.replace("http://", "https://") + "/train.jsonl"  # the CI machine's own loopback
    issues, notes = check(url, url + "?x")
    assert issues == [] and notes[0].incomplete
    assert "non-public address (127.0.0.1)" in notes[0].message and "only from public addresses" in notes[0].message
    assert server.requests == []
    # literal addresses are judged without any traffic: a cloud's metadata service, the private network
    for host in ("169.254.169.254", "10.0.0.8", "[::1]", "0.0.0.0"):
        assert "non-public address" in _addresses.non_public_host(f"https://{host}/latest/train.jsonl")


# --------------------------------------------------------------------------
# DNS rebinding: the addresses connected to are the ones checked


REBOUND = "data.rebinding-test.example"  # made up: its answers come from tests/rebinding.py, never from DNS
PUBLIC = "93.184.216.34"


@pytest.fixture
def tls_web(tmp_path):
    """A RangeHTTPServer on 127.0.0.1 speaking TLS, with a certificate for REBOUND and localhost."""
    import ssl

    from rebinding import tls_files

    root = tmp_path / "tls-www"
    root.mkdir()
    authority, certificate, key = tls_files(tmp_path, [REBOUND, "localhost"])
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate, key)
    server = RangeHTTPServer(root)
    # the handshake happens in the request's thread, not in the accepting one
    server.server.socket = context.wrap_socket(server.server.socket, server_side=True, do_handshake_on_connect=False)
    server.start()
    yield server, root, authority
    server.stop()


class ProxyRecorder:
    """Stands where HTTP(S)_PROXY points: records every request (CONNECT included) and refuses it."""

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.requests: list[str] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _refuse(self) -> None:
                recorder.requests.append(f"{self.command} {self.path}")
                self.send_response(502)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_CONNECT = do_GET = do_HEAD = _refuse

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def run_rebinding(tmp_path: Path, env: dict, log: Path, *args: str) -> subprocess.CompletedProcess:
    """planlint's CLI in a process where REBOUND resolves to PUBLIC once, then to 127.0.0.1 (tests/rebinding.py)."""
    helper = Path(__file__).parent / "rebinding.py"
    return subprocess.run([sys.executable, str(helper), REBOUND, PUBLIC, "127.0.0.1", str(log), "--", *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


def test_a_rebinding_dns_answer_cannot_point_the_read_at_the_runner_itself(tls_web, tmp_path):
    """The attack (DNS rebinding): the split's host name resolves to a public address when planlint
    checks it, and to 127.0.0.1 when the HTTP client connects a moment later (a hostile DNS server with
    a zero TTL; 127.0.0.1 stands in for the runner's instance metadata and private network). The
    addresses the client connects to are checked when it resolves them: the object is not requested,
    the split is a note (PL006 with --require-data) saying why, without the URL's secret. HTTP(S)_PROXY
    in the environment is not used either: a proxy would resolve the name itself, past the check."""
    server, root, authority = tls_web
    port = server.server.server_address[1]
    (root / "train.jsonl").write_text('{"customer_id": "c1", "prompt": "p"}\n')
    (root / "inside.jsonl").write_text('{"customer_id": "c1", "prompt": "only the runner can read this"}\n')
    proxy = ProxyRecorder()
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("AWS_") and key.lower() not in ("no_proxy", "http_proxy", "https_proxy", "all_proxy")}
    env.update({"SSL_CERT_FILE": str(authority), _addresses.PLAIN_HTTP_VARIABLE: "1",  # the switch opens localhost only
                "HTTPS_PROXY": proxy.url, "HTTP_PROXY": proxy.url, "ALL_PROXY": proxy.url})
    log = tmp_path / "dns.log"
    train = f"https://localhost:{port}/train.jsonl"
    try:
        # the control: this server, its certificate and the leak are found when the name is honest
        write_plan(tmp_path, train, f"https://localhost:{port}/inside.jsonl")
        result = run_rebinding(tmp_path, env, log, "--format", "json", "--no-cache", "plans/")
        assert [f["code"] for f in json.loads(result.stdout)["findings"] if f["code"].startswith("PL2")] == ["PL207"], result.stderr
        server.requests.clear()
        # the attack
        write_plan(tmp_path, train, f"https://{REBOUND}:{port}/inside.jsonl?sig=sig-Vq83Jd02Lm")
        result = run_rebinding(tmp_path, env, log, "--format", "json", "--no-cache", "--require-data", "plans/")
    finally:
        proxy.stop()
    answers = log.read_text().split()
    assert answers[0] == PUBLIC and "127.0.0.1" in answers[1:], answers  # the check, then the client, asked
    assert [request for request in server.requests if request.path == "/inside.jsonl"] == []
    report = json.loads(result.stdout)
    assert not [f for f in report["findings"] if f["code"] == "PL207"]
    pl006 = [f for f in report["findings"] if f["code"] == "PL006"]
    assert len(pl006) == 1, report
    message = pl006[0]["message"]
    assert f"the host {REBOUND} is at a non-public address (127.0.0.1)" in message
    assert "only from public addresses" in message and "--require-data" in message
    assert result.returncode == 1
    output = result.stdout + result.stderr
    assert "Traceback" not in output and "sig-Vq83Jd02Lm" not in output
    assert proxy.requests == []


def test_the_clients_resolver_refuses_what_the_check_refuses(monkeypatch):
    """The HTTP client's resolver (PublicResolver) judges every answer by the rule of the check before
    any request, in the same words: a non-public address anywhere in the answer refuses the name."""
    import asyncio
    import ipaddress
    import socket

    from planlint.services.split_data._addresses import AddressRefused
    from planlint.services.split_data._resolver import PublicResolver

    answers: dict[str, list[str]] = {}
    real = socket.getaddrinfo

    def getaddrinfo(name, port, family=0, type=0, proto=0, flags=0):
        if name not in answers:
            return real(name, port, family, type, proto, flags)
        return [(socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, int(port or 0), 0, 0))
                if ":" in address else (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, int(port or 0)))
                for address in answers[name]]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)

    async def resolve(name: str) -> list[str]:
        resolver = PublicResolver()
        try:
            return [answer["host"] for answer in await resolver.resolve(name, 443, socket.AF_UNSPEC)]
        finally:
            await resolver.close()

    def outcome(name: str):
        try:
            return asyncio.run(resolve(name))
        except AddressRefused as error:
            return str(error)

    monkeypatch.delenv(_addresses.PLAIN_HTTP_VARIABLE, raising=False)
    answers["public.example"] = ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"]
    assert outcome("public.example") == answers["public.example"]
    assert _addresses.non_public_host("https://public.example/x.jsonl") is None
    # loopback, metadata, private, unspecified, unique local; IPv6 forms that carry a bad IPv4 address
    # (mapped, NAT64's well-known prefix, 6to4)
    for address in ("127.0.0.1", "169.254.169.254", "10.0.0.8", "0.0.0.0", "fd00::1", "::ffff:127.0.0.1",
                    "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1"):
        answers["inside.example"] = ["93.184.216.34", address]  # one bad address refuses the name
        text = outcome("inside.example")
        assert text == (f"the host inside.example is at a non-public address ({ipaddress.ip_address(address)}): "
                        "planlint reads https:// split paths only from public addresses"), address
        assert _addresses.non_public_host("https://inside.example/x.jsonl") == text
    # the test switch opens loopback for a host written as localhost, never for another name
    answers["localhost"] = answers["sneaky.example"] = ["127.0.0.1"]
    assert isinstance(outcome("localhost"), str) and isinstance(outcome("sneaky.example"), str)
    monkeypatch.setenv(_addresses.PLAIN_HTTP_VARIABLE, "1")
    assert outcome("localhost") == ["127.0.0.1"]
    assert "non-public address (127.0.0.1)" in outcome("sneaky.example")


def test_a_changed_shard_of_the_larger_split_is_the_only_one_of_it_read_again(store, tmp_path, monkeypatch):
    """Each object of the larger split has its own cached piece and each object of the smaller
    split its own index part: after one shard changes, that shard alone is read again (the
    smaller split's index comes from its parts); the findings are those of a run without any cache."""
    monkeypatch.setenv("PLANLINT_CACHE_KEY", str(tmp_path / "key" / "seal.key"))
    bucket = store.bucket()
    shards(store, bucket)
    train, eval_ = f"s3://{bucket}/train/*.parquet", f"s3://{bucket}/eval/*.jsonl.gz"
    cache = tmp_path / "cache"
    options = dict(cache_dir=cache, project_root=tmp_path / "repo", time_key="created_at", cutoff="2026-08-01")
    first = check(train, eval_, **options)
    assert [issue.code for issue in first[0]] == ["PL210", "PL210", "PL207"]  # no row has created_at yet
    rows = [{"customer_id": f"train-2-{n}", "prompt": f"train prompt 2 {n}", "created_at": "2026-05-01"} for n in range(20)]
    rows[4]["customer_id"] = "eval-0-2"  # a second leaked customer, in the changed shard
    rows[9]["prompt"] = "Eval  prompt 1 5"  # and an eval input
    rows[11]["created_at"] = "2026-09-01"  # and a train row after the cutoff
    store.put(bucket, "train/part-00002.parquet", parquet_bytes(rows))
    store.proxy.clear()
    cached = check(train, eval_, **options)
    read = {request.path for request in store.proxy.body_gets(bucket)}
    assert read == {f"/{bucket}/train/part-00002.parquet"}
    uncached = check(train, eval_, **{**options, "cache_dir": None})
    assert cached == uncached
    found = {issue.code: issue.message for issue in cached[0]}
    assert [issue.code for issue in cached[0]] == ["PL210", "PL210", "PL207", "PL208", "PL209"]
    assert "'eval-0-2' (train row 5 of part-00002.parquet, eval row 3 of part-0.jsonl.gz)" in found["PL207"]
    assert "row 12 of part-00002.parquet '2026-09-01'" in found["PL208"]
    assert "(train row 10 of part-00002.parquet, eval row 6 of part-1.jsonl.gz)" in found["PL209"]
    assert "40 train rows of 60" in cached[0][0].message  # the cached shards' rows are counted
    # nothing changed since: nothing is read; one piece forged or edited in the cache is not believed
    store.proxy.clear()
    assert check(train, eval_, **options) == uncached
    assert store.proxy.body_gets(bucket) == []
    for entry in (cache / "split-data").glob("*.json"):
        entry.unlink()  # the index parts alone decide
    parts = sorted((cache / "split-data" / "index-parts").glob("*.json"))
    assert len(parts) == 6  # the two eval shards, the three train shards of the first run, the changed one of the second
    edited = 0
    for part in parts:
        mac, _, body = part.read_bytes().partition(b"\n")
        entry, used = _index_parts.part_from_body(body, CACHE_VERSION)
        if "eval-0-2" in entry.group_keys or "eval-1-2" in entry.group_keys:
            entry.group_keys, entry.group_rows = [], []  # "no customer here", its MAC kept
            entry.codes, entry.rows = array("q"), array("q")  # "and no input"
            part.write_bytes(mac + b"\n" + b"".join(_index_parts.part_body(entry, used, CACHE_VERSION)))
            edited += 1
    assert edited >= 2  # the changed train shard, and the eval shards that share its customer
    store.proxy.clear()
    assert check(train, eval_, **options) == uncached
    read = {request.path for request in store.proxy.body_gets(bucket)}
    assert f"/{bucket}/train/part-00002.parquet" in read  # its part was edited: not believed, read again
    assert f"/{bucket}/train/part-00000.parquet" not in read  # its part is untouched, and still believed


def test_a_local_globs_shards_cached_as_pieces_give_the_uncached_findings_and_notes(tmp_path, monkeypatch):
    """Skipped rows, rows without a key, time leaks, duplicates and a column only some shards have:
    after one shard changed, a run from the cached pieces reports what a run without cache does."""
    from planlint.services.split_data import GlobMatches, local_glob

    monkeypatch.setenv("PLANLINT_CACHE_KEY", str(tmp_path / "key" / "seal.key"))
    data = tmp_path / "data"
    data.mkdir()

    def shard(number: int, extra: str = "") -> None:
        lines = [json.dumps({"customer_id": f"t{number}-{n}", "prompt": f"Train {number} {n}", "created_at": "2026-05-01"}) for n in range(30)]
        lines[3] = "{not json"
        lines[5] = json.dumps({"prompt": "no customer", "created_at": "2026-05-01"})
        lines[8] = json.dumps({"customer_id": "e-1", "prompt": "EVAL  one", "created_at": "2026-09-0" + str(number + 1)})
        (data / f"train-{number}.jsonl").write_text("\n".join(lines) + "\n" + extra)

    for number in range(3):
        shard(number)
    (data / "eval.jsonl").write_text("".join(json.dumps({"customer_id": f"e-{n}", "prompt": f"eval {n}", "created_at": "2026-08-10"}) + "\n" for n in range(4)))

    trace: dict = {}

    def run(cache):
        train = GlobMatches("data/train-*.jsonl", local_glob(tmp_path, "data/train-*.jsonl"))
        return check_split_data(train, data / "eval.jsonl", group_key="customer_id", time_key="created_at", cutoff="2026-08-01",
                                input_fields=None, cache_dir=cache, project_root=tmp_path / "repo", trace=trace)

    cache = tmp_path / "cache"
    first = run(cache)
    assert trace["cached_pieces"] == 0
    assert first == run(None)
    shard(1, extra=json.dumps({"customer_id": "e-2", "prompt": "eval 3", "created_at": "soon"}) + "\n")
    for entry in (cache / "split-data").glob("*.json"):
        entry.unlink()  # (it missed anyway: a file changed)
    cached = run(cache)
    assert trace["cached_pieces"] == 2  # shards 0 and 2 were not read
    uncached = run(None)
    assert cached == uncached
    assert [issue.code for issue in cached[0]] == ["PL210", "PL211", "PL207", "PL208", "PL209"]
    assert "row 31 of train-1.jsonl" in cached[0][1].message
    assert cached[1] and "train-0.jsonl" in cached[1][0].message  # the skipped rows, named in the cached shards too


def test_a_changed_shard_of_the_smaller_split_is_the_only_object_read_again(store, tmp_path, monkeypatch):
    """After an object of the smaller split changes, only that object is downloaded: the other objects of
    both splits come from their index parts, the larger split's compared with the new index without
    being read. The findings are those of a run without any cache, except that a duplicate input found
    against a train object that was not read shows the eval row's text (the same input once normalized);
    a later run that reads neither object shows the same text, kept beside the eval object's part."""
    monkeypatch.setenv("PLANLINT_CACHE_KEY", str(tmp_path / "key" / "seal.key"))
    bucket = store.bucket()
    shards(store, bucket)
    train, eval_ = f"s3://{bucket}/train/*.parquet", f"s3://{bucket}/eval/*.jsonl.gz"
    options = dict(cache_dir=tmp_path / "cache", project_root=tmp_path / "repo")
    check(train, eval_, **options)
    rows = [{"customer_id": f"eval-1-{n}", "prompt": f"eval prompt 1 {n}"} for n in range(10)]
    rows[2]["customer_id"] = "train-0-3"  # a new leaked customer, in the changed eval shard
    rows[7]["prompt"] = "TRAIN prompt 2  19"  # and an input of an unchanged train shard
    store.put(bucket, "eval/part-1.jsonl.gz", jsonl_gz(rows))
    store.proxy.clear()
    cached = check(train, eval_, **options)
    read = {request.path for request in store.proxy.body_gets(bucket)}
    assert read == {f"/{bucket}/eval/part-1.jsonl.gz"}
    uncached = check(train, eval_, **{**options, "cache_dir": None})
    assert [issue.code for issue in cached[0]] == [issue.code for issue in uncached[0]] == ["PL207", "PL209"]
    assert cached[0][0] == uncached[0][0] and cached[1] == uncached[1]
    assert "'train-0-3' (train row 4 of part-00000.parquet, eval row 3 of part-1.jsonl.gz)" in cached[0][0].message
    assert "'TRAIN prompt 2  19' (train row 20 of part-00002.parquet, eval row 8 of part-1.jsonl.gz)" in cached[0][1].message
    assert "'train prompt 2 19' (train row 20 of part-00002.parquet, eval row 8 of part-1.jsonl.gz)" in uncached[0][1].message
    assert cached[0][1].message.replace("TRAIN prompt 2  19", "train prompt 2 19") == uncached[0][1].message
    # a train shard changes now: the eval shard and the other train shards are not read; the duplicate
    # between two objects that are not read keeps the text it was shown with
    store.put(bucket, "train/part-00001.parquet", parquet_bytes([{"customer_id": f"new-{n}", "prompt": f"new {n}"} for n in range(5)]))
    store.proxy.clear()
    again = check(train, eval_, **options)
    assert {request.path for request in store.proxy.body_gets(bucket)} == {f"/{bucket}/train/part-00001.parquet"}
    assert "'TRAIN prompt 2  19' (train row 20 of part-00002.parquet, eval row 8 of part-1.jsonl.gz)" in again[0][-1].message


def test_a_forged_index_part_does_not_hide_a_leak(store, tmp_path, monkeypatch):
    """The attack: a pull request that can write the cache directory edits the cached index part of the
    eval shard holding 'cust-leak' (its groups emptied, the MAC kept), or reseals it with a key of its
    own, then changes a train shard so the result cache misses. The part is not believed: PL207 stays."""
    from planlint.core.cache_seal import seal_bytes

    monkeypatch.setenv("PLANLINT_CACHE_KEY", str(tmp_path / "key" / "seal.key"))
    bucket = store.bucket()
    shards(store, bucket)
    train, eval_ = f"s3://{bucket}/train/*.parquet", f"s3://{bucket}/eval/*.jsonl.gz"
    cache = tmp_path / "cache"
    options = dict(cache_dir=cache, project_root=tmp_path / "repo")
    assert [issue.code for issue in check(train, eval_, **options)[0]] == ["PL207"]
    parts = sorted((cache / "split-data" / "index-parts").glob("*.json"))
    assert len(parts) == 5  # the two eval shards and the three train shards
    decoded = {part: _index_parts.part_from_body(part.read_bytes().partition(b"\n")[2], CACHE_VERSION) for part in parts}
    holding = [part for part in parts if "cust-leak" in decoded[part][0].group_keys]
    assert len(holding) == 2  # the eval shard and the train shard that hold it
    holding = [part for part in holding if decoded[part][0].report.rows < 20]  # the eval shard's
    assert len(holding) == 1
    for attempt in ("edited", "resealed"):
        mac, _, body = holding[0].read_bytes().partition(b"\n")
        forged, used = _index_parts.part_from_body(body, CACHE_VERSION)
        forged.group_keys, forged.group_rows = [], []  # "no customer here"
        forged_body = b"".join(_index_parts.part_body(forged, used, CACHE_VERSION))
        if attempt == "edited":  # its MAC kept
            holding[0].write_bytes(mac + b"\n" + forged_body)
        else:
            holding[0].write_bytes(seal_bytes(b"attacker's own key" * 2, "split-data-index-part", holding[0].stem, forged_body))
        store.put(bucket, "train/part-00000.parquet", parquet_bytes([{"customer_id": f"new-{attempt}-{n}", "prompt": f"p {n}"} for n in range(5)]))
        store.proxy.clear()
        issues, _ = check(train, eval_, **options)
        assert [issue.code for issue in issues] == ["PL207"], attempt
        assert "'cust-leak'" in issues[0].message
        assert f"/{bucket}/eval/part-1.jsonl.gz" in {request.path for request in store.proxy.body_gets(bucket)}


_RUN_IN_A_PROCESS = """
import json, sys
from pathlib import Path
from planlint.rules.leakage_findings import findings
from planlint.services.split_data import GlobMatches, check_split_data, local_glob
root = Path(sys.argv[1])
cache = None if sys.argv[2] == "-" else Path(sys.argv[2])
def split(pattern):
    return GlobMatches(pattern, local_glob(root, pattern))
trace = {}
issues, notes = findings(check_split_data(split("data/train-*.jsonl"), split("data/eval-*.jsonl"), group_key="customer_id",
                                          time_key=None, cutoff=None, input_fields=None, cache_dir=cache, project_root=root / "repo",
                                          trace=trace))
print(json.dumps({"issues": [[i.code, i.message] for i in issues], "notes": [n.message for n in notes],
                  "parts": trace.get("cached_parts"), "pieces": trace.get("cached_pieces")}))
"""


def test_index_parts_written_by_one_process_are_used_by_the_next(tmp_path):
    """Each CLI run is a new process with its own string hash: the smaller split's cached index
    parts must hold digests that a later process computes alike for the rows it reads."""
    data = tmp_path / "data"
    data.mkdir()

    def write(name: str, rows: list[tuple[str, str]]) -> None:
        (data / name).write_text("".join(json.dumps({"customer_id": c, "prompt": p}) + "\n" for c, p in rows))

    for shard in range(2):
        write(f"eval-{shard}.jsonl", [(f"e{shard}-{n}", f"Eval {shard} item {n}") for n in range(5)])
    for shard in range(3):
        rows = [(f"t{shard}-{n}", f"Train {shard} item {n}") for n in range(20)]
        if shard == 0:
            rows[4] = ("t0-4", "EVAL 1   item 3")  # a duplicate input in a shard that will not change
        write(f"train-{shard}.jsonl", rows)
    env = {**os.environ, "PLANLINT_CACHE_KEY": str(tmp_path / "key" / "seal.key")}

    def run(cache: str) -> dict:
        done = subprocess.run([sys.executable, "-c", _RUN_IN_A_PROCESS, str(tmp_path), cache], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    first = run(str(tmp_path / "cache"))
    assert [code for code, _ in first["issues"]] == ["PL209"] and first["parts"] == 0
    rows = [(f"t2-{n}", f"Train 2 item {n}") for n in range(20)]
    rows[6] = ("e0-2", "eval 0 ITEM 1")  # the changed shard: a leaked customer and another duplicate
    write("train-2.jsonl", rows)
    second = run(str(tmp_path / "cache"))
    assert second["parts"] == 2 and second["pieces"] == 2  # the eval shards and the unchanged train shards: not read
    uncached = run("-")
    assert second["issues"] == uncached["issues"] and second["notes"] == uncached["notes"]
    assert [code for code, _ in second["issues"]] == ["PL207", "PL209"]
    assert "2 inputs occur in both train and eval" in second["issues"][1][1]
    assert "(train row 5 of train-0.jsonl, eval row 4 of eval-1.jsonl)" in second["issues"][1][1]
    assert "(train row 7 of train-2.jsonl, eval row 2 of eval-0.jsonl)" in second["issues"][1][1]
    # an eval shard changes in a third process: every train shard is compared from its part, unread
    write("eval-0.jsonl", [("e0-0", "Eval 0 item 0"), ("t1-3", "train 1 ITEM 5"), ("e0-2", "Eval 0 item 2")])
    third = run(str(tmp_path / "cache"))
    assert third["parts"] == 1 and third["pieces"] == 3
    uncached = run("-")
    assert [code for code, _ in third["issues"]] == [code for code, _ in uncached["issues"]] == ["PL207", "PL209"]
    assert third["issues"][0] == uncached["issues"][0] and third["notes"] == uncached["notes"]
    assert "'t1-3' (train row 4 of train-1.jsonl, eval row 2 of eval-0.jsonl)" in third["issues"][0][1]
    assert "'train 1 ITEM 5' (train row 6 of train-1.jsonl, eval row 2 of eval-0.jsonl)" in third["issues"][1][1]
    assert "'Train 1 item 5' (train row 6 of train-1.jsonl, eval row 2 of eval-0.jsonl)" in uncached["issues"][1][1]


def test_a_smaller_split_from_cached_index_parts_gives_the_uncached_findings_and_notes(tmp_path, monkeypatch):
    """Skipped rows, rows without a key, unreadable and leaking times,
    all in the smaller split: a run whose index comes from the cached parts reports what a run
    without cache does."""
    from planlint.services.split_data import GlobMatches, local_glob

    monkeypatch.setenv("PLANLINT_CACHE_KEY", str(tmp_path / "key" / "seal.key"))
    data = tmp_path / "data"
    data.mkdir()
    for shard in range(2):
        lines = [json.dumps({"customer_id": f"e{shard}-{n}", "prompt": f"Eval {shard} {n}", "created_at": "2026-08-10"}) for n in range(8)]
        lines[1] = "[1, 2"
        lines[2] = json.dumps({"prompt": "no customer", "created_at": "2026-08-10"})
        lines[3] = json.dumps({"customer_id": f"e{shard}-3", "prompt": "", "created_at": "2026-07-0" + str(shard + 1)})
        lines[4] = json.dumps({"customer_id": "t-9", "prompt": "Train 9", "created_at": "whenever"})
        (data / f"eval-{shard}.jsonl").write_text("\n".join(lines) + "\n")

    def train(extra: str = "") -> None:
        (data / "train.jsonl").write_text("".join(json.dumps({"customer_id": f"t-{n}", "prompt": f"train {n}", "created_at": "2026-05-01"}) + "\n" for n in range(40)) + extra)

    trace: dict = {}

    def run(cache):
        eval_ = GlobMatches("data/eval-*.jsonl", local_glob(tmp_path, "data/eval-*.jsonl"))
        return check_split_data(data / "train.jsonl", eval_, group_key="customer_id", time_key="created_at", cutoff="2026-08-01",
                                input_fields=None, cache_dir=cache, project_root=tmp_path / "repo", trace=trace)

    train()
    cache = tmp_path / "cache"
    first = run(cache)
    assert first == run(None)
    train(extra=json.dumps({"customer_id": "e1-7", "prompt": "EVAL 0 6", "created_at": "2026-05-02"}) + "\n")
    cached = run(cache)
    assert trace["cached_parts"] == 2
    uncached = run(None)
    assert cached == uncached
    assert [issue.code for issue in cached[0]] == ["PL210", "PL211", "PL207", "PL208", "PL209"]
    assert "row 5 of eval-0.jsonl" in cached[0][1].message
    assert cached[1] and "row 2 of eval-0.jsonl" in cached[1][0].message


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then closed): every connection is refused."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("kind", ["gs", "s3"])
def test_an_unreachable_store_leaves_only_planlints_notes_on_stderr(tmp_path, kind):
    """gcsfs logs each failed request with its traceback (logger.exception), through logging's
    last-resort handler when nothing is configured: a gs:// path that could not be reached put
    2-4 'Traceback' blocks and the libraries' own lines on stderr, unmasked. Nothing but
    planlint's own lines may reach it."""
    port = closed_port()
    if kind == "gs":
        pytest.importorskip("gcsfs")
        env = {"STORAGE_EMULATOR_HOST": f"http://127.0.0.1:{port}", "GCE_METADATA_HOST": f"127.0.0.1:{port}",
               "GCE_METADATA_IP": f"127.0.0.1:{port}", "CLOUDSDK_CONFIG": str(tmp_path / "gcloud")}
        write_plan(tmp_path, "gs://acme-train/retail/train.jsonl#1733171735123456", "gs://acme-eval/retail/eval.jsonl#1733171735123456")
    else:
        env = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "AKIAPLANLINTTESTKEY01",
               "AWS_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY, "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true",
               "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull}
        write_plan(tmp_path, "s3://acme-train/train.jsonl?versionId=v1", "s3://acme-eval/eval.jsonl?versionId=v1")
    (tmp_path / ".planlint.yaml").write_text("data: {time_budget: 20}\n")
    result = run_cli(tmp_path, env, "--no-cache", "plans/")
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines and all(line.startswith("planlint: note: ") for line in lines), result.stderr
    assert f"{kind}://acme-train/" in lines[0] and "could not be listed" in lines[0], result.stderr
    assert SECRET_ACCESS_KEY not in result.stdout + result.stderr


def test_a_duplicate_found_between_two_unread_objects_shows_the_text_kept_beside_their_parts(tmp_path, monkeypatch):
    """A part keeps digests, not texts: a duplicate input between a train and an eval object that are
    both taken from their parts shows the text kept beside the train object's part when it was read;
    with those texts gone (a cache directory restored without them), the message says 'an input' and
    still counts and locates the duplicate."""
    from planlint.services.split_data import GlobMatches, local_glob

    monkeypatch.setenv("PLANLINT_CACHE_KEY", str(tmp_path / "key" / "seal.key"))
    data = tmp_path / "data"
    data.mkdir()

    def write(name: str, prompts: list[str]) -> None:
        (data / name).write_text("".join(json.dumps({"customer_id": f"{name}-{n}", "prompt": p}) + "\n" for n, p in enumerate(prompts)))

    write("train-0.jsonl", [f"train zero {n}" for n in range(12)])
    write("train-1.jsonl", [f"train one {n}" for n in range(12)])
    write("eval-0.jsonl", ["Train  ZERO 4", "eval a"])
    write("eval-1.jsonl", ["eval b", "eval c"])

    trace: dict = {}

    def run(cache):
        split = lambda pattern: GlobMatches(pattern, local_glob(tmp_path, pattern))  # noqa: E731
        return check_split_data(split("data/train-*.jsonl"), split("data/eval-*.jsonl"), group_key="customer_id", time_key=None,
                                cutoff=None, input_fields=None, cache_dir=cache, project_root=tmp_path / "repo", trace=trace)

    cache = tmp_path / "cache"
    first = run(cache)
    assert [issue.code for issue in first[0]] == ["PL209"]
    assert "'train zero 4' (train row 5 of train-0.jsonl, eval row 1 of eval-0.jsonl)" in first[0][0].message
    write("eval-1.jsonl", ["eval b", "eval d"])  # the result misses; train-0 and eval-0 come from their parts
    second = run(cache)
    assert trace["cached_parts"] == 1 and trace["cached_pieces"] == 2
    assert second == first
    for kept in (cache / "split-data" / "index-texts").glob("*.json"):
        kept.unlink()
    write("eval-1.jsonl", ["eval b", "eval e"])
    third = run(cache)
    assert trace["cached_pieces"] == 2
    assert "1 input occurs in both train and eval" in third[0][0].message
    assert ": an input (train row 5 of train-0.jsonl, eval row 1 of eval-0.jsonl)" in third[0][0].message


def test_a_checkout_in_another_directory_finds_the_parts_of_its_unchanged_files(tmp_path, monkeypatch):
    """A local file's part is keyed by its content (SHA-256), not its absolute path: CI runners check
    out into a directory of their own, and a restored cache must still spare the unchanged files."""
    import shutil

    from planlint.services.split_data import GlobMatches, local_glob

    monkeypatch.setenv("PLANLINT_CACHE_KEY", str(tmp_path / "key" / "seal.key"))
    first = tmp_path / "first"
    for shard in range(3):
        path = first / "data" / f"train-{shard}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps({"customer_id": f"t{shard}-{n}", "prompt": f"train {shard} {n}"}) + "\n" for n in range(10)))
    for shard in range(2):
        (first / "data" / f"eval-{shard}.jsonl").write_text("".join(json.dumps({"customer_id": f"e{shard}-{n}", "prompt": f"eval {shard} {n}"}) + "\n" for n in range(4)))

    trace: dict = {}

    def run(root):
        split = lambda pattern: GlobMatches(pattern, local_glob(root, pattern))  # noqa: E731
        return check_split_data(split("data/train-*.jsonl"), split("data/eval-*.jsonl"), group_key="customer_id", time_key=None,
                                cutoff=None, input_fields=None, cache_dir=root / ".planlint_cache", project_root=root, trace=trace)

    run(first)
    second = tmp_path / "elsewhere" / "second"
    shutil.copytree(first, second)
    (second / "data" / "eval-1.jsonl").write_text(json.dumps({"customer_id": "t2-3", "prompt": "new"}) + "\n")
    issues, _ = run(second)
    assert trace["cached_parts"] == 1 and trace["cached_pieces"] == 3
    assert [issue.code for issue in issues] == ["PL207"]
    assert issues == run(second)[0] and issues == check_split_data(
        GlobMatches("data/train-*.jsonl", local_glob(second, "data/train-*.jsonl")), GlobMatches("data/eval-*.jsonl", local_glob(second, "data/eval-*.jsonl")),
        group_key="customer_id", time_key=None, cutoff=None, input_fields=None, cache_dir=None)[0]


def test_a_plain_eval_file_beside_train_shards_shows_its_texts_for_duplicates_found_from_parts(tmp_path, monkeypatch):
    """The common layout: eval one file, train shards. After eval changes, every train shard is compared
    from its part (not read), and a new duplicate input shows the eval row's text, read again from the
    eval file for that row: never 'an input'."""
    from planlint.services.split_data import GlobMatches, local_glob

    monkeypatch.setenv("PLANLINT_CACHE_KEY", str(tmp_path / "key" / "seal.key"))
    data = tmp_path / "data"
    data.mkdir()
    for shard in range(2):
        (data / f"train-{shard}.jsonl").write_text("".join(json.dumps({"prompt": f"train {shard} item {n}"}) + "\n" for n in range(50)))

    def eval_file(prompts):
        (data / "eval.jsonl").write_text("".join(json.dumps({"prompt": p}) + "\n" for p in prompts))

    trace: dict = {}

    def run(cache):
        return check_split_data(GlobMatches("data/train-*.jsonl", local_glob(tmp_path, "data/train-*.jsonl")), data / "eval.jsonl",
                                group_key=None, time_key=None, cutoff=None, input_fields=None, cache_dir=cache, project_root=tmp_path / "repo", trace=trace)

    eval_file(["eval a", "eval b"])
    assert run(tmp_path / "cache")[0] == []
    eval_file(["eval a", "Train 1 ITEM 7", "train 0 item 3"])
    cached = run(tmp_path / "cache")
    assert trace["cached_pieces"] == 2
    message = cached[0][0].message
    assert "'Train 1 ITEM 7' (train row 8 of train-1.jsonl, eval row 2)" in message
    assert "'train 0 item 3' (train row 4 of train-0.jsonl, eval row 3)" in message
    assert "an input" not in message


def test_each_part_records_the_bytes_of_its_own_object_while_the_next_is_read_ahead(store, tmp_path, monkeypatch):
    """data.max_bytes counts, on a run from parts, what each object's reading took. With the checks
    slower than the network, the read-ahead thread reads the next object while this one is checked:
    the bytes a part records must still be its own object's (they were the split counter's growth
    meanwhile, the next object's reads included, so a cached run passed or failed the cap unlike an
    uncached one)."""
    from planlint.services.split_data import _scan

    monkeypatch.setenv("PLANLINT_CACHE_KEY", str(tmp_path / "key" / "seal.key"))
    bucket = store.bucket()
    sizes = {}
    for shard, count in enumerate((300, 500, 700, 900)):
        body = "".join(json.dumps({"customer_id": f"t{shard}-{n}", "prompt": f"train {shard} {n}"}) + "\n" for n in range(count)).encode()
        store.put(bucket, f"train/part-{shard}.jsonl", body)
        sizes[shard] = len(body)
    for shard in range(2):
        store.put(bucket, f"eval/part-{shard}.jsonl", "".join(json.dumps({"customer_id": f"e{shard}-{n}", "prompt": f"eval {n}"}) + "\n" for n in range(20)).encode())
    slow = _scan._input_texts

    def slower(values, inputs):
        time.sleep(0.05)  # the check slower than the store: the next object is read meanwhile
        return slow(values, inputs)

    monkeypatch.setattr(_scan, "_input_texts", slower)
    cache = tmp_path / "cache"
    check(f"s3://{bucket}/train/*.jsonl", f"s3://{bucket}/eval/*.jsonl", cache_dir=cache, project_root=tmp_path / "repo")
    recorded = []
    for entry in (cache / "split-data" / "index-parts").glob("*.json"):
        part, used = _index_parts.part_from_body(entry.read_bytes().partition(b"\n")[2], CACHE_VERSION)
        if part.report.rows >= 300:
            recorded.append(used)
    assert sorted(recorded) == sorted(sizes.values())


def test_a_record_too_large_in_a_later_shard_is_located_in_that_shard(tmp_path, monkeypatch):
    """A Parquet row over the record limit stops the checks with a note naming its shard and row: the
    reader numbers rows within the object, and the note named the first shard (the row taken as a
    row of the whole split)."""
    from planlint.services.split_data import GlobMatches, _base, local_glob

    monkeypatch.setattr(_base, "MAX_RECORD_BYTES", 4096)
    data = tmp_path / "data"
    data.mkdir()
    for shard in range(4):
        rows = [{"customer_id": f"t{shard}-{n}", "prompt": f"train {shard} {n}"} for n in range(10)]
        if shard == 3:
            rows[4]["prompt"] = "x" * 10_000
        (data / f"train-{shard:05d}.parquet").write_bytes(parquet_bytes(rows))
    (data / "eval.parquet").write_bytes(parquet_bytes([{"customer_id": "e", "prompt": "eval"}]))
    for cache in (None, tmp_path / "cache"):
        issues, notes = check_split_data(GlobMatches("data/train-*.parquet", local_glob(tmp_path, "data/train-*.parquet")), data / "eval.parquet",
                                         group_key="customer_id", time_key=None, cutoff=None, input_fields=None, cache_dir=cache, project_root=tmp_path / "repo")
        assert issues == [] and len(notes) == 1
        assert "(train-00003.parquet): row 5 is longer than 4096 bytes" in notes[0].message, notes[0].message
