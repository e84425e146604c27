"""`hf://` split paths read from a Hub on 127.0.0.1 (issue 16): huggingface_hub's own
HfFileSystem, pointed at tests/hub_server.py by HF_ENDPOINT, nothing mocked.

huggingface_hub reads HF_ENDPOINT (and HF_HUB_OFFLINE, HF_TOKEN) when it is
imported, and the test session points it at a closed port, so every run here is
the CLI in a child process with the imitation's address in its environment, as a
user's CI job would run it.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hub_server import HubServer, hf_uri
from split_files import parquet_bytes, plan_text

pytest.importorskip("huggingface_hub")
pytest.importorskip("pyarrow")
pytest.importorskip("pyarrow.parquet")

pytestmark = pytest.mark.integration

REPO = "acme/retail-refunds"
TOKEN = "hf_planlintTestTokenQx81Zr5Vw3"


@pytest.fixture(scope="module")
def hub():
    server = HubServer(token=TOKEN).start()
    yield server
    server.stop()


@pytest.fixture
def served(hub):
    hub.clear()
    return hub


def shard_files(leak_shard: int = 1, leak_row: int = 6) -> dict[str, bytes]:
    """3 Parquet train shards of 200 rows and a JSON Lines eval file of 50 rows;
    'cust-leak' is planted in train shard 1 (row 7, 1-based) and eval line 31."""
    files = {}
    for shard in range(3):
        rows = [{"customer_id": f"train-{shard}-{n}", "prompt": f"train prompt {shard} {n}"} for n in range(200)]
        if shard == leak_shard:
            rows[leak_row]["customer_id"] = "cust-leak"
        files[f"data/train-{shard:05d}-of-00003.parquet"] = parquet_bytes(rows)
    lines = [{"customer_id": f"eval-{n}", "prompt": f"eval prompt {n}"} for n in range(50)]
    lines[30]["customer_id"] = "cust-leak"
    files["data/eval.jsonl"] = "".join(json.dumps(row) + "\n" for row in lines).encode()
    return files


def write_plan(root: Path, train: str, eval_: str) -> None:
    (root / "plans").mkdir(exist_ok=True)
    (root / "plans" / "remote.yaml").write_text(plan_text(train, eval_))
    (root / ".git").mkdir(exist_ok=True)


def run_cli(root: Path, hub: HubServer, *args: str, token: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("HF_", "HUGGINGFACE_"))}
    env.update(HF_ENDPOINT=hub.url, HF_HOME=str(root / "hf-home"), HF_HUB_DISABLE_TELEMETRY="1")
    if token is not None:
        env["HF_TOKEN"] = token
    result = subprocess.run([sys.executable, "-m", "planlint", *args], cwd=root, env=env,
                            capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def report(result: subprocess.CompletedProcess) -> dict:
    return json.loads(result.stdout)


def codes(result: subprocess.CompletedProcess) -> list[str]:
    return [finding["code"] for finding in report(result)["findings"]]


def test_a_leak_in_one_shard_of_a_pinned_hub_dataset_is_found_and_located(served, tmp_path):
    sha = served.commit(REPO, shard_files())
    write_plan(tmp_path, hf_uri(REPO, sha, "data/train-*.parquet"), hf_uri(REPO, sha, "data/eval.jsonl"))
    result = run_cli(tmp_path, served, "--format", "json", "--no-cache", "plans/")
    assert codes(result) == ["PL207"], result.stdout  # pinned to a commit: no PL107
    message = report(result)["findings"][0]["message"]
    assert "'cust-leak' (train row 7 of train-00001-of-00003.parquet, eval row 31)" in message
    assert report(result)["notes"] == []
    # every shard was read, at that commit, through the Hub's own endpoints
    read = {request.path.rsplit("/", 1)[-1] for request in served.requests if "/resolve/" in request.path}
    assert read == {f"train-{n:05d}-of-00003.parquet" for n in range(3)} | {"eval.jsonl"}
    assert all(f"/resolve/{sha}/" in request.path for request in served.requests if "/resolve/" in request.path)
    assert all(request.range for request in served.body_gets())  # range requests only


def test_the_pinned_commit_is_read_not_the_branch_head(served, tmp_path):
    repo = "acme/pinned-vs-head"
    leaking = served.commit(repo, shard_files())
    clean = shard_files(leak_shard=7)  # no train shard leaks at the head of main
    served.commit(repo, clean)
    write_plan(tmp_path, hf_uri(repo, leaking, "data/train-*.parquet"), hf_uri(repo, leaking, "data/eval.jsonl"))
    assert codes(run_cli(tmp_path, served, "--format", "json", "--no-cache", "plans/")) == ["PL207"]
    write_plan(tmp_path, f"hf://datasets/{repo}@main/data/train-*.parquet", f"hf://datasets/{repo}@main/data/eval.jsonl")
    floating = run_cli(tmp_path, served, "--format", "json", "--no-cache", "plans/")
    assert sorted(codes(floating)) == ["PL107", "PL107"]  # a branch is not a pin, and at its head nothing leaks


@pytest.mark.parametrize("case, expected", [
    ("file", "data/nothing-here.jsonl: does not exist;"),
    ("revision", "data/eval.jsonl: does not exist (the dataset has no such revision)"),
    ("repository", "data/eval.jsonl: does not exist (no such dataset, or it is private and no token in HF_TOKEN opens it)"),
])
def test_a_missing_file_revision_or_repository_is_a_clear_note_and_pl006_with_require_data(served, tmp_path, case, expected):
    sha = served.commit("acme/present", shard_files())
    train = hf_uri("acme/present", sha, "data/train-*.parquet")
    eval_ = {
        "file": hf_uri("acme/present", sha, "data/nothing-here.jsonl"),
        "revision": hf_uri("acme/present", "0" * 40, "data/eval.jsonl"),
        "repository": hf_uri("acme/absent", sha, "data/eval.jsonl"),
    }[case]
    write_plan(tmp_path, train, eval_)
    result = run_cli(tmp_path, served, "--format", "json", "--no-cache", "plans/")
    assert codes(result) == [] and result.returncode == 0
    notes = report(result)["notes"]
    assert len(notes) == 1 and eval_ in notes[0] and expected in notes[0], notes
    strict = run_cli(tmp_path, served, "--format", "json", "--no-cache", "--require-data", "plans/")
    found = report(strict)["findings"]
    assert [f["code"] for f in found] == ["PL006"] and strict.returncode == 1
    assert found[0]["yaml_path"] == "splits.eval.path" and expected in found[0]["message"]
    text = run_cli(tmp_path, served, "--no-cache", "--require-data", "plans/")
    assert "PL006" in text.stdout and expected in text.stdout and text.returncode == 1


def test_a_revision_written_after_the_file_is_pl107_and_a_note_not_a_pass(served, tmp_path):
    """hf://datasets/ORG/NAME/FILE@REV: huggingface_hub reads '@REV' as part of the file name."""
    sha = served.commit("acme/late", shard_files())
    write_plan(tmp_path, f"hf://datasets/acme/late/data/train-*.parquet@{sha}", f"hf://datasets/acme/late/data/eval.jsonl@{sha}")
    result = run_cli(tmp_path, served, "--format", "json", "--no-cache", "--require-data", "plans/")
    found = report(result)["findings"]
    assert sorted(f["code"] for f in found) == ["PL006", "PL006", "PL107", "PL107"]  # each split: neither can be read
    pinned = [f["message"] for f in found if f["code"] == "PL107"]
    assert any(f"hf://datasets/acme/late@{sha}/data/eval.jsonl" in message for message in pinned), pinned
    assert result.returncode == 1


