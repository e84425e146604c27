"""What a pull request puts in the repository besides plan text cannot reach outside the checkout.

Split paths: the data checks (PL207-PL209) quote values from the split files. A pull
request that points `splits.*.path` at an absolute path, at `../..`, or at a
symlink that leads out of the repository would otherwise turn findings into
a way to read files on the CI machine. Such paths are refused: a note (or,
with --require-data, a PL006), never a read.

The cache directory: `.planlint_cache` (or `cache_dir:` in the config) is in
the project, so a pull request can commit it as a symbolic link, or put
links inside it, to make planlint write elsewhere. Such a directory is not
used (a note; the run lints uncached) and nothing is written outside.
"""

from __future__ import annotations

import os

import pytest

from conftest import REFERENCE_PLAN, run_process, write

SECRET = "ghp_" + "0utside" * 5
ROW = '{"customer_id": "%s", "created_at": "%s", "prompt": "p"}\n'


def _project(tmp_path, train_path: str):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write(repo / "data" / "eval.jsonl", ROW % (SECRET, "2026-09-01"))
    plan = REFERENCE_PLAN.read_text(encoding="utf-8")
    plan = plan.replace("path: data/retail/train.jsonl", f"path: {train_path}").replace("path: data/retail/eval.jsonl", "path: data/eval.jsonl")
    write(repo / "plans" / "a.yaml", plan)
    return repo


@pytest.fixture
def outside(tmp_path):
    return write(tmp_path / "elsewhere" / "train.jsonl", ROW % (SECRET, "2026-01-01"))


@pytest.mark.parametrize("how", ["absolute", "dotdot", "symlink", "symlinked-dir"])
def test_a_split_file_outside_the_checkout_is_never_read(how, tmp_path, outside):
    if how == "absolute":
        repo = _project(tmp_path, str(outside))
    elif how == "dotdot":
        repo = _project(tmp_path, "../elsewhere/train.jsonl")
    elif how == "symlink":
        repo = _project(tmp_path, "data/train.jsonl")
        os.symlink(outside, repo / "data" / "train.jsonl")
    else:
        repo = _project(tmp_path, "linked/train.jsonl")
        os.symlink(outside.parent, repo / "linked")
    for args in ((), ("--require-data",)):
        result = run_process("--format", "json", *args, "plans", cwd=repo)
        assert SECRET not in result.out + result.err, result
        assert "Traceback" not in result.err
        codes = [f["code"] for f in result.json["findings"]]
        if args:
            assert result.status == 1 and codes == ["PL006"], result
            assert "is outside the repository (or a link out of it)" in result.json["findings"][0]["message"]
        else:
            assert result.status == 0 and codes == [], result
            result = run_process("plans", cwd=repo)  # notes are shown with the text format
            assert "is outside the repository (or a link out of it): planlint reads split files only from the checkout; data checks skipped" in result.err


def test_a_split_file_inside_the_checkout_is_still_read(tmp_path):
    repo = _project(tmp_path, "data/train.jsonl")
    write(repo / "data" / "real-train.jsonl", ROW % (SECRET, "2026-01-01"))
    os.symlink("real-train.jsonl", repo / "data" / "train.jsonl")  # a link that stays inside is fine
    result = run_process("--format", "json", "plans", cwd=repo)
    group = [f for f in result.json["findings"] if f["code"] == "PL207"]
    assert len(group) == 1 and SECRET in group[0]["message"], result  # read, and the shared value quoted


def _cached_project(tmp_path):
    repo = tmp_path / "repo"
    write(repo / "plans" / "a.yaml", REFERENCE_PLAN.read_text(encoding="utf-8"))
    victim = tmp_path / "victim"
    victim.mkdir()
    return repo, victim


@pytest.mark.parametrize("how", ["dir-link", "results-link", "registry-link", "marker-link", "config-elsewhere", "config-dotdot"])
def test_a_planted_cache_directory_makes_planlint_write_nothing_outside(how, tmp_path):
    repo, victim = _cached_project(tmp_path)
    cache = repo / ".planlint_cache"
    if how == "dir-link":
        os.symlink(victim, cache)
    elif how in ("results-link", "registry-link"):
        cache.mkdir()
        os.symlink(victim, cache / how.split("-")[0])
    elif how == "marker-link":
        cache.mkdir()
        os.symlink(victim / "planted", cache / ".gitignore")
    elif how == "config-elsewhere":
        write(repo / ".planlint.yaml", f"cache_dir: {victim}\n")
    else:
        write(repo / ".planlint.yaml", "cache_dir: ../victim\n")
    for _ in range(2):
        result = run_process("plans", cwd=repo)
        assert result.status == 0 and "Traceback" not in result.err, result
        assert "this run caches nothing" in result.err, result.err
    assert sorted(p.name for p in victim.iterdir()) == []  # nothing written there


def test_the_default_cache_directory_is_still_used(tmp_path):
    repo, _ = _cached_project(tmp_path)
    result = run_process("plans", cwd=repo)
    assert result.status == 0 and "caches nothing" not in result.err
    assert (repo / ".planlint_cache" / "results").is_dir()
    write(repo / ".planlint.yaml", "cache_dir: build/cache\n")  # elsewhere inside the project: fine
    assert "caches nothing" not in run_process("plans", cwd=repo).err
    assert (repo / "build" / "cache" / "results").is_dir()


