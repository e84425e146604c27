"""Local split paths with wildcards (`data/train-*.jsonl`): the sorted matches are one split,
all inside the checkout (issue 16, item 1). Through the CLI, in a temporary repository."""

from __future__ import annotations

import json
import os

import pytest

from conftest import write
from split_files import plan_text as plan


def rows(prefix: str, count: int, leak_at: int | None = None) -> str:
    out = []
    for n in range(count):
        customer = "cust-leak" if n == leak_at else f"{prefix}-{n}"
        out.append(json.dumps({"customer_id": customer, "prompt": f"{prefix} question {n}"}))
    return "\n".join(out) + "\n"


@pytest.fixture
def repo(tmp_path):
    (tmp_path / ".git").mkdir()
    for shard in range(3):
        write(tmp_path / "data" / f"train-{shard:05d}-of-00003.jsonl", rows(f"train{shard}", 8, leak_at=5 if shard == 2 else None))
    write(tmp_path / "data" / "eval-00000.jsonl", rows("eval", 6, leak_at=1))
    return tmp_path


def findings(result) -> list[dict]:
    return json.loads(result.out)["findings"]


def test_a_glob_reads_every_match_and_locates_the_leak(repo, planlint):
    write(repo / "plans" / "p.yaml", plan("data/train-*-of-00003.jsonl", "data/eval-*.jsonl"))
    result = planlint("--format", "json", "--no-cache", "plans", cwd=repo)
    found = findings(result)
    assert [f["code"] for f in found] == ["PL207"], found
    assert "'cust-leak' (train row 6 of train-00002-of-00003.jsonl, eval row 2 of eval-00000.jsonl)" in found[0]["message"]


def test_a_glob_that_matches_nothing_is_a_missing_split(repo, planlint):
    write(repo / "plans" / "p.yaml", plan("data/train-*.parquet", "data/eval-*.jsonl"))
    result = planlint("--format", "json", "--no-cache", "--require-data", "plans", cwd=repo)
    found = findings(result)
    assert [f["code"] for f in found] == ["PL006"]
    assert "data/train-*.parquet" in found[0]["message"] and "does not exist locally" in found[0]["message"]


def test_a_glob_cannot_escape_the_checkout_with_dot_dot(repo, planlint):
    outside = repo.parent / (repo.name + "-outside")
    write(outside / "train-1.jsonl", rows("secret", 3, leak_at=0))
    write(repo / "plans" / "p.yaml", plan(f"../{outside.name}/train-*.jsonl", "data/eval-*.jsonl"))
    result = planlint("--format", "json", "--no-cache", "--require-data", "plans", cwd=repo)
    found = findings(result)
    assert [f["code"] for f in found] == ["PL006"], found
    assert "outside the repository" in found[0]["message"]
    assert "secret" not in result.out + result.err and "cust-leak" not in result.out + result.err


def test_a_glob_cannot_escape_through_a_link(repo, planlint):
    outside = repo.parent / (repo.name + "-elsewhere")
    write(outside / "train-99.jsonl", rows("secret", 3, leak_at=0))
    os.symlink(outside / "train-99.jsonl", repo / "data" / "train-99999-of-00003.jsonl")
    write(repo / "plans" / "p.yaml", plan("data/train-*-of-00003.jsonl", "data/eval-*.jsonl"))
    result = planlint("--format", "json", "--no-cache", "plans", cwd=repo)
    assert findings(result) == []
    notes = json.loads(result.out)["notes"]
    assert any("outside the repository" in note for note in notes), notes
    assert "cust-leak" not in result.out + result.err  # nothing was read from the outside file


def test_a_double_star_glob_does_not_follow_a_link_loop(repo, planlint):
    os.symlink(repo / "data", repo / "data" / "loop")
    os.symlink(repo / "data", repo / "data" / "loop2")
    write(repo / "data" / "more" / "train-00100-of-00003.jsonl", rows("deep", 2))
    write(repo / "plans" / "p.yaml", plan("data/**/train-*-of-00003.jsonl", "data/eval-*.jsonl"))
    result = planlint("--format", "json", "--no-cache", "plans", cwd=repo)
    found = findings(result)
    assert [f["code"] for f in found] == ["PL207"]
    assert "train row 6 of train-00002-of-00003.jsonl" in found[0]["message"]


def test_a_new_shard_is_seen_on_the_next_cached_run(repo, planlint):
    write(repo / "plans" / "p.yaml", plan("data/train-*-of-00003.jsonl", "data/eval-*.jsonl"))
    write(repo / "data" / "eval-00000.jsonl", rows("eval", 6))
    assert findings(planlint("--format", "json", "plans", cwd=repo)) == []
    write(repo / "data" / "train-00003-of-00003.jsonl", rows("late", 2, leak_at=0))
    write(repo / "data" / "eval-00001.jsonl", rows("eval1", 2, leak_at=1))
    found = findings(planlint("--format", "json", "plans", cwd=repo))
    assert [f["code"] for f in found] == ["PL207"], found


