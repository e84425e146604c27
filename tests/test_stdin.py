"""A plan on standard input: `planlint -`, and `--stdin-filename PATH` to lint it as if it were at PATH."""

from __future__ import annotations

import pytest

from conftest import run_process, write
from plan_overlay import REFERENCE

FLOATING = REFERENCE.replace('release: "2026.11.03"', "release: latest", 1)
TRAIN = '{"customer_id": "cus-1", "created_at": "2026-01-05", "prompt": "a"}\n'
EVAL_LEAKING = '{"customer_id": "cus-1", "created_at": "2026-09-05", "prompt": "b"}\n'


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A repository with a config, a committed plan and leaking split files; the runs start elsewhere."""
    root = tmp_path_factory.mktemp("stdin")
    repo = root / "repo"
    (repo / ".git").mkdir(parents=True)
    write(repo / ".planlint.yaml", 'exclude: ["plans/archive/**"]\nper-file-ignores:\n  "plans/legacy/*.yaml": "PL102 -- legacy plans pin by hand"\n')
    write(repo / "plans" / "existing.yaml", REFERENCE)
    write(repo / "data" / "retail" / "train.jsonl", TRAIN)
    write(repo / "data" / "retail" / "eval.jsonl", EVAL_LEAKING)
    (root / "elsewhere").mkdir()
    return repo


def lint(*args: str, text: str | bytes, cwd) -> object:
    return run_process("--format", "json", "--no-cache", *args, cwd=cwd, input=text.encode() if isinstance(text, str) else text)


def codes(result) -> list[tuple[str, str]]:
    return sorted((f["path"], f["code"]) for f in result.json["findings"])


def test_a_plan_on_standard_input(project):
    result = lint("-", text=FLOATING.replace("retail-refund-window", "piped"), cwd=project.parent / "elsewhere")
    assert result.status == 1, result
    assert ("-", "PL102") in codes(result) and result.json["files"] == 1


def test_stdin_filename_decides_config_paths_and_repository(project):
    where = str(project / "plans" / "new.yaml")
    result = lint("-", "--stdin-filename", where, text=FLOATING, cwd=project.parent / "elsewhere")
    found = codes(result)
    assert (where, "PL102") in found
    assert (where, "PL005") in found  # the repository's other plan has this name
    assert (where, "PL207") in found  # its split files, looked up as if the plan were in the repository
    assert result.status == 1


def test_the_file_itself_is_not_its_own_duplicate(project):
    result = lint("-", "--stdin-filename", "plans/existing.yaml", text=REFERENCE, cwd=project)
    assert ("plans/existing.yaml", "PL005") not in codes(result)
    assert ("plans/existing.yaml", "PL207") in codes(result)


def test_exclude_and_per_file_ignores_follow_the_path(project):
    excluded = lint("-", "--stdin-filename", "plans/archive/old.yaml", text=FLOATING, cwd=project)
    assert excluded.status == 0 and excluded.json["files"] == 0 and excluded.json["findings"] == []
    legacy = lint("-", "--stdin-filename", "plans/legacy/old.yaml", text=FLOATING.replace("retail-refund-window", "legacy"), cwd=project)
    assert "PL102" not in {code for _, code in codes(legacy)}


def test_unreadable_input_is_a_finding(project):
    result = lint("-", "--stdin-filename", "plans/x.yaml", text=b"\xff\xfe\x00garbage\x80", cwd=project)
    assert result.status == 1 and [f["code"] for f in result.json["findings"]] == ["PL006"]
    assert "Traceback" not in result.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("-", "plans/"), "give it as the only PATH"),
        (("--stdin-filename", "plans/x.yaml", "plans/"), "give - as the only PATH"),
        (("-", "--fix"), "cannot be combined with --fix"),
        (("-", "--diff-base", "main"), "cannot be combined with --diff-base"),
        (("-", "--stdin-filename", " "), "--stdin-filename"),
    ],
)
def test_usage_errors(project, args, message):
    result = run_process(*args, cwd=project, input=REFERENCE.encode())
    assert result.status == 2 and message in result.err, result
