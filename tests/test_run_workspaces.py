"""The run family on whole Osmosis workspaces: where a config lives, the workspace's directories,
the rollout's code (compiled, never run), its pyproject.toml, and the pinned commit in real git.

Each fixtures/run/workspaces/*.yaml is built by run_workspaces.build_workspace (a real git
repository unless it says otherwise) and linted; the exact (path, line, code) set must be the
one its markers give, and the notes it names must be there. test_sdk_agreement.py runs the
SDK's own preflight on the same workspaces.
"""

from __future__ import annotations

import pytest

from run_workspaces import WORKSPACES, build_workspace

pytestmark = pytest.mark.integration


def _report(result) -> str:
    return "\n".join(f"{f['path']}:{f['line']}:{f['column']} {f['code']} {f['severity']} {f['message']}" for f in result.json["findings"]) + "\nnotes: " + repr(result.json.get("notes"))


@pytest.mark.parametrize("fixture", WORKSPACES, ids=lambda p: p.stem)
def test_workspace_findings(fixture, tmp_path, planlint):
    workspace = build_workspace(fixture, tmp_path / "ws")
    result = planlint("--format", "json", "--no-cache", "plans/", cwd=workspace.root)
    assert result.status in (0, 1), result.err
    got = {(f["path"], f["line"], f["code"]) for f in result.json["findings"]}
    assert got == workspace.want(), _report(result)
    notes = " | ".join(result.json.get("notes") or [])
    for text in workspace.directives.get("note", []):
        assert text in notes, _report(result)
    if not workspace.directives.get("note"):
        assert "PL90" not in notes, _report(result)


def test_every_workspace_case_is_there():
    names = {path.stem for path in WORKSPACES}
    assert {"location-other-directory", "location-suffix", "location-eval-directory", "workspace-without-data",
            "entrypoint-directory", "entrypoint-syntax-error", "entrypoint-import-error", "commit-abbreviated",
            "commit-absent", "commit-without-git", "commit-in-shallow-clone", "pyproject-requirements"} <= names


# --------------------------------------------------------------------------- the checkout is hostile


def test_rollout_code_is_compiled_never_run(tmp_path, planlint):
    """An entrypoint, its package's __init__.py and a sitecustomize.py beside them, each of which would
    leave a mark if run; and a .git/config whose fsmonitor hook and pager would too. planlint checks
    the rollout (a syntax error is still found) and the pinned commit, and no mark appears."""
    workspace = build_workspace(WORKSPACES[[p.stem for p in WORKSPACES].index("commit-full")], tmp_path / "ws")
    marks = tmp_path / "marks"
    marks.mkdir()
    rollout = workspace.root / "rollouts" / "retail-refund"
    plant = f"open({str(marks / 'ran')!r} + __file__.replace('/', '_'), 'w').close()\n"
    (rollout / "main.py").write_text(plant + "def broken(:\n", encoding="utf-8")
    (rollout / "__init__.py").write_text(plant, encoding="utf-8")
    (rollout / "sitecustomize.py").write_text(plant, encoding="utf-8")
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marks / 'git-ran'}\n", encoding="utf-8")
    hook.chmod(0o755)
    with open(workspace.root / ".git" / "config", "a", encoding="utf-8") as config:
        config.write(f"[core]\n\tfsmonitor = {hook}\n\tpager = {hook}\n[alias]\n\tcat-file = !{hook}\n")
    result = planlint("--format", "json", "--no-cache", "plans/", cwd=workspace.root)
    assert sorted(path.name for path in marks.iterdir()) == []
    assert [(f["path"], f["code"]) for f in result.json["findings"]] == [("rollouts/retail-refund/main.py", "PL901")], _report(result)


def test_an_unconfirmed_commit_is_asked_again_not_served_from_the_cache(tmp_path, planlint, monkeypatch):
    """A shallow clone cannot tell; once the history is fetched the next run (cache on) can. A
    confirmed commit's result is cached (the run after it is served from the cache)."""
    from planlint.engine import parallel
    from run_workspaces import _git

    monkeypatch.setattr(parallel, "RACY_SECONDS", 0)  # the files were written just now: cache them all the same
    workspace = build_workspace(WORKSPACES[[p.stem for p in WORKSPACES].index("commit-in-shallow-clone")], tmp_path / "ws")
    first = planlint("--format", "json", "plans/", cwd=workspace.root)
    assert any("the clone is shallow" in note for note in first.json["notes"]), first.json
    _git(workspace.root, "fetch", "-q", "--unshallow")
    second = planlint("--format", "json", "plans/", cwd=workspace.root)
    assert not any("PL902" in note for note in second.json["notes"]) and second.json["findings"] == [], second.json
    stored = sorted(path for path in (workspace.root / ".planlint_cache").rglob("*") if path.is_file())
    assert stored, "the confirmed commit's result was not cached"
