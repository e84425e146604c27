"""The larger split's remote objects read by worker processes (services/split_data/_workers.py).

Workers are forked only by a process that runs no other thread, and this test
process runs the S3 server (moto, behind the recording proxy of
tests/object_store.py): each check runs in a process of its own, started here,
which reaches the server through AWS_ENDPOINT_URL as any client would. Nothing
is mocked; a few checks have planlint's own functions wrapped in that process
(a worker that dies, an object whose identity differs) to make trouble happen
where it must be survived. Every check is compared with the same check read in
one process (PLANLINT_DATA_WORKERS=1): the result must not depend on the workers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from object_store import MotoS3, stop_client_threads
from split_files import jsonl_gz, parquet_bytes

pytest.importorskip("s3fs")
pytest.importorskip("moto.server")
pytest.importorskip("pyarrow.parquet")

pytestmark = pytest.mark.integration

_CHILD = r"""
import json, os, signal, sys
from pathlib import Path
from planlint.rules.leakage_findings import findings
from planlint.services.split_data import _sources, _worker_process, check_split_data

args = json.loads(sys.argv[1])
hook = args.pop("hook", None)
if hook == "kill-worker":  # the worker process dies with its first task (set before the fork: inherited)
    def die(self, position, task):
        os.kill(os.getpid(), signal.SIGKILL)
    _worker_process._Worker.read = die
elif hook == "other-identity":  # the listing said another ETag for the first object than the store has now
    listed = _sources.remote_source
    def remote_source(value, split, **options):
        source = listed(value, split, **options)
        if split == "train":
            source.objects[0].identity = "etag:\"not-this-one\":1"
        return source
    _sources.remote_source = remote_source
if args.get("cache_dir"):
    args["cache_dir"] = Path(args["cache_dir"])
    args["project_root"] = Path(args.pop("project_root"))
trace = {}
issues, notes = findings(check_split_data(args.pop("train"), args.pop("eval"), trace=trace, **args))
print(json.dumps({"issues": [[i.code, i.split, i.message] for i in issues],
                  "notes": [[n.split, n.message, n.incomplete] for n in notes],
                  "stats": {key: value for key, value in trace.items() if isinstance(value, (int, str, list, type(None)))}}))
"""


@pytest.fixture(scope="module")
def s3():
    store = MotoS3()
    yield store
    store.stop()
    assert stop_client_threads() == []  # later tests fork workers, which the data checks do only in a process without threads


@pytest.fixture
def store(s3):
    s3.proxy.faults.deny.clear()
    s3.proxy.faults.stall.clear()
    s3.proxy.clear()
    return s3


def run(store: MotoS3, train: str, eval_: str, *, workers: int = 2, hook: str | None = None, timeout: float = 120, **options) -> dict:
    """check_split_data in a process of its own (with `workers` data workers: 1 reads in that process)."""
    options = {"group_key": "customer_id", "time_key": "created_at", "cutoff": "2026-08-01", "input_fields": None,
               "cache_dir": None, **options, "train": train, "eval": eval_, "hook": hook}
    env = {name: value for name, value in os.environ.items() if not name.startswith("AWS_")}
    env.update(store.env(), PLANLINT_DATA_WORKERS=str(workers))
    done = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(options)], env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # nothing from the workers or the clients
    return json.loads(done.stdout)


def shards(store: MotoS3, bucket: str, train_shards: int = 6) -> None:
    """train: Parquet shards of 40 rows; eval: 2 gzip JSON Lines shards of 10 rows. Planted: customer
    'cust-leak' in train shard 3 row 8 and eval shard 1 row 4; train shard 4 row 2 dated after the
    cutoff; eval shard 0 row 6's prompt repeated (case and spaces changed) in train shard 1 row 30."""
    for shard in range(train_shards):
        rows = [{"customer_id": f"train-{shard}-{n}", "created_at": f"2026-03-{1 + n % 28:02d}T10:00:00Z",
                 "prompt": f"train prompt {shard} {n}"} for n in range(40)]
        if shard == 3:
            rows[7]["customer_id"] = "cust-leak"
        if shard == 4:
            rows[1]["created_at"] = "2026-08-19T10:00:00Z"
        if shard == 1:
            rows[29]["prompt"] = "EVAL  prompt 0 5"
        store.put(bucket, f"train/part-{shard:05d}.parquet", parquet_bytes(rows))
    for shard in range(2):
        rows = [{"customer_id": f"eval-{shard}-{n}", "created_at": "2026-09-01T00:00:00Z", "prompt": f"eval prompt {shard} {n}"}
                for n in range(10)]
        if shard == 1:
            rows[3]["customer_id"] = "cust-leak"
        store.put(bucket, f"eval/part-{shard}.jsonl.gz", jsonl_gz(rows))


