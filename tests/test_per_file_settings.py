"""`per-file-ignores` (glob -> codes, with a reason) and severity by plan status (`severity: {CODE: {STATUS: level}}`)."""

from __future__ import annotations

import shutil

import pytest

from conftest import FIXTURES, write
from plan_overlay import REFERENCE

UNFROZEN = REFERENCE.replace("    frozen: true\n", "    frozen: false\n", 1)  # PL205


def plan(name: str, text: str = UNFROZEN, status: str = "approved") -> str:
    return text.replace("name: retail-refund-window", f"name: {name}", 1).replace("status: approved", f"status: {status}", 1)


def findings(result) -> list[tuple[str, str, str]]:
    return sorted((f["path"], f["code"], f["severity"]) for f in result.json["findings"])


@pytest.fixture
def repo(tmp_path):
    (tmp_path / ".git").mkdir()
    write(tmp_path / "plans" / "current.yaml", plan("current"))
    write(tmp_path / "plans" / "archive" / "old.yaml", plan("old"))
    write(tmp_path / "plans" / "archive" / "older.yaml", plan("older", status="draft"))
    return tmp_path


def test_per_file_ignores_turn_rules_off_for_matching_files_only(repo, planlint):
    write(repo / ".planlint.yaml", 'per-file-ignores:\n  "plans/archive/**": "PL205, eval-not-frozen -- archived plans are kept as they ran"\n')
    result = planlint("--format", "json", "--no-cache", "plans/", cwd=repo)
    assert findings(result) == [("plans/current.yaml", "PL205", "warning")], result


def test_per_file_ignores_in_pyproject(repo, planlint):
    write(repo / "pyproject.toml", "[tool.planlint.per-file-ignores]\n\"old*.yaml\" = \"PL205 -- archived\"\n")
    result = planlint("--format", "json", "--no-cache", "plans/", cwd=repo)
    assert findings(result) == [("plans/current.yaml", "PL205", "warning")], result  # a glob without a slash: at any depth


def test_a_suppression_of_an_ignored_rule_is_not_unused(repo, planlint):
    write(repo / ".planlint.yaml", 'per-file-ignores: {"plans/archive/**": "PL205 -- archived"}\n')
    text = plan("old").replace("    frozen: false\n", "    frozen: false  # planlint: disable=PL205 -- rotated weekly\n", 1)
    write(repo / "plans" / "archive" / "old.yaml", text)
    result = planlint("--format", "json", "--no-cache", "plans/archive/", cwd=repo)
    assert findings(result) == [], result  # no PL010: the rule did not run for this file


def test_repo_level_findings_follow_per_file_ignores(repo, planlint):
    write(repo / "plans" / "archive" / "copy.yaml", plan("current", text=REFERENCE))  # PL005 with plans/current.yaml
    before = planlint("--format", "json", "--no-cache", "plans/", cwd=repo)
    assert ("plans/archive/copy.yaml", "PL005", "error") in findings(before), before
    write(repo / ".planlint.yaml", 'per-file-ignores: {"plans/archive/**": "PL005, PL205 -- archived copies keep their names"}\n')
    result = planlint("--format", "json", "--no-cache", "plans/", cwd=repo)
    assert findings(result) == [("plans/current.yaml", "PL205", "warning")], result


def test_per_file_ignores_apply_to_run_configs(tmp_path, planlint):
    (tmp_path / ".git").mkdir()
    (tmp_path / "rollouts" / "retail-refund").mkdir(parents=True)
    write(tmp_path / "rollouts" / "retail-refund" / "main.py", "# the rollout\n")
    (tmp_path / "configs" / "training").mkdir(parents=True)
    shutil.copy(FIXTURES / "run" / "training" / "drift.toml", tmp_path / "configs" / "training" / "drift.toml")
    write(tmp_path / "plans" / "plan.yaml", REFERENCE + "run: {platform: osmosis, training_config: configs/training/drift.toml}\n")
    before = planlint("--format", "json", "--no-cache", "plans/", cwd=tmp_path)
    assert ("configs/training/drift.toml", "PL903", "error") in findings(before), before
    write(tmp_path / ".planlint.yaml", 'per-file-ignores: {"configs/training/drift.toml": "PL903 -- the drift is the experiment"}\n')
    after = planlint("--format", "json", "--no-cache", "plans/", cwd=tmp_path)
    assert [f for f in findings(after) if f[0] == "configs/training/drift.toml"] == [], after
    assert [f for f in findings(after) if f[0] != "configs/training/drift.toml"] == [f for f in findings(before) if f[0] != "configs/training/drift.toml"]


