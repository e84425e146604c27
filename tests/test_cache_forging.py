"""A pull request cannot commit cache entries that planlint believes (issue 10, item 2).

Each test plays the attacker end to end: on their own machine (their own key)
they run planlint, edit the cache entry it wrote so that it hides the finding,
re-seal it with their key (the best forgery they can make), commit it into
`.planlint_cache/` with `git add -f`, and the "CI" clones the repository and
runs planlint in a fresh process with its own key. The finding must be
reported. Each test also shows that the forged entry *would* be served under
the attacker's key, so it fails if sealing stops mattering. An unsealed entry
(the format before sealing) is tried as well.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import REFERENCE_PLAN, run_process, write
from planlint.core.cache_seal import seal, seal_bytes
from planlint.services.split_data import CACHE_VERSION, _index_parts
from registry_server import RegistryServer
from split_files import plan_text

pytestmark = pytest.mark.integration

REF = REFERENCE_PLAN.read_text(encoding="utf-8")
ATTACKER_KEY = bytes(range(32))


def _git(cwd: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@example.com", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@example.com",
           "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd), "PATH": "/usr/bin:/bin:/usr/local/bin"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout


def _commit_and_clone(repo: Path, elsewhere: Path) -> Path:
    """Commit `repo` (forged cache included), move it to `elsewhere`, and clone it back to its own path.

    The CI's checkout path is predictable (e.g. /home/runner/work/NAME/NAME) and
    cache keys may include absolute paths, so the attacker prepares the entries
    at the very path the CI will use.
    """
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "add", "-f", ".planlint_cache")  # the cache's own .gitignore says '*': the attacker forces it
    _git(repo, "commit", "-q", "-m", "a plan, and a cache that says it is fine")
    repo.rename(elsewhere)
    _git(elsewhere, "clone", "-q", str(elsewhere), str(repo))
    assert list((repo / ".planlint_cache").rglob("*.json")), "the forged entry must reach the checkout"
    return repo


def _keys(tmp_path: Path) -> tuple[dict, dict]:
    attacker = tmp_path / "attacker-home" / "key"
    attacker.parent.mkdir(parents=True)
    attacker.write_bytes(ATTACKER_KEY)
    attacker.chmod(0o600)
    return {"PLANLINT_CACHE_KEY": str(attacker)}, {"PLANLINT_CACHE_KEY": str(tmp_path / "ci-home" / "key")}


def _reseal(path: Path, cache: str, identity: str, edit) -> None:
    body = json.loads(path.read_text(encoding="utf-8"))
    body.pop("mac")
    edit(body)
    path.write_text(seal(ATTACKER_KEY, cache, identity, body), encoding="utf-8")


def _codes(result) -> list[str]:
    return [f["code"] for f in result.json["findings"]]


# --------------------------------------------------------------------------- split-data


def _leaky_repo(repo: Path) -> None:
    write(repo / "plans" / "plan.yaml", REF.replace("path: data/retail/train.jsonl", "path: data/train.jsonl").replace("path: data/retail/eval.jsonl", "path: data/eval.jsonl"))
    rows = lambda prefix, customers: "".join(json.dumps({"id": f"{prefix}{i}", "customer_id": c, "created_at": "2026-05-01" if prefix == "t" else "2026-08-10", "prompt": f"{prefix} q {i}"}) + "\n" for i, c in enumerate(customers))  # noqa: E731
    write(repo / "data" / "train.jsonl", rows("t", ["c-1", "c-2", "c-3"]))
    write(repo / "data" / "eval.jsonl", rows("e", ["c-2", "e-9"]))  # c-2 is in both: PL207


@pytest.mark.parametrize("forgery", ["resealed with the attacker's key", "unsealed"])
def test_a_committed_split_data_entry_saying_no_leak_does_not_hide_pl207(tmp_path, forgery):
    attacker_env, ci_env = _keys(tmp_path)
    repo = tmp_path / "repo"
    _leaky_repo(repo)
    first = run_process("--format", "json", "plans/", cwd=repo, env=attacker_env)
    assert _codes(first) == ["PL207"], first
    shutil_results(repo)  # only the split-data entry is committed
    (entry,) = (repo / ".planlint_cache" / "split-data").glob("*.json")

    def no_leak(body):
        body["facts"]["shared_groups"] = None  # "no customer in both splits"

    _reseal(entry, "split-data", entry.stem, no_leak)
    # Under the attacker's key the forged entry is served: the forgery is a good one.
    assert _codes(run_process("--format", "json", "plans/", cwd=repo, env=attacker_env)) == []
    if forgery == "unsealed":
        body = json.loads(entry.read_text(encoding="utf-8"))
        del body["mac"]
        entry.write_text(json.dumps(body), encoding="utf-8")
    clone = _commit_and_clone(repo, tmp_path / "attacker-copy")
    result = run_process("--format", "json", "plans/", cwd=clone, env=ci_env)
    assert result.status == 1 and _codes(result) == ["PL207"], result


@pytest.mark.parametrize("forgery", ["resealed with the attacker's key", "unsealed"])
def test_a_committed_piece_of_one_shard_saying_no_leak_does_not_hide_pl207(tmp_path, forgery):
    """The larger split's shards each have a cached index part (issue 16): a forged part hides nothing."""
    attacker_env, ci_env = _keys(tmp_path)
    repo = tmp_path / "repo"
    write(repo / "plans" / "plan.yaml", REF.replace("path: data/retail/train.jsonl", "path: data/train-*.jsonl").replace("path: data/retail/eval.jsonl", "path: data/eval.jsonl"))
    rows = lambda prefix, customers: "".join(json.dumps({"id": f"{prefix}{i}", "customer_id": c, "created_at": "2026-05-01" if prefix[0] == "t" else "2026-08-10", "prompt": f"{prefix} q {i}"}) + "\n" for i, c in enumerate(customers))  # noqa: E731
    write(repo / "data" / "train-0.jsonl", rows("t0", [f"c-{n}" for n in range(10)]))
    write(repo / "data" / "train-1.jsonl", rows("t1", [f"d-{n}" for n in range(9)] + ["e-2"]))  # e-2 is in both: PL207
    write(repo / "data" / "eval.jsonl", rows("e", ["e-1", "e-2"]))
    first = run_process("--format", "json", "plans/", cwd=repo, env=attacker_env)
    assert _codes(first) == ["PL207"], first
    assert "train row 10 of train-1.jsonl" in first.json["findings"][0]["message"]
    shutil_results(repo)
    for entry in (repo / ".planlint_cache" / "split-data").glob("*.json"):
        entry.unlink()  # the pieces alone decide
    forged = 0
    for entry in (repo / ".planlint_cache" / "split-data" / "index-parts").glob("*.json"):
        part, used = _index_parts.part_from_body(entry.read_bytes().partition(b"\n")[2], CACHE_VERSION)
        if "e-2" in part.group_keys:
            at = part.group_keys.index("e-2")  # "no such customer in this shard"
            del part.group_keys[at]
            del part.group_rows[at]
            entry.write_bytes(seal_bytes(ATTACKER_KEY, "split-data-index-part", entry.stem, b"".join(_index_parts.part_body(part, used, CACHE_VERSION))))
            forged += 1
    assert forged == 1
    # Under the attacker's key the forged part is served: the forgery is a good one.
    assert _codes(run_process("--format", "json", "plans/", cwd=repo, env=attacker_env)) == []
    shutil_results(repo)
    for entry in (repo / ".planlint_cache" / "split-data").glob("*.json"):
        entry.unlink()
    if forgery == "unsealed":
        for entry in (repo / ".planlint_cache" / "split-data" / "index-parts").glob("*.json"):
            entry.write_bytes(entry.read_bytes().partition(b"\n")[2])  # the body alone
    clone = _commit_and_clone(repo, tmp_path / "attacker-copy")
    result = run_process("--format", "json", "plans/", cwd=clone, env=ci_env)
    assert result.status == 1 and _codes(result) == ["PL207"], result
    assert "train row 10 of train-1.jsonl" in result.json["findings"][0]["message"]