def paths(bucket: str) -> tuple[str, str]:
    return f"s3://{bucket}/train/*.parquet", f"s3://{bucket}/eval/*.jsonl.gz"


def test_the_larger_splits_objects_are_read_by_workers_with_the_in_process_findings(store):
    bucket = store.bucket()
    shards(store, bucket)
    by_workers = run(store, *paths(bucket))
    assert by_workers["stats"]["mode"] == "object-workers", by_workers["stats"]
    assert by_workers["stats"]["fallback"] is None
    # the worker is handed the first object (and the next as it finishes one), this process reads from the back meanwhile
    assert by_workers["stats"]["objects_by_workers"] >= 1
    assert by_workers["stats"]["objects_by_workers"] + by_workers["stats"]["objects_here"] == 6
    one_process = run(store, *paths(bucket), workers=1)
    assert one_process["stats"]["mode"] != "object-workers"
    assert by_workers["issues"] == one_process["issues"] and by_workers["notes"] == one_process["notes"]
    messages = {code: message for code, _, message in by_workers["issues"]}
    assert sorted(messages) == ["PL207", "PL208", "PL209"]
    assert "'cust-leak' (train row 8 of part-00003.parquet, eval row 4 of part-1.jsonl.gz)" in messages["PL207"]
    assert "row 2 of part-00004.parquet '2026-08-19T10:00:00Z'" in messages["PL208"]
    assert "(train row 30 of part-00001.parquet, eval row 6 of part-0.jsonl.gz)" in messages["PL209"]
    # every object body was fetched once: by the worker or by this process, not both
    gets = [request.path for request in store.proxy.body_gets(bucket) if "/train/" in request.path]
    assert {path.rsplit("/", 1)[-1] for path in gets} == {f"part-{shard:05d}.parquet" for shard in range(6)}


def test_workers_with_the_per_object_cache_give_the_same_findings_and_a_rerun_reads_nothing(store, tmp_path):
    bucket = store.bucket()
    shards(store, bucket)
    options = {"cache_dir": str(tmp_path / "cache"), "project_root": str(tmp_path / "repo")}
    first = run(store, *paths(bucket), **options)
    assert first["stats"]["mode"] == "object-workers" and first["stats"]["fallback"] is None
    uncached = run(store, *paths(bucket), workers=1)
    assert first["issues"] == uncached["issues"] and first["notes"] == uncached["notes"]
    # two objects change: the only ones read again, by the worker, against an index made of the
    # smaller split's cached parts (keyed digests, rebuilt in the worker from the index's key)
    store.put(bucket, "train/part-00004.parquet", parquet_bytes([{"customer_id": "eval-0-1", "created_at": "2026-01-01", "prompt": "x"}]))
    store.put(bucket, "train/part-00005.parquet", parquet_bytes([{"customer_id": "t", "created_at": "2026-01-01", "prompt": "Eval Prompt 1  2"}]))
    store.proxy.clear()
    second = run(store, *paths(bucket), **options)
    assert {request.path.rsplit("/", 1)[-1] for request in store.proxy.body_gets(bucket)} == {"part-00004.parquet", "part-00005.parquet"}
    assert second["stats"]["cached_parts"] == 2 and second["stats"]["cached_pieces"] == 4
    assert second["stats"]["mode"] == "object-workers" and second["stats"]["objects_by_workers"] >= 1, second["stats"]
    assert second["stats"]["objects_by_workers"] + second["stats"]["objects_here"] == 2
    assert second["issues"] == run(store, *paths(bucket), workers=1)["issues"]
    messages = {code: message for code, _, message in second["issues"]}
    assert "'eval-0-1' (train row 1 of part-00004.parquet" in messages["PL207"]
    assert "(train row 1 of part-00005.parquet, eval row 3 of part-1.jsonl.gz)" in messages["PL209"]


