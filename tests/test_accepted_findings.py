"""Accepted findings: --write-baseline FILE, then --baseline FILE reports only what is new."""

from __future__ import annotations

import json

import pytest

from conftest import REFERENCE_PLAN, write

REF = REFERENCE_PLAN.read_text(encoding="utf-8")
FLOATING = ('release: "2026.11.03"', "release: latest")  # PL102 at dataset.release
UNFROZEN = ("    frozen: true", "    frozen: false")  # PL205 (warning) at splits.eval.frozen


def plan(name: str, *changes: tuple[str, str]) -> str:
    text = REF.replace("name: retail-refund-window", f"name: {name}")
    for old, new in changes:
        assert old in text, old
        text = text.replace(old, new)
    return text


@pytest.fixture
def project(tmp_path):
    write(tmp_path / "plans" / "a.yaml", plan("a", FLOATING, UNFROZEN))
    write(tmp_path / "plans" / "b.yaml", plan("b", FLOATING))
    write(tmp_path / "plans" / "clean.yaml", plan("clean"))
    return tmp_path


def test_write_baseline_records_findings_by_key_with_counts(project, planlint):
    result = planlint("--write-baseline", ".planlint-baseline.json", cwd=project)
    assert result.status == 0 and result.out == ""
    assert "wrote .planlint-baseline.json: 3 findings accepted (3 entries)" in result.err
    data = json.loads((project / ".planlint-baseline.json").read_text(encoding="utf-8"))
    assert list(data) == ["version", "generated_by", "findings"] and data["version"] == 1
    assert data["findings"] == [
        {"path": "plans/a.yaml", "code": "PL102", "name": "dataset-release-floating", "yaml_path": "dataset.release", "count": 1},
        {"path": "plans/a.yaml", "code": "PL205", "name": "eval-not-frozen", "yaml_path": "splits.eval.frozen", "count": 1},
        {"path": "plans/b.yaml", "code": "PL102", "name": "dataset-release-floating", "yaml_path": "dataset.release", "count": 1},
    ]


def test_baseline_hides_accepted_findings_and_reports_new_ones(project, planlint):
    planlint("--write-baseline", "baseline.json", cwd=project)
    clean = planlint("--baseline", "baseline.json", "--format", "json", cwd=project)
    assert clean.status == 0 and clean.json["findings"] == [] and clean.err == ""
    assert clean.json["files"] == 3 and list(clean.json) == ["version", "files", "findings", "summary", "notes"]

    # Lines moved (a comment block on top): still accepted, because keys have no line numbers.
    a = project / "plans" / "a.yaml"
    a.write_text("# moved down\n# by three\n# lines\n" + a.read_text(encoding="utf-8"), encoding="utf-8")
    assert planlint("--baseline", "baseline.json", cwd=project).status == 0

    # A new problem is reported, and only it.
    write(project / "plans" / "b.yaml", plan("b", FLOATING, ("max_spend: 250", 'max_spend: "$250"')))
    result = planlint("--baseline", "baseline.json", "--format", "json", cwd=project)
    assert result.status == 1
    assert [(f["path"], f["code"]) for f in result.json["findings"]] == [("plans/b.yaml", "PL502")]
    assert result.json["summary"] == {"errors": 1, "warnings": 0}


def test_counts_accept_exactly_that_many_identical_findings(tmp_path, planlint):
    # Each suppression without a reason is a PL009 at yaml_path "": same key, one finding each.
    lines = REF.replace("name: retail-refund-window", "name: counted").splitlines()
    lines.insert(lines.index("  good_example: Looks up the order, checks the window, refunds, confirms."), "  # planlint: disable=PL305")
    lines.insert(lines.index("  failure_example: Refunds a 45-day-old order because the user insists."), "  # planlint: disable=PL305")
    write(tmp_path / "plans" / "p.yaml", "\n".join(lines) + "\n")
    first = planlint("--format", "json", cwd=tmp_path).json["findings"]
    assert sorted(f["code"] for f in first) == ["PL009", "PL009", "PL010", "PL010"]

    planlint("--write-baseline", "b.json", cwd=tmp_path)
    entries = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))["findings"]
    assert [(e["code"], e["yaml_path"], e["count"]) for e in entries] == [("PL009", "", 2), ("PL010", "", 2)]
    assert planlint("--baseline", "b.json", cwd=tmp_path).status == 0

    # Accept only one of the two PL009s: the other is reported.
    entries[0]["count"] = 1
    (tmp_path / "b.json").write_text(json.dumps({"version": 1, "findings": entries}), encoding="utf-8")
    result = planlint("--baseline", "b.json", "--format", "json", cwd=tmp_path)
    assert result.status == 1 and [f["code"] for f in result.json["findings"]] == ["PL009"]