def test_data_max_bytes_from_the_config_caps_a_split(repo, planlint):
    write(repo / ".planlint.yaml", 'data: {max_bytes: "200 B"}\n')
    write(repo / "plans" / "p.yaml", plan("data/train-*-of-00003.jsonl", "data/eval-*.jsonl"))
    result = planlint("--format", "json", "--no-cache", "plans", cwd=repo)
    assert findings(result) == []
    notes = json.loads(result.out)["notes"]
    assert any("more than 200 bytes (limit data.max_bytes)" in note for note in notes), notes
    result = planlint("--format", "json", "--no-cache", "--require-data", "plans", cwd=repo)
    found = findings(result)
    assert [f["code"] for f in found] == ["PL006"] and "data.max_bytes" in found[0]["message"]


@pytest.mark.parametrize("value", ["0", "-5", "lots", "true", "[1]"])
def test_data_max_bytes_must_be_a_positive_size(repo, planlint, value):
    write(repo / ".planlint.yaml", f"data: {{max_bytes: {value}}}\n")
    write(repo / "plans" / "p.yaml", plan("data/train-*-of-00003.jsonl", "data/eval-*.jsonl"))
    result = planlint("--format", "json", "--no-cache", "plans", cwd=repo)
    assert result.status == 2 and "data.max_bytes" in result.err


def test_a_changed_shard_relints_an_unchanged_plan_in_diff_mode(repo, planlint):
    import subprocess

    write(repo / "plans" / "p.yaml", plan("data/train-*-of-00003.jsonl", "data/eval-*.jsonl"))
    write(repo / "data" / "eval-00000.jsonl", rows("eval", 6))
    (repo / ".git").rmdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(git + ["-C", str(repo), "add", "-A"], check=True)
    subprocess.run(git + ["-C", str(repo), "commit", "-qm", "base"], check=True)
    write(repo / "data" / "eval-00000.jsonl", rows("eval", 6, leak_at=3))  # only a shard changes
    result = planlint("--format", "json", "--no-cache", "--diff-base", "main", "plans", cwd=repo)
    assert [f["code"] for f in findings(result)] == ["PL207", "PL701"], result.out  # the approved plan's eval shard changed: PL701 too


# --------------------------------------------------------------------------- --require-data: never a silent pass


def test_require_data_is_not_silent_when_the_group_rule_is_off(repo, planlint):
    """The PL006 of a required data check that could not run came only from PL207: with PL207
    ignored (or only PL208 selected) a missing split passed with exit 0 and no word."""
    write(repo / "plans" / "p.yaml", plan("data/train-*-of-00003.jsonl", "data/missing.jsonl"))
    for options in (["--ignore", "PL207"], ["--select", "PL208"], ["--select", "PL209,PL006"]):
        result = planlint("--format", "json", "--no-cache", "--require-data", *options, "plans", cwd=repo)
        found = findings(result)
        assert [(f["code"], f["line"]) for f in found] == [("PL006", found[0]["line"])], (options, found)
        assert "data checks are required (--require-data)" in found[0]["message"]
        assert result.status == 1


def test_require_data_fails_a_split_that_cannot_be_decoded_or_needs_an_extra(repo, planlint, monkeypatch):
    """A corrupt gzip shard, or Parquet without pyarrow: the data checks did not run, so with
    --require-data it is PL006 at that split's path, not a note and exit 0; without it, a note."""
    write(repo / "plans" / "p.yaml", plan("data/train-*-of-00003.jsonl", "data/eval.jsonl.gz"))
    (repo / "data" / "eval.jsonl.gz").write_bytes(b"\x1f\x8b\x08\x00 this is not gzip")
    result = planlint("--format", "json", "--no-cache", "plans", cwd=repo)
    assert findings(result) == [] and result.status == 0
    assert "could not be read" in " ".join(json.loads(result.out).get("notes", [])) or "could not be read" in result.err
    result = planlint("--format", "json", "--no-cache", "--require-data", "plans", cwd=repo)
    found = findings(result)
    assert [f["code"] for f in found] == ["PL006"] and "could not be read" in found[0]["message"], found
    assert result.status == 1

    from planlint.services import split_data

    monkeypatch.setattr(split_data.check, "_have_pyarrow", lambda: False)
    (repo / "data" / "eval.parquet").write_bytes(b"PAR1")
    write(repo / "plans" / "p.yaml", plan("data/train-*-of-00003.jsonl", "data/eval.parquet"))
    result = planlint("--format", "json", "--no-cache", "--require-data", "plans", cwd=repo)
    found = findings(result)
    assert [f["code"] for f in found] == ["PL006"] and "pip install 'planlint[parquet]'" in found[0]["message"], found
