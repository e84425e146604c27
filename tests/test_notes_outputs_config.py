"""Notes in every format, --output validation, config discovery bounded by the repository (issue 12: 5, 6, 12)."""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import REFERENCE_PLAN, run_process, write

PLAN = REFERENCE_PLAN.read_text(encoding="utf-8")
SKIP_NOTE = "data checks (PL207-PL211) skipped"


@pytest.fixture
def project(tmp_path):
    write(tmp_path / "plans" / "refund.yaml", PLAN)  # split files absent: data checks skipped, a note
    (tmp_path / "empty").mkdir()
    write(tmp_path / "other" / "config.yml", "key: value\n")
    return tmp_path


def test_notes_in_json(project, planlint):
    result = planlint("--format", "json", "--no-cache", "plans", "empty", "other", cwd=project)
    payload = result.json
    assert payload["version"] == 1
    notes = payload["notes"]
    assert any(SKIP_NOTE in n for n in notes), notes
    assert any(n.startswith("empty: no plan found") and "no *.yaml" in n for n in notes), notes
    assert any(n.startswith("other: no plan found") and "1 YAML file is not" in n for n in notes), notes
    assert not any(n.startswith("plans:") for n in notes)
    assert result.err == ""  # machine formats carry the notes, stderr stays clean


def test_json_notes_is_an_empty_list_when_nothing_was_skipped(tmp_path, planlint):
    # Selected splits: no file to read (an eval of one listed task would be PL611's, a real defect).
    write(tmp_path / "p.yaml", PLAN.replace("    path: data/retail/train.jsonl     # or selector: {field: split, equals: train}, or tasks: [ids]\n", "    selector: {field: split, equals: train}\n").replace("    path: data/retail/eval.jsonl\n", "    selector: {field: split, equals: eval}\n"))
    payload = planlint("--format", "json", "--no-cache", "p.yaml", cwd=tmp_path).json
    assert payload["notes"] == [] and payload["findings"] == []


def test_notes_in_sarif_github_and_markdown(project, planlint):
    sarif = json.loads(planlint("--format", "sarif", "--no-cache", "plans", "empty", cwd=project).out)
    texts = [n["message"]["text"] for n in sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]]
    assert any(SKIP_NOTE in t for t in texts) and any("empty: no plan found" in t for t in texts), texts
    github = planlint("--format", "github", "--no-cache", "plans", "empty", cwd=project).out
    assert sum(line.startswith("::notice ") for line in github.splitlines()) == 2, github
    markdown = planlint("--format", "markdown", "--no-cache", "plans", "empty", cwd=project).out
    section = markdown.split("### Notes", 1)[1]
    assert SKIP_NOTE in section and "empty: no plan found" in section, markdown


def test_notes_on_stderr_for_text(project, planlint):
    result = planlint("--no-cache", "empty", cwd=project)
    assert result.status == 0
    assert "0 files checked" in result.out
    assert "planlint: note: empty: no plan found under this directory" in result.err


# --------------------------------------------------------------------------- --output


@pytest.mark.parametrize("value", ["Sarif=planlint.sarif", "bogus=x", "sarif=", "JSON=out.json"])
def test_an_unknown_output_format_is_exit_2_naming_the_known_ones(project, planlint, value):
    result = planlint("--output", value, "plans", cwd=project)
    assert result.status == 2, result
    assert "text, json, sarif, github, junit, markdown" in result.err
    assert not list(project.glob("*=*")) and result.out == ""


@pytest.mark.parametrize("value", ["sarif=reports", "reports", "sarif=reports/", "newdir/"])
def test_an_output_that_is_a_directory_is_exit_2(project, planlint, value):
    (project / "reports").mkdir()
    result = planlint("--output", value, "plans", cwd=project)
    assert result.status == 2, result
    assert "directory" in result.err and "sarif" in result.err


def test_known_output_formats_still_work(project, planlint):
    result = planlint("--no-cache", "--output", "sarif=out/planlint.sarif", "--output", "report.txt", "--output", "./a=b.json", "plans", cwd=project)
    assert result.status == 2  # two plain files
    result = planlint("--no-cache", "--output", "sarif=out/planlint.sarif", "--output", "./a=b.json", "plans", cwd=project)
    assert result.status == 0, result
    assert json.loads((project / "out" / "planlint.sarif").read_text())["version"] == "2.1.0"
    assert "1 file checked" in (project / "a=b.json").read_text()


# --------------------------------------------------------------------------- config discovery


def test_config_discovery_stops_at_the_repository_root(tmp_path):
    """A repository nested in another does not pick up the outer `.planlint.yaml` and its catalog."""
    write(tmp_path / ".planlint.yaml", "ignore: [PL205]\ncatalog: catalog.yaml\n")
    write(tmp_path / "catalog.yaml", "datasets: {retail-refunds: {releases: ['2026.10.01']}}\n")
    inner = tmp_path / "inner"
    write(inner / "plans" / "refund.yaml", PLAN.replace("    frozen: true\n", "    frozen: false\n"))
    subprocess.run(["git", "init", "-q", str(inner)], check=True, capture_output=True)
    result = run_process("--format", "json", "--no-cache", "plans", cwd=inner)
    codes = [f["code"] for f in result.json["findings"]]
    assert codes == ["PL205"], result  # not ignored, and no PL105 from the outer catalog
    # A worktree or submodule has a .git file: the same boundary.
    (inner / ".git").rename(tmp_path / "moved-git")
    write(inner / ".git", "gitdir: ../moved-git\n")
    assert [f["code"] for f in run_process("--format", "json", "--no-cache", "plans", cwd=inner).json["findings"]] == ["PL205"]
    # Without a repository boundary the outer config still applies (a plain directory tree).
    (inner / ".git").unlink()
    codes = [f["code"] for f in run_process("--format", "json", "--no-cache", "plans", cwd=inner).json["findings"]]
    assert "PL205" not in codes and "PL105" in codes