def test_stale_entries_are_reported_on_stderr_for_every_format(project, planlint):
    planlint("--write-baseline", "baseline.json", cwd=project)
    write(project / "plans" / "a.yaml", plan("a", FLOATING))  # PL205 fixed
    (project / "plans" / "b.yaml").unlink()  # its PL102 entry can no longer match
    for fmt in ("text", "json"):
        result = planlint("--baseline", "baseline.json", "--format", fmt, cwd=project)
        assert result.status == 0, result
        assert [line for line in result.err.splitlines() if not line.startswith("planlint: note:")] == [
            "planlint: baseline baseline.json: 2 accepted findings no longer occur; remove them from the file (or rerun --write-baseline):",
            "  plans/a.yaml: PL205 at splits.eval.frozen",
            "  plans/b.yaml: PL102 at dataset.release",
        ]
    assert list(json.loads(result.out)) == ["version", "files", "findings", "summary", "notes"]


def test_entries_for_files_not_checked_are_not_stale(project, planlint):
    planlint("--write-baseline", "baseline.json", cwd=project)
    result = planlint("--baseline", "baseline.json", "plans/a.yaml", cwd=project)
    assert result.status == 0 and result.err_without_notes == ""


def test_paths_are_relative_to_the_baseline_file(project, planlint):
    planlint("--write-baseline", "baseline.json", cwd=project)
    result = planlint("--baseline", "../baseline.json", ".", cwd=project / "plans")
    assert result.status == 0 and result.err_without_notes == "", result


def test_baseline_works_with_diff_mode(tmp_path, planlint, monkeypatch):
    import subprocess

    for key, value in {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}.items():
        monkeypatch.setenv(key, value)
    write(tmp_path / "plans" / "a.yaml", plan("a", FLOATING))
    write(tmp_path / "plans" / "b.yaml", plan("b", FLOATING))
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)
    planlint("--write-baseline", "baseline.json", cwd=tmp_path)
    write(tmp_path / "plans" / "a.yaml", plan("a", FLOATING, ("max_spend: 250", "max_spend: 300")))
    result = planlint("--diff-base", "HEAD", "--baseline", "baseline.json", "--format", "json", cwd=tmp_path)
    assert [(f["path"], f["code"]) for f in result.json["findings"]] == [("plans/a.yaml", "PL703")]
    assert result.err_without_notes == ""  # b.yaml was not checked: its entry is not stale


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "not found: create it with --write-baseline"),
        ("{not json", "is not valid JSON (line 1"),
        ("[]", "is not a planlint baseline"),
        ('{"version": 2, "findings": []}', "has version 2; this planlint reads version 1"),
        ('{"version": 1, "findings": {}}', '"findings" must be a list'),
        ('{"version": 1, "findings": [7]}', "findings[0] must be an object"),
        ('{"version": 1, "findings": [{"path": "", "code": "PL102", "yaml_path": "", "count": 1}]}', "findings[0].path must be a non-empty string"),
        ('{"version": 1, "findings": [{"path": "a", "code": "E501", "yaml_path": "", "count": 1}]}', "findings[0].code must be a rule code"),
        ('{"version": 1, "findings": [{"path": "a", "code": "PL102", "count": 1}]}', "findings[0].yaml_path must be a string"),
        ('{"version": 1, "findings": [{"path": "a", "code": "PL102", "yaml_path": "", "count": 0}]}', "findings[0].count must be a whole number"),
        ('{"version": 1, "findings": [{"path": "a", "code": "PL102", "yaml_path": "", "count": true}]}', "findings[0].count must be a whole number"),
        ("[" * 100000 + "]" * 100000, "nested too deeply"),
    ],
)
def test_broken_baseline_is_exit_2(content, message, project, planlint):
    if content is not None:
        (project / "baseline.json").write_text(content, encoding="utf-8")
    result = planlint("--baseline", "baseline.json", cwd=project)
    assert result.status == 2 and result.out == "", result
    assert message in result.err and "Traceback" not in result.err
    assert result.err.startswith("planlint: error: baseline baseline.json")


def test_baseline_that_is_not_utf8_or_a_directory(project, planlint):
    (project / "baseline.json").write_bytes(b"\xff\xfe{}")
    assert "is not UTF-8" in planlint("--baseline", "baseline.json", cwd=project).err
    (project / "dir.json").mkdir()
    result = planlint("--baseline", "dir.json", cwd=project)
    assert result.status == 2 and "cannot read baseline dir.json" in result.err


def test_write_baseline_to_a_missing_directory_is_exit_2(project, planlint):
    result = planlint("--write-baseline", "no/such/dir/b.json", cwd=project)
    assert result.status == 2 and "cannot write baseline" in result.err


def test_baseline_and_write_baseline_are_exclusive(project, planlint):
    result = planlint("--baseline", "a.json", "--write-baseline", "b.json", cwd=project)
    assert result.status == 2 and "not allowed with" in result.err
