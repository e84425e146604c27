"""Config and plan files are read only from inside the checkout (issue 10 item 12).

A pull request can commit symbolic links. A `.planlint.yaml` linked to a file
elsewhere on the CI machine had its first key quoted in the config error; a
plan linked elsewhere got an excerpt of that file in the findings. Now a
config or plan that leads out of its repository (the file is a link, or a
directory above it is) is never opened: the config is exit 2 with a message
that quotes nothing of the target, the plan is a PL006 finding at line 1.
Split files and the catalog were already confined (tests/test_hostile_repository.py).

Every test runs the real CLI in a child process. Where the target is a FIFO,
opening it would block for good: the run finishing proves it was not opened.
"""

from __future__ import annotations

import json
import os

import pytest

from conftest import REFERENCE_PLAN, run_process, write

SECRET = "ghp_" + "Outs1de" * 5
FLOATING = REFERENCE_PLAN.read_text(encoding="utf-8").replace('release: "2026.11.03"', "release: latest")
# What a file elsewhere might hold: a first key that an error would quote, a secret on the line an excerpt shows.
OUTSIDE_PLAN = FLOATING.replace("release: latest", f"release: latest  # {SECRET}")
OUTSIDE_CONFIG = f"{SECRET}: 1\nselect: [PL]\n"
FORMATS = ["text", "json", "sarif", "github", "junit", "markdown"]


def _repo(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write(repo / "plans" / "good.yaml", REFERENCE_PLAN.read_text(encoding="utf-8"))
    return repo


def _assert_kept(*results) -> None:
    for result in results:
        assert SECRET not in result.out and SECRET not in result.err, result
        assert "Traceback" not in result.err, result


# --------------------------------------------------------------------------- config


@pytest.mark.parametrize("name", [".planlint.yaml", "pyproject.toml", "--config"])
def test_attack_a_config_linked_outside_is_not_read(name, tmp_path):
    repo = _repo(tmp_path)
    if name == "pyproject.toml":
        target = write(tmp_path / "elsewhere" / "pyproject.toml", f'[tool.planlint]\n"{SECRET}" = 1\n')
    else:
        target = write(tmp_path / "elsewhere" / "secrets.yaml", OUTSIDE_CONFIG)
    link = repo / ("ci.yaml" if name == "--config" else name)
    link.symlink_to(target)
    args = ["--config", "ci.yaml"] if name == "--config" else []
    result = run_process(*args, "plans", cwd=repo)
    assert result.status == 2, result
    assert result.err.startswith("planlint: error: ") and "is a symbolic link that leads out of the repository: not read" in result.err
    _assert_kept(result)
    # Without the link, the same file's first key is what an error would have quoted.
    link.unlink()
    if name != "pyproject.toml":
        quoted = run_process("--config", str(target), "plans", cwd=repo)
        assert quoted.status == 2 and SECRET in quoted.err  # named directly (no link) it is read: the attack needed the link


def test_a_config_linked_to_a_directory_outside(tmp_path):
    """A directory of the checkout that is a link: the config found through it is outside too."""
    repo = _repo(tmp_path)
    write(tmp_path / "elsewhere" / "sub" / ".planlint.yaml", OUTSIDE_CONFIG)
    write(tmp_path / "elsewhere" / "sub" / "plans" / "a.yaml", REFERENCE_PLAN.read_text(encoding="utf-8"))
    (tmp_path / "elsewhere" / ".git").mkdir()  # another repository: a link to it does not make it this one
    (repo / "team").symlink_to(tmp_path / "elsewhere" / "sub")
    result = run_process("team/plans", cwd=repo)
    _assert_kept(result)


def test_a_config_linked_inside_the_repository_is_read(tmp_path):
    repo = _repo(tmp_path)
    write(repo / "ci" / "planlint.yaml", "ignore: [PL102]\n")
    (repo / ".planlint.yaml").symlink_to(repo / "ci" / "planlint.yaml")
    write(repo / "plans" / "bad.yaml", FLOATING.replace("name: retail-refund-window", "name: other"))
    result = run_process("plans", cwd=repo)
    assert result.status == 0, result  # the linked config's ignore applies


# --------------------------------------------------------------------------- plans


@pytest.mark.parametrize("how", ["discovered", "named", "dir-link", "fifo"])
def test_attack_a_plan_linked_outside_gets_no_excerpt_and_is_not_read(how, tmp_path):
    repo = _repo(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    if how == "fifo":
        elsewhere.mkdir()
        os.mkfifo(elsewhere / "plan.yaml")  # opening it would block: the run would never end
    else:
        write(elsewhere / "plan.yaml", OUTSIDE_PLAN)
    if how == "dir-link":
        (repo / "plans" / "team").symlink_to(elsewhere)
        shown = "plans/team/plan.yaml"
    else:
        (repo / "plans" / "linked.yaml").symlink_to(elsewhere / "plan.yaml")
        shown = "plans/linked.yaml"
    # os.walk does not enter a linked directory, so a plan under one is reached only by naming it.
    target = [shown] if how in ("named", "dir-link") else ["plans"]
    outputs = {}
    for fmt in FORMATS:
        result = run_process("--format", fmt, *target, cwd=repo, timeout=60)
        assert result.status == 1, (fmt, result)
        _assert_kept(result)
        outputs[fmt] = result
    findings = outputs["json"].json["findings"]
    assert [(f["path"], f["code"], f["line"]) for f in findings] == [(shown, "PL006", 1)], findings
    assert "is a symbolic link that leads out of the repository: not read" in findings[0]["message"]
    text = outputs["text"].out
    assert f"{shown}:1:1: PL006" in text and "release: latest" not in text  # no excerpt of the other file


def test_the_cache_does_not_read_or_keep_a_plan_linked_outside(tmp_path):
    repo = _repo(tmp_path)
    write(tmp_path / "elsewhere" / "plan.yaml", OUTSIDE_PLAN)
    (repo / "plans" / "linked.yaml").symlink_to(tmp_path / "elsewhere" / "plan.yaml")
    for _ in range(2):  # the second run goes through the result cache
        result = run_process("--format", "json", "plans", cwd=repo)
        assert [f["code"] for f in result.json["findings"]] == ["PL006"], result
        _assert_kept(result)
    for path in repo.rglob("*"):  # nothing of it was written anywhere in the repository (the cache included)
        if path.is_file() and not path.is_symlink():
            assert SECRET.encode() not in path.read_bytes(), path


def test_a_plan_linked_inside_the_repository_is_linted(tmp_path):
    repo = _repo(tmp_path)
    write(repo / "shared" / "plan.yaml", FLOATING.replace("name: retail-refund-window", "name: shared-plan"))
    (repo / "plans" / "linked.yaml").symlink_to(repo / "shared" / "plan.yaml")
    result = run_process("--format", "json", "plans", cwd=repo)
    assert json.loads(result.out)["findings"][0]["code"] == "PL102" and result.status == 1, result


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_inside_the_checkout_is_refused_without_waiting(tmp_path):
    """A named pipe in plans/ (git cannot commit one, but a working tree can hold one) is not
    opened for reading: opening it would wait for a writer and the run would never end."""
    repo = _repo(tmp_path)
    os.mkfifo(repo / "plans" / "pipe.yaml")
    result = run_process("--format", "json", "plans", cwd=repo, timeout=60)
    assert result.status == 1, result
    findings = result.json["findings"]
    assert [(f["path"], f["code"], f["line"]) for f in findings] == [("plans/pipe.yaml", "PL006", 1)], findings
    assert "is a named pipe or a socket, not a file: not read" in findings[0]["message"]
