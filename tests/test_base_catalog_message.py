"""In diff mode PL105/PL106 are judged by the base revision's catalog, and their messages say so."""

from __future__ import annotations

from action_harness import git
from conftest import write
from plan_overlay import REFERENCE

BASE_CATALOG = 'graders: {tau-retail-db-state: {versions: ["1.4.1", "1.4.2"]}, polite-tone-judge: {versions: ["3.0.1"]}}\n'
HEAD_CATALOG = 'graders: {tau-retail-db-state: {versions: ["1.4.1", "1.4.2", "2.2.0"]}, polite-tone-judge: {versions: ["3.0.1"]}}\n'


def test_the_message_names_the_base_revisions_catalog(tmp_path, planlint):
    repo = tmp_path / "repo"
    write(repo / ".planlint.yaml", "catalog: catalog.yaml\n")
    write(repo / "catalog.yaml", BASE_CATALOG)
    write(repo / "plans" / "plan.yaml", REFERENCE)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-q", "-b", "change")
    write(repo / "catalog.yaml", HEAD_CATALOG)  # the pull request publishes the version it pins
    write(repo / "plans" / "plan.yaml", REFERENCE.replace("    version: 1.4.2\n", "    version: 2.2.0\n", 1).replace("db-state: 1.4.2", "db-state: 2.2.0"))
    git(repo, "commit", "-qam", "re-pin")
    plain = planlint("--format", "json", "--no-cache", "plans/", cwd=repo)
    assert "PL106" not in {f["code"] for f in plain.json["findings"]}  # the catalog on disk lists 2.2.0
    result = planlint("--diff-base", "main", "--format", "json", "plans/", cwd=repo)
    [finding] = [f for f in result.json["findings"] if f["code"] == "PL106"]
    assert finding["message"] == (
        "grader 'tau-retail-db-state' has no published version '2.2.0' (according to catalog.yaml at the base revision): "
        "catalog.yaml at the base revision lists as published: '1.4.1', '1.4.2'; pin one of them, e.g. '1.4.2'"
    )
