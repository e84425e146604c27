"""`--format gitlab`: a GitLab Code Quality report, checked against GitLab's own schema and parser rules.

GitLab's `codequality` artifact parser reads the report as a JSON array and
validates each entry against `app/validators/json_schemas/codeclimate.json`
(vendored in tests/consumers/, see its README), stopping at the first invalid
one; the merge-request widget then shows `description` and `check_name` at
`location.path` and line, and matches issues between the merge request and
its target branch by `fingerprint`. The README's `.gitlab-ci.yml` is checked
against GitLab's CI schema as check-jsonschema ships it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from conftest import ROOT, write
from plan_overlay import REFERENCE

SCHEMA = json.loads((Path(__file__).resolve().parent / "consumers" / "gitlab-codeclimate.schema.json").read_text(encoding="utf-8"))
SEVERITIES = {"info", "minor", "major", "critical", "blocker"}  # GitLab's documented severities


def valid_report(text: str) -> list[dict]:
    report = json.loads(text)
    assert isinstance(report, list)
    validator = jsonschema.Draft7Validator(SCHEMA)
    for entry in report:
        errors = list(validator.iter_errors(entry))
        assert not errors, (entry, [e.message for e in errors])
        assert entry["severity"] in SEVERITIES
        assert entry["check_name"] and entry["description"]
        path = entry["location"]["path"]
        assert not path.startswith(("/", "../")) and "\\" not in path  # relative to the repository, as GitLab links it
        assert entry["location"]["lines"]["begin"] >= 1
    fingerprints = [entry["fingerprint"] for entry in report]
    assert len(set(fingerprints)) == len(fingerprints)
    return report


@pytest.fixture
def repo(tmp_path):
    (tmp_path / ".git").mkdir()
    broken = REFERENCE.replace('release: "2026.11.03"', "release: latest", 1).replace("    frozen: true\n", "    frozen: false\n", 1)
    write(tmp_path / "plans" / "broken.yaml", broken)
    write(tmp_path / "plans" / "clean.yaml", REFERENCE.replace("name: retail-refund-window", "name: clean", 1))
    return tmp_path


def test_the_report_passes_gitlabs_schema(repo, planlint):
    result = planlint("--format", "gitlab", "--no-cache", "plans/", cwd=repo)
    assert result.status == 1
    report = valid_report(result.out)
    assert [(e["check_name"], e["severity"], e["location"]["path"], e["location"]["lines"]["begin"]) for e in report] == [
        ("PL102 dataset-release-floating", "major", "plans/broken.yaml", 21),
        ("PL205 eval-not-frozen", "minor", "plans/broken.yaml", 30),
    ]
    first = report[0]
    assert first["description"].startswith("PL102: dataset.release 'latest' is floating")
    assert first["location"]["positions"] == {"begin": {"line": 21, "column": 12}, "end": {"line": 21, "column": 18}}


def test_paths_are_relative_to_the_repository_from_a_subdirectory(repo, planlint):
    result = planlint("--format", "gitlab", "--no-cache", "broken.yaml", cwd=repo / "plans")
    assert {e["location"]["path"] for e in valid_report(result.out)} == {"plans/broken.yaml"}


def test_fingerprints_do_not_move_with_lines(repo, planlint):
    before = valid_report(planlint("--format", "gitlab", "--no-cache", "plans/", cwd=repo).out)
    plan = repo / "plans" / "broken.yaml"
    plan.write_text("# a comment that moves every line\n" + plan.read_text(encoding="utf-8"), encoding="utf-8")
    after = valid_report(planlint("--format", "gitlab", "--no-cache", "plans/", cwd=repo).out)
    assert [e["fingerprint"] for e in before] == [e["fingerprint"] for e in after]
    assert [e["location"]["lines"]["begin"] for e in after] == [e["location"]["lines"]["begin"] + 1 for e in before]


def test_a_clean_run_is_an_empty_array_and_output_files_work(repo, planlint):
    assert valid_report(planlint("--format", "gitlab", "--no-cache", "plans/clean.yaml", cwd=repo).out) == []
    target = repo / "gl-code-quality-report.json"
    result = planlint("--no-cache", "--output", f"gitlab={target}", "plans/", cwd=repo)
    assert "PL102" in result.out  # the text report on the console
    assert len(valid_report(target.read_text(encoding="utf-8"))) == 2


def test_hostile_messages_stay_json(repo, planlint):
    write(repo / "plans" / "hostile.yaml", REFERENCE.replace("name: retail-refund-window", "name: hostile", 1)
          .replace('release: "2026.11.03"', 'release: "latest\\u0007\\n::error::x\\u202e"', 1))
    report = valid_report(planlint("--format", "gitlab", "--no-cache", "plans/hostile.yaml", cwd=repo).out)
    assert report and all("\x07" not in e["description"] and "\u202e" not in e["description"] for e in report)


def _readme_gitlab_ci() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.search(r"```yaml\n(# \.gitlab-ci\.yml\n.*?)```", readme, re.S).group(1)


def test_the_readme_gitlab_ci_snippet_is_valid_gitlab_ci(tmp_path):
    snippet = _readme_gitlab_ci()
    config = write(tmp_path / ".gitlab-ci.yml", snippet)
    proc = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.gitlab-ci", str(config)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "codequality: gl-code-quality-report.json" in snippet and "--output gitlab=gl-code-quality-report.json" in snippet
    assert "--diff-base \"$CI_MERGE_REQUEST_DIFF_BASE_SHA\"" in snippet and 'GIT_DEPTH: "0"' in snippet