def test_severity_by_status(repo, planlint):
    write(repo / ".planlint.yaml", "severity:\n  PL205: {approved: error, running: error}\n")
    result = planlint("--format", "json", "--no-cache", "plans/", cwd=repo)
    assert findings(result) == [
        ("plans/archive/old.yaml", "PL205", "error"),
        ("plans/archive/older.yaml", "PL205", "warning"),  # a draft keeps the rule's own severity
        ("plans/current.yaml", "PL205", "error"),
    ], result
    assert result.status == 1


def test_severity_by_status_downgrades_a_draft_and_reaches_repo_level_rules(repo, planlint):
    write(repo / "plans" / "archive" / "older.yaml", plan("current", text=REFERENCE, status="draft"))  # PL005 with current.yaml
    write(repo / ".planlint.yaml", "severity:\n  duplicate-plan-name: {draft: warning}\n  PL205: error\n")
    result = planlint("--format", "json", "--no-cache", "plans/", cwd=repo)
    assert ("plans/archive/older.yaml", "PL005", "warning") in findings(result)  # the draft's copy of the name
    assert ("plans/current.yaml", "PL205", "error") in findings(result)
    write(repo / ".planlint.yaml", "severity:\n  duplicate-plan-name: {approved: warning}\n")
    result = planlint("--format", "json", "--no-cache", "plans/", cwd=repo)
    assert ("plans/archive/older.yaml", "PL005", "error") in findings(result)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ('per-file-ignores: {"plans/**": "PL205"}\n', "give the reason after"),
        ('per-file-ignores: {"plans/**": "PL205 --  "}\n', "give the reason after"),
        ('per-file-ignores: {"plans/**": "PL999 -- x"}\n', "'PL999' is not a rule code or name"),
        ('per-file-ignores: {"plans/**": " -- x"}\n', "name at least one rule"),
        ('per-file-ignores: {"plans/**": [PL205]}\n', "CODES -- reason"),
        ("per-file-ignores: [PL205]\n", "expected a mapping of glob"),
        ("severity: {PL205: {aproved: error}}\n", "'aproved' is not a plan status"),
        ("severity: {PL205: {approved: fatal}}\n", "expected error or warning"),
        ("severity: {PL205: {}}\n", "a mapping of plan status"),
        ("severity: {PL205: fatal}\n", "expected error, warning, or a mapping of plan status"),
    ],
)
def test_bad_settings_are_exit_2(repo, planlint, config, message):
    write(repo / ".planlint.yaml", config)
    result = planlint("plans/", cwd=repo)
    assert result.status == 2 and message in result.err, result


def test_a_cached_result_keeps_the_status_its_repo_level_severity_needs(repo, planlint, tmp_path):
    write(repo / "plans" / "archive" / "older.yaml", plan("current", text=REFERENCE, status="draft"))
    write(repo / ".planlint.yaml", "severity:\n  PL005: {draft: warning}\n")
    cache = str(tmp_path / "cache")
    cold = planlint("--format", "json", "--cache-dir", cache, "plans/", cwd=repo)
    warm = planlint("--format", "json", "--cache-dir", cache, "plans/", cwd=repo)
    assert ("plans/archive/older.yaml", "PL005", "warning") in findings(cold)
    assert findings(warm) == findings(cold)
