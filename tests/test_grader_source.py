"""PL311: a grader's recorded source and sha256 against the real file, confined to the repository.

Real files in a real repository layout: the hash of what is on disk, a file
edited after the hash was recorded, and what a hostile checkout can commit
instead of a grader (a link out of the repository, a named pipe, a
directory), none of which is opened. The result cache must see an edit of
the grader's code alone.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from conftest import REFERENCE_PLAN, run_process, write

CODE = "def score(state, expected):\n    return 1.0 if state == expected else 0.0\n"
DIGEST = hashlib.sha256(CODE.encode()).hexdigest()


def plan_with(source: str, sha256: str | None = DIGEST) -> str:
    """The reference plan, its first grader (db-state, a code grader) recording `source` and `sha256`."""
    recorded = f"    source: {source}\n" + (f"    sha256: {sha256}\n" if sha256 is not None else "")
    return REFERENCE_PLAN.read_text(encoding="utf-8").replace("    version: 1.4.2\n", "    version: 1.4.2\n" + recorded, 1)


def repository(tmp_path: Path, source: str = "graders/db_state.py", sha256: str | None = DIGEST, code: str | None = CODE) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write(repo / "plans" / "plan.yaml", plan_with(source, sha256))
    if code is not None:
        write(repo / "graders" / "db_state.py", code)
    return repo


def findings(planlint, repo: Path, *args: str) -> list[tuple[str, str, str]]:
    result = planlint("--format", "json", *args, "plans/plan.yaml", cwd=repo)
    assert result.status in (0, 1), result
    return [(f["code"], f["yaml_path"], f["message"]) for f in result.json["findings"]]


def test_the_recorded_hash_of_the_file_on_disk_is_clean(tmp_path, planlint):
    assert findings(planlint, repository(tmp_path), "--no-cache") == []


@pytest.mark.parametrize("written", [DIGEST.upper(), "sha256:" + DIGEST])
def test_the_hash_may_be_upper_case_or_prefixed(tmp_path, planlint, written):
    assert findings(planlint, repository(tmp_path, sha256=f'"{written}"'), "--no-cache") == []


def test_an_edited_grader_no_longer_matches(tmp_path, planlint):
    repo = repository(tmp_path)
    edited = CODE.replace("state == expected", "state.items() >= expected.items()")
    write(repo / "graders" / "db_state.py", edited)
    (found,) = findings(planlint, repo, "--no-cache")
    code, route, message = found
    assert (code, route) == ("PL311", "graders[0].sha256")
    assert hashlib.sha256(edited.encode()).hexdigest() in message and "graders/db_state.py" in message


def test_the_position_is_the_recorded_hash(tmp_path, planlint):
    repo = repository(tmp_path)
    write(repo / "graders" / "db_state.py", CODE + "# a comment is a change too\n")
    result = planlint("--format", "json", "--no-cache", "plans/plan.yaml", cwd=repo)
    (finding,) = result.json["findings"]
    lines = (repo / "plans" / "plan.yaml").read_text(encoding="utf-8").splitlines()
    line = next(i for i, text in enumerate(lines, start=1) if text.startswith("    sha256: "))
    assert (finding["line"], finding["column"], finding["end_column"]) == (line, 13, 13 + 64)


def test_a_source_without_a_hash_is_only_checked_to_exist(tmp_path, planlint):
    assert findings(planlint, repository(tmp_path, sha256=None), "--no-cache") == []
    missing = repository(tmp_path / "other", source="graders/gone.py", sha256=None)
    assert [(c, r) for c, r, _ in findings(planlint, missing, "--no-cache")] == [("PL311", "graders[0].source")]


def test_the_cache_sees_an_edit_of_the_grader_alone(tmp_path, planlint):
    """The plan's text does not change: only the grader's file does. A cached clean result must not stand."""
    repo = repository(tmp_path)
    assert findings(planlint, repo) == []
    assert findings(planlint, repo) == []  # from the cache
    grader = repo / "graders" / "db_state.py"
    grader.write_text(CODE.replace("1.0", "0.5"), encoding="utf-8")
    past = os.stat(grader).st_mtime - 10  # older than the racy window, as a checkout's file would be
    os.utime(grader, (past, past))
    assert [c for c, _, _ in findings(planlint, repo)] == ["PL311"]


def test_a_link_out_of_the_repository_is_never_opened(tmp_path, planlint):
    """The attack: a pull request commits `graders/db_state.py` as a link to a file of the machine, hoping
    planlint hashes it (and says its hash, or waits on it). It is refused by path, and nothing is said of it."""
    secret = write(tmp_path / "outside" / "secret.txt", "the runner's secret\n")
    repo = repository(tmp_path, code=None)
    (repo / "graders").mkdir()
    os.symlink(secret, repo / "graders" / "db_state.py")
    ((code, route, message),) = findings(planlint, repo, "--no-cache")
    assert (code, route) == ("PL311", "graders[0].source")
    assert "outside the repository" in message and "did not open it" in message
    assert hashlib.sha256(secret.read_bytes()).hexdigest() not in message and "secret" not in message


def test_a_link_inside_the_repository_is_followed(tmp_path, planlint):
    repo = repository(tmp_path, source="graders/current.py")
    os.symlink("db_state.py", repo / "graders" / "current.py")
    assert findings(planlint, repo, "--no-cache") == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_named_pipe_is_refused_without_waiting(tmp_path):
    """A pipe where the grader should be would block a reader forever: the lint must end, and say so."""
    repo = repository(tmp_path, code=None)
    (repo / "graders").mkdir()
    os.mkfifo(repo / "graders" / "db_state.py")
    result = run_process("--format", "json", "--no-cache", "plans/plan.yaml", cwd=repo, timeout=60)
    (finding,) = [f for f in result.json["findings"] if f["code"] == "PL311"]
    assert "not a regular file" in finding["message"]


def test_a_pipe_swapped_in_after_the_check_is_not_waited_on(tmp_path):
    """file_digest opens without blocking and checks the descriptor again."""
    from planlint.rules.grader_source import file_digest

    if not hasattr(os, "mkfifo"):
        pytest.skip("named pipes")
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    assert file_digest(pipe) == (None, "is not a regular file")


@pytest.mark.parametrize("source, why", [
    ("graders", "is not a regular file"),
    ("/etc/hostname", "is an absolute path"),
    ("../../../etc/hostname", "is outside the repository"),
    ("graders/../../outside.py", "is outside the repository"),
    ('""', "is empty"),
])
def test_sources_that_cannot_be_used(tmp_path, planlint, source, why):
    repo = repository(tmp_path, source=source)
    ((code, route, message),) = findings(planlint, repo, "--no-cache")
    assert code == "PL311" and route == "graders[0].source" and why in message


def test_a_file_over_the_cap_is_not_hashed(tmp_path, monkeypatch):
    from planlint.rules import grader_source

    monkeypatch.setattr(grader_source, "MAX_SOURCE_BYTES", 16)
    path = write(tmp_path / "big.py", CODE)
    assert grader_source.resolve_source("big.py", tmp_path) == (None, "is larger than 0 MiB: not hashed")
    assert grader_source.file_digest(path)[0] is None


def test_no_hash_without_a_source(tmp_path, planlint):
    repo = repository(tmp_path)
    text = (repo / "plans" / "plan.yaml").read_text(encoding="utf-8").replace("    source: graders/db_state.py\n", "")
    write(repo / "plans" / "plan.yaml", text)
    ((code, route, message),) = findings(planlint, repo, "--no-cache")
    assert (code, route) == ("PL311", "graders[0].sha256") and "no source" in message


def test_a_malformed_hash_is_the_schemas(tmp_path, planlint):
    repo = repository(tmp_path, sha256="abc123")
    assert [(c, r) for c, r, _ in findings(planlint, repo, "--no-cache")] == [("PL003", "graders[0].sha256")]