def test_an_unchanged_rerun_is_answered_from_the_cache(served, tmp_path):
    sha = served.commit("acme/cached", shard_files())
    write_plan(tmp_path, hf_uri("acme/cached", sha, "data/train-*.parquet"), hf_uri("acme/cached", sha, "data/eval.jsonl"))
    cache = tmp_path / "cache"
    first = run_cli(tmp_path, served, "--format", "json", "--cache-dir", str(cache), "plans/")
    assert codes(first) == ["PL207"]
    assert len(served.body_gets()) >= 4
    served.clear()
    second = run_cli(tmp_path, served, "--format", "json", "--cache-dir", str(cache), "plans/")
    assert report(second)["findings"] == report(first)["findings"]
    assert served.body_gets() == []  # listings only: no file body downloaded again
    assert served.requests  # (the listing was asked: the cache is keyed by what the Hub says now)


def test_a_new_commit_downloads_only_the_files_it_changed(served, tmp_path):
    """The plan moves to a new commit of the dataset in which one train shard changed: the other
    shards and the eval file (the same blobs) come from the per-object cache, keyed by blob id,
    not by the revision in their path; the findings are those of a run without cache."""
    repo = "acme/growing"
    files = shard_files()
    first = served.commit(repo, files)
    write_plan(tmp_path, hf_uri(repo, first, "data/train-*.parquet"), hf_uri(repo, first, "data/eval.jsonl"))
    cache = tmp_path / "cache"
    assert codes(run_cli(tmp_path, served, "--format", "json", "--cache-dir", str(cache), "plans/")) == ["PL207"]
    rows = [{"customer_id": f"train-2-{n}", "prompt": f"train prompt 2 {n}"} for n in range(200)]
    rows[9]["customer_id"] = "eval-4"  # a second leaked customer, in the changed shard
    changed = parquet_bytes(rows)
    second = served.commit(repo, {**files, "data/train-00002-of-00003.parquet": changed})
    write_plan(tmp_path, hf_uri(repo, second, "data/train-*.parquet"), hf_uri(repo, second, "data/eval.jsonl"))
    served.clear()
    cached = run_cli(tmp_path, served, "--format", "json", "--cache-dir", str(cache), "plans/")
    read = {request.path.rsplit("/", 1)[-1] for request in served.body_gets()}
    assert read == {hashlib.sha256(changed).hexdigest()}, read  # an LFS file's bytes come from the CDN, by SHA-256
    uncached = run_cli(tmp_path, served, "--format", "json", "--no-cache", "plans/")
    assert report(cached)["findings"] == report(uncached)["findings"]
    assert "2 customer_id values occur in both train and eval" in report(cached)["findings"][0]["message"]


