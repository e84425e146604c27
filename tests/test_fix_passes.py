"""`--fix` repeats until nothing changes: a fix that enables another converges, within a bound.

The chain: a grader under a retired name (the test-only PL991, tests/chained_fixes.py,
renames it) with a floating version that PL302's own fix pins by looking the
name up in the catalog, which it can only do once the name is the new one. One
`--fix` writes both, byte for byte as `fix_passes/renamed-grader.expected.yaml`;
`--fix --diff` shows the same change; the editor's quick fixes reach the same
text one finding at a time. Fixes that never settle stop at MAX_FIX_PASSES, and
fixes that undo each other leave the file as it was.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from chained_fixes import grader_renamed, installed, steps_below_a_thousand, summary_flip
from conftest import FIXTURES, REFERENCE_PLAN, write

CASE = FIXTURES / "fix_passes" / "renamed-grader"
INPUT, EXPECTED = CASE.with_name(CASE.name + ".input.yaml"), CASE.with_name(CASE.name + ".expected.yaml")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(FIXTURES / "fix" / "catalog.yaml", tmp_path / "catalog.yaml")
    write(tmp_path / ".planlint.yaml", "catalog: catalog.yaml\n")
    (tmp_path / "plans").mkdir()
    shutil.copy(INPUT, tmp_path / "plans" / "p.yaml")
    return tmp_path


def test_one_fix_enables_another_and_one_run_applies_both(project, planlint):
    with installed(grader_renamed):
        before = planlint("--no-cache", "--format", "json", "plans/", cwd=project).json["findings"]
        assert {(f["code"], f["yaml_path"]) for f in before} >= {("PL991", "graders[0].name"), ("PL302", "graders[0].version"), ("PL502", "budget.max_spend")}
        result = planlint("--no-cache", "--fix", "--format", "json", "plans/", cwd=project)
        assert (project / "plans" / "p.yaml").read_bytes() == EXPECTED.read_bytes()
        assert result.status == 0 and result.json["findings"] == [], result
        lines = [line for line in result.err.splitlines() if ": fixed " in line]
        assert lines == [  # pass 1 (PL302 cannot pin yet: the catalog has no 'tau-retail-db-state-v1'), then pass 2
            "planlint: plans/p.yaml:39:11: fixed PL991: graders[0].name 'tau-retail-db-state-v1' -> 'tau-retail-db-state'",
            "planlint: plans/p.yaml:60:1: fixed PL503: by the PL502 fix (budget.max_spend '$250' -> 250, added budget.currency: USD)",
            "planlint: plans/p.yaml:61:14: fixed PL502: budget.max_spend '$250' -> 250, added budget.currency: USD",
            "planlint: plans/p.yaml:40:14: fixed PL302: graders[0].version '1.4.x' -> '1.4.2' (newest published in catalog.yaml)",
        ]
        assert "Fixed 4 findings in 1 file." in result.err  # PL991, PL502 and the PL503 it resolves, PL302
        again = planlint("--no-cache", "--fix", "plans/", cwd=project)
        assert "Nothing to fix." in again.err and (project / "plans" / "p.yaml").read_bytes() == EXPECTED.read_bytes()


def test_fix_diff_shows_every_pass_and_writes_nothing(project, planlint):
    with installed(grader_renamed):
        result = planlint("--no-cache", "--fix", "--diff", "plans/", cwd=project)
    assert result.status == 1 and "Would fix 4 findings in 1 file." in result.err
    assert (project / "plans" / "p.yaml").read_bytes() == INPUT.read_bytes()
    (project / "fix.patch").write_text(result.out, encoding="utf-8")
    subprocess.run(["git", "apply", "fix.patch"], cwd=project, check=True, capture_output=True)
    assert (project / "plans" / "p.yaml").read_bytes() == EXPECTED.read_bytes()


def test_without_the_chain_each_run_settles_in_one_pass(project, planlint):
    """Today's own fixes: the rename is not there, PL302 finds nothing to pin by the retired name, the budget is fixed."""
    result = planlint("--no-cache", "--fix", "--format", "json", "plans/", cwd=project)
    text = (project / "plans" / "p.yaml").read_text(encoding="utf-8")
    assert "name: tau-retail-db-state-v1" in text and "version: 1.4.x" in text and "  currency: USD\n" in text
    assert "Fixed 2 findings in 1 file." in result.err and "passes" not in result.err
    assert [f["code"] for f in result.json["findings"]] == ["PL302", "PL306"]  # PL306: the baseline was measured with 1.4.2


