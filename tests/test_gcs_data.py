"""`gs://` split paths read from a Cloud Storage imitation on 127.0.0.1 (issue 16): gcsfs's
own client, pointed at tests/gcs_server.py by STORAGE_EMULATOR_HOST, nothing mocked.

Each run is the CLI in a child process, as a CI job runs it. The imitation also
answers at the GCE metadata service's address (GCE_METADATA_HOST/IP), so every
test shows that no credential lookup went to a metadata service.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gcs_server import GcsServer
from split_files import jsonl_gz, plan_text, put_leaky_shards

pytest.importorskip("gcsfs")
pytest.importorskip("pyarrow")
pytest.importorskip("pyarrow.parquet")

pytestmark = pytest.mark.integration

BUCKET = "acme-training-data"


@pytest.fixture(scope="module")
def gcs():
    server = GcsServer().start()
    yield server
    server.stop()


@pytest.fixture
def served(gcs):
    gcs.clear()
    gcs.deny.clear()
    yield gcs
    assert gcs.metadata_requests == []  # no credential lookup asked a metadata service
    assert {request.authorization for request in gcs.requests} == {None}  # anonymous, as at any emulator


def shards(gcs: GcsServer, bucket: str) -> None:
    """train: 3 Parquet shards of 200 rows; eval: 2 gzip JSON Lines shards of 100 rows.
    'cust-leak' is planted in train shard 00001 row 7 and eval shard 1 row 4 (1-based)."""
    put_leaky_shards(gcs, bucket, 200, 100)


def lint(root: Path, gcs: GcsServer, train: str, eval_: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    (root / "plans").mkdir(exist_ok=True)
    (root / "plans" / "remote.yaml").write_text(plan_text(train, eval_))
    (root / ".git").mkdir(exist_ok=True)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("GOOGLE_", "GCE_", "CLOUDSDK_"))}
    env.update(STORAGE_EMULATOR_HOST=gcs.url, GCE_METADATA_HOST=gcs.address, GCE_METADATA_IP=gcs.address,
               CLOUDSDK_CONFIG=str(root / "gcloud"))  # no developer's gcloud login either
    result = subprocess.run([sys.executable, "-m", "planlint", *args, "plans/"], cwd=root, env=env,
                            capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def report(result: subprocess.CompletedProcess) -> dict:
    return json.loads(result.stdout)


def findings(result: subprocess.CompletedProcess, code: str) -> list[dict]:
    return [finding for finding in report(result)["findings"] if finding["code"] == code]


def test_a_leak_in_one_shard_is_found_and_located_by_shard_and_row(served, tmp_path):
    bucket = BUCKET + "-leak"
    shards(served, bucket)
    result = lint(tmp_path, served, f"gs://{bucket}/train/*.parquet", f"gs://{bucket}/eval/*.jsonl.gz",
                  "--format", "json", "--no-cache")
    assert report(result)["notes"] == []
    leaks = findings(result, "PL207")
    assert len(leaks) == 1, result.stdout
    assert "'cust-leak' (train row 7 of part-00001.parquet, eval row 4 of part-1.jsonl.gz)" in leaks[0]["message"]
    read = {request.path.rsplit("/o/", 1)[-1] for request in served.media_gets()}
    assert read == {f"train/part-{n:05d}.parquet" for n in range(3)} | {"eval/part-0.jsonl.gz", "eval/part-1.jsonl.gz"}
    parquet = [request for request in served.media_gets() if request.path.endswith(".parquet")]
    assert all(request.range for request in parquet)  # Parquet through range requests


def test_a_pinned_generation_is_read_and_not_the_live_object(served, tmp_path):
    bucket = BUCKET + "-generations"
    shards(served, bucket)
    leaking = served.put(bucket, "eval/pinned.jsonl", b'{"customer_id": "cust-leak", "prompt": "p"}\n')
    live = served.put(bucket, "eval/pinned.jsonl", b'{"customer_id": "someone-else", "prompt": "p"}\n')  # overwritten since
    train = f"gs://{bucket}/train/*.parquet"
    pinned = lint(tmp_path, served, train, f"gs://{bucket}/eval/pinned.jsonl#{leaking}", "--format", "json", "--no-cache")
    assert report(pinned)["notes"] == [], pinned.stdout
    leaks = findings(pinned, "PL207")
    assert len(leaks) == 1 and "(train row 7 of part-00001.parquet, eval row 1)" in leaks[0]["message"]
    gets = [request for request in served.media_gets() if request.path.endswith("pinned.jsonl")]
    assert gets and all(request.query.get("generation") == [str(leaking)] for request in gets)
    served.clear()
    latest = lint(tmp_path, served, train, f"gs://{bucket}/eval/pinned.jsonl#{live}", "--format", "json", "--no-cache")
    assert findings(latest, "PL207") == [] and report(latest)["notes"] == []
    floating = lint(tmp_path, served, train, f"gs://{bucket}/eval/pinned.jsonl", "--format", "json", "--no-cache")
    assert findings(floating, "PL207") == []  # the live object: no leak, and a PL107 warning that it floats
    assert any(f"gs://{bucket}/eval/pinned.jsonl#<generation>" in f["message"] for f in findings(floating, "PL107"))
    gone = lint(tmp_path, served, train, f"gs://{bucket}/eval/pinned.jsonl#{leaking + 1}", "--format", "json", "--no-cache")
    assert any("pinned.jsonl#" in note and "does not exist" in note for note in report(gone)["notes"])


@pytest.mark.parametrize("case", ["missing", "forbidden", "no-bucket"])
def test_a_missing_or_forbidden_object_is_a_clear_note_and_pl006_with_require_data(served, tmp_path, case):
    bucket = BUCKET + "-faults"
    shards(served, bucket)
    eval_, expected = {
        "missing": (f"gs://{bucket}/eval/nothing-here.jsonl", f"gs://{bucket}/eval/nothing-here.jsonl: does not exist"),
        "forbidden": (f"gs://{bucket}/eval/*.jsonl.gz", "part-1.jsonl.gz: could not be read (access denied)"),
        "no-bucket": ("gs://no-such-bucket/eval.jsonl", "gs://no-such-bucket/eval.jsonl: does not exist"),
    }[case]
    if case == "forbidden":
        served.deny.add(f"{bucket}/eval/part-1.jsonl.gz")
    train = f"gs://{bucket}/train/*.parquet"
    result = lint(tmp_path, served, train, eval_, "--format", "json", "--no-cache")
    assert findings(result, "PL207") == [] and result.returncode == 0
    notes = report(result)["notes"]
    assert len(notes) == 1 and expected in notes[0] and "data-aware checks skipped" in notes[0], notes
    strict = lint(tmp_path, served, train, eval_, "--format", "json", "--no-cache", "--require-data")
    pl006 = findings(strict, "PL006")
    assert len(pl006) == 1 and expected in pl006[0]["message"] and pl006[0]["yaml_path"] == "splits.eval.path"
    assert strict.returncode == 1
    text = lint(tmp_path, served, train, eval_, "--no-cache", "--require-data")
    assert expected in text.stdout and text.returncode == 1
    assert "http://127.0.0.1" not in text.stdout + text.stderr  # the client's request URLs are not the message


def test_an_unchanged_rerun_downloads_nothing_and_a_new_generation_is_read(served, tmp_path):
    bucket = BUCKET + "-cache"
    shards(served, bucket)
    train, eval_ = f"gs://{bucket}/train/*.parquet", f"gs://{bucket}/eval/*.jsonl.gz"
    cache = tmp_path / "cache"
    first = lint(tmp_path, served, train, eval_, "--format", "json", "--cache-dir", str(cache))
    assert len(findings(first, "PL207")) == 1 and len(served.media_gets()) >= 5
    served.clear()
    second = lint(tmp_path, served, train, eval_, "--format", "json", "--cache-dir", str(cache))
    assert report(second)["findings"] == report(first)["findings"]
    assert served.media_gets() == []  # listings only: no object body downloaded again
    # eval shard 1 is rewritten (a new generation) without the leak: it alone is read again, and the leak is gone
    served.put(bucket, "eval/part-1.jsonl.gz", jsonl_gz([{"customer_id": "fresh", "prompt": "new"}]))
    served.clear()
    third = lint(tmp_path, served, train, eval_, "--format", "json", "--cache-dir", str(cache))
    assert findings(third, "PL207") == []
    assert "eval/part-1.jsonl.gz" in {request.path.rsplit("/o/", 1)[-1] for request in served.media_gets()}


@pytest.mark.parametrize("stalled", ["/storage/v1/b/", "/download/"])
def test_a_stalled_store_ends_at_the_time_budget(served, tmp_path, stalled):
    """A listing or a download that never answers ends the run with the budget's note."""
    import threading

    bucket = BUCKET + "-stalled"
    shards(served, bucket)
    (tmp_path / ".planlint.yaml").write_text("data: {time_budget: 2}\n")
    served.release = threading.Event()
    served.stall.add(stalled)
    try:
        result = lint(tmp_path, served, f"gs://{bucket}/train/*.parquet", f"gs://{bucket}/eval/*.jsonl.gz",
                      "--format", "json", "--no-cache", "--require-data", timeout=120)
    finally:
        served.stall.clear()
        served.release.set()
    pl006 = findings(result, "PL006")
    assert len(pl006) == 1 and "limit data.time_budget" in pl006[0]["message"], result.stdout
    assert result.returncode == 1
    assert len([request for request in served.requests if stalled in request.path]) == 1  # asked once, not retried