@pytest.mark.parametrize("how", ["absolute", "dotdot", "symlink"])
def test_a_catalog_outside_the_repository_is_refused_unread(how, tmp_path):
    repo, victim = _cached_project(tmp_path)
    secret = write(victim / "secrets.yaml", f"{SECRET}: {{releases: [x]}}\n")
    if how == "absolute":
        write(repo / ".planlint.yaml", f"catalog: {secret}\n")
    elif how == "dotdot":
        write(repo / ".planlint.yaml", "catalog: ../victim/secrets.yaml\n")
    else:
        os.symlink(secret, repo / "catalog.yaml")
        write(repo / ".planlint.yaml", "catalog: catalog.yaml\n")
    result = run_process("plans", cwd=repo)
    assert result.status == 2 and "catalog: must be a file inside the repository" in result.err, result
    assert SECRET not in result.out + result.err


def test_a_config_error_is_one_line_whatever_the_config_holds(tmp_path):
    repo, _ = _cached_project(tmp_path)
    write(repo / ".planlint.yaml", 'max_spend_limit: {"X\\n::error file=x::forged\\u202e": 5}\n')
    result = run_process("plans", cwd=repo)
    assert result.status == 2 and result.err.count("\n") == 1 and result.err.startswith("planlint: error: "), result
    assert "\u202e" not in result.err


def _gzip_bomb(repo):
    """256 KiB of gzip that holds 256 MiB of empty lines."""
    import gzip

    with gzip.open(repo / "data" / "train.jsonl.gz", "wb", compresslevel=9) as fh:
        for _ in range(256):
            fh.write(b"\n" * (1 << 20))
    assert (repo / "data" / "train.jsonl.gz").stat().st_size < 512 * 1024
    return repo / "data" / "train.jsonl.gz"


@pytest.mark.parametrize("require", [False, True])
def test_a_gzip_bomb_split_file_stops_at_the_data_time_budget(require, tmp_path):
    """256 KiB of gzip that holds 256 MiB of empty lines: data.time_budget ends the data checks.

    End to end: what the user sees. The per-file budget is set out of the way, so
    that a busy machine cannot add its own PL006; the budget itself is proved
    without real time below. run_process's timeout catches a hang.
    """
    repo = _project(tmp_path, "data/train.jsonl.gz")
    _gzip_bomb(repo)
    write(repo / ".planlint.yaml", "data: {time_budget: 0.5}\nlimits: {time_budget: 3600}\n")
    result = run_process("--no-cache", *(["--require-data"] if require else []), "plans", cwd=repo)
    stopped = "the data checks stopped after 0.5s (limit data.time_budget)"
    if require:
        assert result.status == 1 and "PL006" in result.out and stopped in result.out, result
    else:
        assert result.status == 0 and stopped in result.err and "data-aware checks skipped" in result.err, result


def test_the_data_time_budget_bounds_the_work_on_an_injected_clock(tmp_path):
    """A clock that advances 0.05 s each time it is read: a 0.5 s budget allows about ten
    reads, each after at most one chunk of the file, and then the checks stop with the
    note, however fast or busy the machine is."""
    from planlint.rules.leakage_findings import findings
    from planlint.services import split_data

    def check_split_data(*args, **kwargs):
        return findings(split_data.check_split_data(*args, **kwargs))

    repo = _project(tmp_path, "data/train.jsonl.gz")
    train = _gzip_bomb(repo)
    reads = [0]

    def clock() -> float:
        reads[0] += 1
        return reads[0] * 0.05

    issues, notes = check_split_data(
        train, repo / "data" / "eval.jsonl", group_key="id", time_key=None, cutoff=None, input_fields=None,
        cache_dir=None, time_budget=0.5, clock=clock,
    )
    assert issues == [] and [n.incomplete for n in notes] == [True], notes
    assert "the data checks stopped after 0.5s (limit data.time_budget)" in notes[0].message
    assert reads[0] <= 0.5 / 0.05 + 2, reads[0]  # the start, ten in-budget reads, the one past it
    # nothing leaks into the next check: the budget was that check's own (an object, not a module's state)
    seen = reads[0]
    small = repo / "data" / "small.jsonl"
    small.write_text('{"id": "x", "prompt": "p"}\n')
    _, notes = check_split_data(small, repo / "data" / "eval.jsonl", group_key="id", time_key=None, cutoff=None,
                                input_fields=None, cache_dir=None)
    assert reads[0] == seen and not any(n.incomplete for n in notes), notes


@pytest.mark.parametrize("bad", ["0", "-1", ".inf", ".nan", "true", "soon"])
def test_data_time_budget_must_be_a_positive_number(bad, tmp_path):
    repo = _project(tmp_path, "data/train.jsonl")
    write(repo / ".planlint.yaml", f"data: {{time_budget: {bad}}}\n")
    result = run_process("plans", cwd=repo)
    assert result.status == 2 and "data.time_budget: expected a positive number of seconds" in result.err, result