def shutil_results(repo: Path) -> None:
    """Drop the result cache, so the split-data entry alone decides."""
    import shutil

    shutil.rmtree(repo / ".planlint_cache" / "results", ignore_errors=True)


# --------------------------------------------------------------------------- result cache


def test_a_committed_result_segment_saying_no_findings_is_not_served(tmp_path):
    attacker_env, ci_env = _keys(tmp_path)
    repo = tmp_path / "repo"
    write(repo / "plans" / "plan.yaml", REF.replace('release: "2026.11.03"', "release: latest"))
    # The attacker computes the run key exactly: same planlint, same working directory as the CI's.
    first = run_process("--format", "json", "plans/", cwd=repo, env=attacker_env)
    assert "PL102" in _codes(first), first
    (segment,) = (repo / ".planlint_cache" / "results").rglob("s-*.json")

    def no_findings(body):
        for entry in body["entries"].values():
            entry["r"]["findings"] = []

    _reseal(segment, "results", json.loads(segment.read_text(encoding="utf-8"))["run"], no_findings)
    assert _codes(run_process("--format", "json", "plans/", cwd=repo, env=attacker_env)) == []  # a good forgery
    _commit_and_clone(repo, tmp_path / "attacker-copy")
    assert list((repo / ".planlint_cache" / "results").rglob("s-*.json"))
    result = run_process("--format", "json", "plans/", cwd=repo, env=ci_env)
    assert result.status == 1 and "PL102" in _codes(result), result
    # and the attacker's key still would have been fooled by it: only the key differs
    assert _codes(run_process("--format", "json", "plans/", cwd=repo, env=attacker_env)) == []