def test_a_worker_killed_mid_task_falls_back_to_this_process_with_the_same_findings(store):
    bucket = store.bucket()
    shards(store, bucket)
    survived = run(store, *paths(bucket), hook="kill-worker")
    assert survived["stats"]["fallback"] == "a worker process ended unexpectedly", survived["stats"]
    assert survived["stats"].get("objects_by_workers", 0) == 0
    one_process = run(store, *paths(bucket), workers=1)
    assert survived["issues"] == one_process["issues"] and survived["notes"] == one_process["notes"]
    assert [code for code, _, _ in survived["issues"]] == ["PL207", "PL208", "PL209"]


def test_an_object_whose_identity_differs_from_the_listing_is_read_here(store):
    bucket = store.bucket()
    shards(store, bucket)
    checked = run(store, *paths(bucket), hook="other-identity")
    assert "part-00000.parquet: not the object listed" in checked["stats"]["fallback"], checked["stats"]
    one_process = run(store, *paths(bucket), workers=1)
    assert checked["issues"] == one_process["issues"] and checked["notes"] == one_process["notes"]


def test_a_stalled_object_in_a_worker_ends_at_the_time_budget(store):
    """The worker's object stalls: the worker gives it up at the budget, after one GET, and this
    process stops waiting there too; the note names the split as when read in one process."""
    bucket = store.bucket()
    shards(store, bucket)
    stalled = f"/{bucket}/train/part-00000.parquet"  # the first object: handed to the worker
    store.proxy.faults.stall.add(stalled)
    started = time.monotonic()
    stopped = run(store, *paths(bucket), time_budget=4.0)
    elapsed = time.monotonic() - started
    assert stopped["issues"] == []
    assert stopped["notes"] == [["train", "the data checks stopped after 4s (limit data.time_budget) while reading the train split; "
                                          "data-aware checks skipped", True]]
    assert stopped["stats"]["mode"] == "object-workers"
    time.sleep(1.0)  # a retry would come after the first attempt's read timeout, at the budget
    assert [r.path for r in store.proxy.requests if r.method == "GET" and r.path == stalled] == [stalled]
    assert elapsed < 60  # a hang bound (the child ends at the budget), not a speed check
    store.proxy.faults.stall.clear()
    store.proxy.release.set()
    store.proxy.release.clear()


def test_the_byte_cap_stops_the_check_with_workers_as_in_one_process(store):
    bucket = store.bucket()
    shards(store, bucket)
    sizes = [store.client().head_object(Bucket=bucket, Key=f"train/part-{shard:05d}.parquet")["ContentLength"] for shard in range(6)]
    cap = sum(sizes) // 2  # reached in the middle of the larger split; the smaller split is far below it
    store.proxy.clear()
    capped = run(store, *paths(bucket), max_bytes=cap)
    requests = list(store.proxy.requests)
    sent = sum(request.sent for request in store.proxy.body_gets(bucket) if "/train/" in request.path)
    assert capped["stats"]["mode"] == "object-workers"
    assert capped["issues"] == []
    assert capped["notes"] == [["train", f"s3://{bucket}/train/*.parquet: the train split read more than {cap} bytes "
                                         "(limit data.max_bytes): the data checks stopped there; data-aware checks skipped", True]]
    one_process = run(store, *paths(bucket), workers=1, max_bytes=cap)
    assert one_process["notes"] == capped["notes"]
    # Each object in flight may read up to what was left when it was started: with one worker
    # and this process reading one object each, two objects' reads past the cap, and one more
    # when an object cut short only by objects after it is read again in its turn.
    per_object: dict = {}
    for request in requests:
        per_object[request.path] = per_object.get(request.path, 0) + request.sent
    assert sent <= cap + 3 * max(per_object.values())


def test_an_error_in_a_worker_is_raised_as_in_one_process(store):
    """Access denied to the second object (the worker's): the note is the one reading in one process gives."""
    bucket = store.bucket()
    shards(store, bucket)
    store.proxy.faults.deny.add(f"/{bucket}/train/part-00001.parquet")
    denied = run(store, *paths(bucket))
    assert denied["stats"]["mode"] == "object-workers"
    one_process = run(store, *paths(bucket), workers=1)
    assert denied["issues"] == one_process["issues"] == []
    assert denied["notes"] == one_process["notes"]
    assert len(denied["notes"]) == 1 and "part-00001.parquet: could not be read (access denied)" in denied["notes"][0][1]


