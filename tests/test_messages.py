"""Messages that say what is true and suggest a fix that works (issue 12, item 10)."""

from __future__ import annotations

import subprocess

import pytest

from conftest import REFERENCE_PLAN, run_process, write

PLAN = REFERENCE_PLAN.read_text(encoding="utf-8")


def _messages(result, code):
    return [f["message"] for f in result.json["findings"] if f["code"] == code]


@pytest.mark.parametrize("value, said", [("when it looks good", "'when it looks good', not a mapping"), ("[400]", "a list"), ("400", "400, not a mapping")])
def test_pl603_does_not_call_a_string_empty(tmp_path, planlint, value, said):
    write(tmp_path / "p.yaml", PLAN.replace("  stopping: {max_steps: 400, patience_evals: 3}", f"  stopping: {value}"))
    [message] = _messages(planlint("--format", "json", "p.yaml", cwd=tmp_path), "PL603")
    assert "empty" not in message and said in message, message
    write(tmp_path / "p.yaml", PLAN.replace("  stopping: {max_steps: 400, patience_evals: 3}", "  stopping: {}"))
    [message] = _messages(planlint("--format", "json", "p.yaml", cwd=tmp_path), "PL603")
    assert "empty" in message


def test_pl306_never_suggests_a_floating_version(tmp_path, planlint):
    write(tmp_path / "p.yaml", PLAN.replace("    version: 3.0.1\n", "    version: '1.0.*'\n"))
    [message] = _messages(planlint("--format", "json", "p.yaml", cwd=tmp_path), "PL306")
    assert "re-measure the baseline with '1.0.*'" not in message and "pin" in message, message
    write(tmp_path / "p.yaml", PLAN.replace("    version: 3.0.1\n", "    version: 3.0.2\n"))
    [message] = _messages(planlint("--format", "json", "p.yaml", cwd=tmp_path), "PL306")
    assert "re-measure the baseline with '3.0.2'" in message


@pytest.mark.parametrize("rev", ["HEAD~5", "main~9", "HEAD^^^^^^", "nosuch~2"])
def test_a_relative_revision_is_never_suggested_for_git_fetch(tmp_path, rev):
    repo = tmp_path / "repo"
    write(repo / "plans" / "p.yaml", PLAN)
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid", "PATH": "/usr/bin:/bin:/usr/local/bin"}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "one"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)
    result = run_process("--diff-base", rev, cwd=repo)
    assert result.status == 2, result
    assert "git fetch origin" not in result.err and "Traceback" not in result.err, result.err
    assert rev in result.err


def test_online_without_requests_says_how_to_install_it(tmp_path, planlint, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "requests" else real(name, *a))
    write(tmp_path / ".planlint.yaml", "registry: {url: 'http://127.0.0.1:9'}\n")
    write(tmp_path / "p.yaml", PLAN)
    result = planlint("--online", "p.yaml", cwd=tmp_path)
    assert result.status == 2
    assert "pip install requests" in result.err and "planlint[http]" in result.err, result.err