# --------------------------------------------------------------------------- registry cache


def test_a_committed_registry_answer_does_not_hide_pl105_online(tmp_path):
    attacker_env, ci_env = _keys(tmp_path)
    server = RegistryServer().start()
    try:
        server.published |= {("graders", "tau-retail-db-state", "1.4.2"), ("graders", "polite-tone-judge", "3.0.1")}
        repo = tmp_path / "repo"
        write(repo / ".planlint.yaml", json.dumps({"registry": {"url": server.url, "timeout": 2, "backoff": 0.01, "online": True}}) + "\n")
        write(repo / "plans" / "plan.yaml", REF.replace('release: "2026.11.03"', 'release: "2026.12.24"'))  # never published
        first = run_process("--format", "json", "plans/", cwd=repo, env=attacker_env)
        assert _codes(first) == ["PL105"], first
        shutil_results(repo)
        forged = 0
        for entry in (repo / ".planlint_cache" / "registry").glob("*.json"):
            url = json.loads(entry.read_text(encoding="utf-8"))["url"]

            def published(body):
                body["status"] = 200

            _reseal(entry, "registry", url, published)
            forged += 1
        assert forged == 3
        server.requests.clear()
        assert _codes(run_process("--format", "json", "plans/", cwd=repo, env=attacker_env)) == []  # a good forgery
        shutil_results(repo)
        assert server.requests == []  # it was the cache that answered
        clone = _commit_and_clone(repo, tmp_path / "attacker-copy")
        result = run_process("--format", "json", "plans/", cwd=clone, env=ci_env)
        assert result.status == 1 and _codes(result) == ["PL105"], result
        assert "/v1/datasets/retail-refunds/releases/2026.12.24" in server.paths()  # asked the registry, not the file
    finally:
        server.stop()


# --------------------------------------------------------------------------- the key