def test_at_the_bound_what_the_passes_made_is_written_and_the_rest_reported(project, planlint, monkeypatch):
    """MAX_FIX_PASSES = 1 stops the chain after the rename: kept (it was verified), PL302 still reported."""
    import planlint.modes.fixes as fixes

    monkeypatch.setattr(fixes, "MAX_FIX_PASSES", 1)
    with installed(grader_renamed):
        result = planlint("--no-cache", "--fix", "--format", "json", "plans/", cwd=project)
    text = (project / "plans" / "p.yaml").read_text(encoding="utf-8")
    assert "    name: tau-retail-db-state         #" in text and "version: 1.4.x" in text and "max_spend: 250 " in text  # comments keep their column
    assert [(f["code"], f["yaml_path"]) for f in result.json["findings"]] == [("PL302", "graders[0].version"), ("PL306", "baseline.grader_versions.db-state")]
    assert ("planlint: plans/p.yaml: fixes still apply after 1 passes, the most --fix makes: what those passes fixed is "
            "written and the rest is reported (please report this)") in result.err
    assert "Fixed 3 findings in 1 file." in result.err


def test_fixes_that_never_settle_stop_after_max_fix_passes(tmp_path, planlint):
    from planlint.modes.fixes import MAX_FIX_PASSES

    text = REFERENCE_PLAN.read_text(encoding="utf-8")
    plan = write(tmp_path / "plans" / "p.yaml", text)
    with installed(steps_below_a_thousand):
        result = planlint("--no-cache", "--fix", "--format", "json", "plans/", cwd=tmp_path)
    assert plan.read_text(encoding="utf-8") == text.replace("stopping: {max_steps: 400,", f"stopping: {{max_steps: {400 + MAX_FIX_PASSES},")
    assert f"fixes still apply after {MAX_FIX_PASSES} passes" in result.err
    assert f"Fixed {MAX_FIX_PASSES} findings in 1 file." in result.err
    assert [f["code"] for f in result.json["findings"]] == ["PL992"]  # what is left is reported


def test_fixes_that_undo_each_other_leave_the_file_as_it_was(tmp_path, planlint):
    text = REFERENCE_PLAN.read_text(encoding="utf-8").replace("summary: Refund only eligible orders inside the 30-day window", "summary: ping")
    plan = write(tmp_path / "plans" / "p.yaml", text)
    with installed(summary_flip):
        result = planlint("--no-cache", "--fix", "plans/", cwd=tmp_path)
    assert plan.read_text(encoding="utf-8") == text
    assert ("planlint: plans/p.yaml: not fixed: its fixes undo each other (pass 2 gives back the text of an earlier pass), "
            "so it was left as it was (please report this)") in result.err
    assert "Nothing to fix." in result.err


def test_the_editor_reaches_the_same_text_one_quick_fix_at_a_time(project):
    """A quick fix is the fix --fix's pass makes for that finding; the one it enables is offered on the next lint."""
    pytest.importorskip("lsprotocol", reason="lsprotocol comes with pygls, part of the test extra")
    from planlint.server import Lines, diagnostic, fix_actions, lint_document

    path = project / "plans" / "p.yaml"
    text = INPUT.read_text(encoding="utf-8")
    applied = []
    with installed(grader_renamed):
        for _ in range(5):
            linted = lint_document(path, text, data_checks=False, root=project)
            lines = Lines(text)
            offered = [
                (finding.code, action)
                for finding in linted.findings
                for action in fix_actions(linted, path.as_uri(), finding.code, finding.yaml_path, diagnostic(finding, lines))
            ]
            if not offered:
                break
            code, action = offered[0]
            applied.append(code)
            edits = action.edit.changes[path.as_uri()]
            for edit in sorted(edits, key=lambda e: lines.offset(e.range.start), reverse=True):
                text = text[: lines.offset(edit.range.start)] + edit.new_text + text[lines.offset(edit.range.end):]
        first = lint_document(path, INPUT.read_text(encoding="utf-8"), data_checks=False, root=project)
        first_offers = {f.code for f in first.findings if fix_actions(first, path.as_uri(), f.code, f.yaml_path, diagnostic(f, Lines(first.text)))}
    assert first_offers == {"PL991", "PL502"}  # PL302's fix needs the new name: offered once the rename is applied
    assert text == EXPECTED.read_text(encoding="utf-8")
    assert sorted(applied) == ["PL302", "PL502", "PL991"]