def test_an_error_before_a_stalled_object_of_this_process_is_the_note_as_in_one_process(store):
    """Access denied to the second object and the last one stalled (this process reads from the back):
    reading in order meets the denied object first, so its note is the answer, not the time budget's
    (which used to be raised as soon as this process's own object ran out of time)."""
    bucket = store.bucket()
    shards(store, bucket)
    store.proxy.faults.deny.add(f"/{bucket}/train/part-00001.parquet")
    store.proxy.faults.stall.add(f"/{bucket}/train/part-00005.parquet")
    try:
        denied = run(store, *paths(bucket), time_budget=4.0)
        one_process = run(store, *paths(bucket), workers=1, time_budget=4.0)
    finally:
        store.proxy.faults.stall.clear()
        store.proxy.release.set()
        store.proxy.release.clear()
    assert denied["stats"]["mode"] == "object-workers"
    assert denied["notes"] == one_process["notes"]
    assert len(denied["notes"]) == 1 and "part-00001.parquet: could not be read (access denied)" in denied["notes"][0][1]


def test_an_error_under_the_byte_cap_is_the_note_as_in_one_process(store):
    """The cap leaves room for the first two objects and the third is denied: reading in order gives
    the denied object's note. An object handed to a worker starts from what the split read BEFORE it
    in object order (not from the objects this process read from the back meanwhile), so the
    workers do not turn it into the cap's note."""
    bucket = store.bucket()
    shards(store, bucket)
    store.proxy.faults.deny.add(f"/{bucket}/train/part-00002.parquet")
    store.proxy.clear()
    one_process = run(store, *paths(bucket), workers=1)
    read = {request.path.rsplit("/", 1)[-1]: request.sent for request in store.proxy.body_gets(bucket) if "/train/" in request.path}
    read = {name: sum(r.sent for r in store.proxy.body_gets(bucket) if r.path.endswith("/train/" + name)) for name in read}
    cap = read["part-00000.parquet"] + read["part-00001.parquet"] + 64  # the first two objects (the cap is per split), not a third
    capped = run(store, *paths(bucket), max_bytes=cap)
    one_process = run(store, *paths(bucket), workers=1, max_bytes=cap)
    assert capped["stats"]["mode"] == "object-workers"
    assert capped["notes"] == one_process["notes"]
    assert len(capped["notes"]) == 1 and "part-00002.parquet: could not be read (access denied)" in capped["notes"][0][1]


def test_a_killed_planlint_process_takes_its_worker_with_it(store):
    """SIGKILL (or SIGTERM) leaves no chance to end the workers: the kernel must end them, or an
    orphan goes on downloading with the run's credentials and holds planlint's output open until the
    time budget (60 s here). The reader of the output sees its end as soon as planlint is gone."""
    import signal

    bucket = store.bucket()
    shards(store, bucket)
    stalled = f"/{bucket}/train/part-00000.parquet"  # the first object: the worker's
    store.proxy.faults.stall.add(stalled)
    options = {"group_key": "customer_id", "time_key": None, "cutoff": None, "input_fields": None, "cache_dir": None,
               "time_budget": 60.0, "train": paths(bucket)[0], "eval": paths(bucket)[1]}
    env = {name: value for name, value in os.environ.items() if not name.startswith("AWS_")}
    env.update(store.env(), PLANLINT_DATA_WORKERS="2")
    child = subprocess.Popen([sys.executable, "-c", _CHILD, json.dumps(options)], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def left() -> list[str]:  # the check's processes: a forked worker has its parent's command line, the bucket's name in it
        listing = subprocess.run(["ps", "-eww", "-o", "pid=,stat=,args="], capture_output=True, text=True).stdout.splitlines()
        return [line for line in listing if bucket in line and line.split()[1][:1] != "Z"]

    try:
        for _ in range(600):  # until the worker waits on the stalled object
            if any(request.method == "GET" and request.path == stalled for request in list(store.proxy.requests)):
                break
            time.sleep(0.05)
        else:
            pytest.fail("the stalled object was never asked for")
        assert len(left()) == 2, left()  # the check and its worker
        child.send_signal(signal.SIGKILL)
        child.wait(10)

        for _ in range(200):  # the kernel ends the worker at once; an orphan would wait out the 60 s budget
            if not left():
                break
            time.sleep(0.05)
        assert left() == []
        ended = subprocess.run([sys.executable, "-c", "import sys; sys.stdin.buffer.read()"], stdin=child.stdout, timeout=30)
        assert ended.returncode == 0  # end of file: no worker holds the output open
    finally:
        child.kill()
        store.proxy.faults.stall.clear()
        store.proxy.release.set()
        store.proxy.release.clear()