def test_the_key_is_created_private_and_a_linked_or_shared_key_is_not_used(tmp_path, monkeypatch):
    from planlint.core import cache_seal

    home = tmp_path / "home"
    monkeypatch.setenv("PLANLINT_CACHE_KEY", str(home / "planlint" / "key"))
    monkeypatch.setattr(cache_seal, "_KEYS", {})
    key = cache_seal.machine_key()
    assert key is not None and len(key) == 32
    assert (home / "planlint" / "key").stat().st_mode & 0o777 == 0o600
    assert cache_seal.machine_key() == key
    # A key file inside the project is refused (it could have come with the checkout).
    assert cache_seal.machine_key(project_root=home) is None
    # A key others can read, or a link to one, is not used.
    for name, prepare in (("shared", lambda p: (p.write_bytes(b"k" * 32), p.chmod(0o644))), ("link", lambda p: p.symlink_to(home / "planlint" / "key"))):
        path = tmp_path / name
        prepare(path)
        monkeypatch.setenv("PLANLINT_CACHE_KEY", str(path))
        assert cache_seal.machine_key() is None, name
    # An entry sealed for one identity or one cache is not accepted for another.
    text = seal(key, "registry", "https://r/v1/a", {"status": 200})
    assert cache_seal.unseal(key, "registry", "https://r/v1/a", text) == {"status": 200}
    assert cache_seal.unseal(key, "registry", "https://r/v1/b", text) is None
    assert cache_seal.unseal(key, "split-data", "https://r/v1/a", text) is None
    assert cache_seal.unseal(None, "registry", "https://r/v1/a", text) is None


def test_without_a_usable_key_nothing_is_cached_and_findings_are_the_same(tmp_path):
    repo = tmp_path / "repo"
    write(repo / "plans" / "plan.yaml", REF.replace('release: "2026.11.03"', "release: latest"))
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    env = {"PLANLINT_CACHE_KEY": str(blocker / "key")}
    for _ in range(2):
        result = run_process("--format", "json", "plans/", cwd=repo, env=env)
        assert result.status == 1 and "PL102" in _codes(result), result
    assert not list(repo.rglob("*.json"))  # no segment was written: none could be trusted


# --------------------------------------------------------------------------- facts of other plans