def test_a_private_dataset_is_read_with_hf_token_and_the_token_is_in_no_output(served, tmp_path):
    sha = served.commit("acme/private", shard_files(), private=True)
    train, eval_ = hf_uri("acme/private", sha, "data/train-*.parquet"), hf_uri("acme/private", sha, "data/eval.jsonl")
    write_plan(tmp_path, train, eval_)
    result = run_cli(tmp_path, served, "--format", "json", "--no-cache", "plans/", token=TOKEN)
    assert codes(result) == ["PL207"]
    assert {request.authorization for request in served.requests if request.path.startswith("/api/datasets/")} == {f"Bearer {TOKEN}"}
    # without the token the repository is "not found" (the Hub's 401): a note, and the token nowhere
    anonymous = run_cli(tmp_path, served, "--format", "json", "--no-cache", "plans/")
    assert codes(anonymous) == [] and "it is private and no token in HF_TOKEN opens it" in " ".join(report(anonymous)["notes"])
    write_plan(tmp_path, train, hf_uri("acme/private", sha, "data/gone.jsonl"))
    for fmt in ("text", "json", "github", "sarif", "junit", "markdown"):
        for token, missing in ((TOKEN, "gone.jsonl: does not exist"), ("hf_wrongTokenNotAccepted77", "private and no token in HF")):
            result = run_cli(tmp_path, served, "--format", fmt, "--no-cache", "--require-data", "plans/", token=token)
            output = result.stdout + result.stderr
            assert "PL006" in output and missing in output, (fmt, output)
            assert token not in output and TOKEN not in output, (fmt, output)


def test_a_gated_dataset_whose_access_was_not_granted_is_a_note(served, tmp_path):
    """The Hub lists a gated dataset's files but answers 403 GatedRepo for their bytes."""
    sha = served.commit("acme/gated", shard_files())
    served.gated.add("acme/gated")
    try:
        write_plan(tmp_path, hf_uri("acme/gated", sha, "data/train-*.parquet"), hf_uri("acme/gated", sha, "data/eval.jsonl"))
        result = run_cli(tmp_path, served, "--format", "json", "--no-cache", "--require-data", "plans/", token=TOKEN)
    finally:
        served.gated.discard("acme/gated")
    found = report(result)["findings"]
    assert [f["code"] for f in found] == ["PL006"] and result.returncode == 1
    assert "could not be read (access denied: the dataset is gated" in found[0]["message"], found
    assert "http://127.0.0.1" not in result.stdout and TOKEN not in result.stdout + result.stderr


@pytest.mark.parametrize("stalled", ["/tree/", "/resolve/"])
def test_a_stalled_hub_ends_at_the_time_budget_not_in_a_hung_job(served, tmp_path, stalled):
    """huggingface_hub waits on a tree listing without any timeout (and retries a stalled download
    five times): the budget must still end the run, with its note. Without the bound the run hangs
    until the Hub answers, here never within the test's timeout."""
    import threading

    sha = served.commit("acme/stalled", shard_files())
    write_plan(tmp_path, hf_uri("acme/stalled", sha, "data/train-*.parquet"), hf_uri("acme/stalled", sha, "data/eval.jsonl"))
    (tmp_path / ".planlint.yaml").write_text("data: {time_budget: 2}\n")
    served.release = threading.Event()
    served.stall.add(stalled)
    try:
        result = run_cli(tmp_path, served, "--format", "json", "--no-cache", "--require-data", "plans/", timeout=120)
    finally:
        served.stall.clear()
        served.release.set()
    found = report(result)["findings"]
    assert [f["code"] for f in found] == ["PL006"] and result.returncode == 1
    assert "stopped after 2s (limit data.time_budget)" in found[0]["message"], found
    assert any(stalled in request.path for request in served.requests)  # the stalled call was made