@pytest.mark.parametrize("forgery", ["resealed with the attacker's key", "unsealed"])
def test_committed_plan_facts_do_not_hide_pl005_or_pl507_from_the_hook(tmp_path, monkeypatch, forgery):
    """The hook names the new plan; the facts of the repository's other plans (engine.plan_facts.PlanFacts)
    are read from .planlint_cache/plan-facts/. A committed facts file saying the existing plan has
    another name and commits nothing must not hide PL005 or PL507."""
    from planlint.core.cache_seal import seal_bytes
    from planlint.core.config import load_config
    from planlint.engine.cache_dir import file_state
    from planlint.engine.result_cache import ResultCache
    from planlint.rules import RULES, rule_names

    attacker_env, ci_env = _keys(tmp_path)
    repo = tmp_path / "repo"
    write(repo / ".planlint.yaml", "budget: {committed_limit: {USD: 400}}\n")
    write(repo / "plans" / "existing.yaml", REF)  # approved, 250 USD
    write(repo / "plans" / "new.yaml", REF)  # the same name, another 250 USD: PL005 and PL507
    _git(repo, "init", "-q", "-b", "main")
    honest = run_process("--format", "json", "--no-cache", "plans/new.yaml", cwd=repo, env=ci_env)
    assert sorted(_codes(honest)) == ["PL005", "PL507"], honest

    # The attacker knows the run key (same planlint, same path, same config) and, at best, the files' states.
    monkeypatch.chdir(repo)
    config = load_config(None, codes=RULES, names=rule_names())
    identity = ResultCache(repo / ".planlint_cache", config).key
    facts = {path: {"s": file_state(path), "name": f"another-{index}", "commit": None} for index, path in enumerate(["plans/existing.yaml", "plans/new.yaml"])}
    facts.update({str(repo / path): entry for path, entry in facts.items()})  # PL507 walks the absolute path
    body = json.dumps({"format": 1, "files": facts}).encode()
    forged = repo / ".planlint_cache" / "plan-facts" / f"{identity[:24]}.json"
    forged.parent.mkdir(parents=True)
    forged.write_bytes(seal_bytes(ATTACKER_KEY, "plan-facts", identity, body))
    # Under the attacker's key the forged facts are served: the forgery is a good one.
    assert _codes(run_process("--format", "json", "plans/new.yaml", cwd=repo, env=attacker_env)) == []
    if forgery == "unsealed":
        forged.write_bytes(body)
    result = run_process("--format", "json", "plans/new.yaml", cwd=repo, env=ci_env)
    assert result.status == 1 and sorted(_codes(result)) == ["PL005", "PL507"], result
    assert result.out == honest.out


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_entries_committed_as_links_to_a_pipe_or_dev_zero_do_not_hold_the_run(tmp_path):
    """The attack: cache entry names are predictable (a hash of the plan's split paths and their
    contents), so a pull request commits, where the per-object entries of its sharded splits will
    be looked for, links to a named pipe (a read that never ends) and to /dev/zero. The run must
    neither hang nor read them: it finishes, within the test's timeout, with the findings of a run
    without any cache. (The cache directory's own check looks two levels deep; these entries are
    three levels down.)"""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    for shard in range(3):
        rows = [{"customer_id": f"t{shard}-{n}", "prompt": f"train {shard} {n}"} for n in range(8)]
        if shard == 2:
            rows[5]["customer_id"] = "cust-leak"
        write(repo / "data" / f"train-{shard}.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    write(repo / "data" / "eval-0.jsonl", "".join(json.dumps({"customer_id": "cust-leak" if n == 1 else f"e-{n}", "prompt": f"eval {n}"}) + "\n" for n in range(6)))
    write(repo / "plans" / "p.yaml", plan_text("data/train-*.jsonl", "data/eval-*.jsonl"))
    env = {"PLANLINT_CACHE_KEY": str(tmp_path / "ci-home" / "key")}
    uncached = run_process("--format", "json", "--no-cache", "plans", cwd=repo, env=env)
    assert [finding["code"] for finding in json.loads(uncached.out)["findings"]] == ["PL207"]
    run_process("--format", "json", "plans", cwd=repo, env=env)
    entries = sorted((repo / ".planlint_cache" / "split-data").glob("*/*.json"))
    assert {entry.parent.name for entry in entries} == {"index-parts"}
    for whole in (repo / ".planlint_cache" / "split-data").glob("*.json"):
        whole.unlink()  # (a fresh checkout has none; a committed one is refused on its own)
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    for number, entry in enumerate(entries):
        entry.unlink()
        entry.symlink_to(pipe if number % 2 == 0 else Path("/dev/zero"))
    result = run_process("--format", "json", "plans", cwd=repo, env=env, timeout=60)
    assert result.status == uncached.status
    assert json.loads(result.out)["findings"] == json.loads(uncached.out)["findings"]


def test_a_large_file_committed_at_an_entry_name_is_verified_streaming_not_kept(tmp_path, monkeypatch):
    """Entry names are predictable: a pull request can commit a file as large as the read limit where
    an index part will be looked for. It is read through its MAC in chunks and dropped, never held
    whole (read_entry, which keeps what it reads, is not reached); a real entry of that size is read."""
    from planlint.core import cache_seal

    key = b"k" * 32
    junk = tmp_path / "junk.json"
    junk.write_bytes(b"0" * (3 << 20))
    real = tmp_path / "real.json"
    body = os.urandom(3 << 20)
    real.write_bytes(seal_bytes(key, "split-data-index-part", "real", body))
    kept = []
    original = cache_seal.read_entry
    monkeypatch.setattr(cache_seal, "read_entry", lambda path, limit=-1: kept.append(path) or original(path, limit))
    assert cache_seal.read_sealed_bytes(junk, key, "split-data-index-part", "junk", 64 << 20) is None
    assert kept == []
    assert cache_seal.read_sealed_bytes(real, key, "split-data-index-part", "real", 64 << 20) == body
    assert kept == [real]
    assert cache_seal.read_sealed_bytes(real, key, "split-data-index-part", "other", 64 << 20) is None  # the MAC covers the name
    assert cache_seal.read_sealed_bytes(real, key, "split-data-index-part", "real", 1 << 20) is None  # over the limit: not read
