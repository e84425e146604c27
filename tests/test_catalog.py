"""PL105/PL106 against the catalog (offline).

Each `tests/fixtures/published/NAME.yaml` is a plan fragment (merged into the
reference plan) with its expected findings in `# expect:` lines, checked with
`tests/fixtures/published/catalog.yaml`.
"""

from __future__ import annotations

import re
import shutil

import pytest

from conftest import FIXTURES, ROOT, write
from plan_overlay import build

PUBLISHED = FIXTURES / "published"
CASES = sorted(p.stem for p in PUBLISHED.glob("*.yaml") if p.name != "catalog.yaml")


def _expected(fragment: str) -> set[tuple[str, str, str]]:
    found = set()
    for line in fragment.splitlines():
        m = re.match(r"^# expect: (.*)$", line)
        if m and m.group(1) != "nothing":
            code, severity, path = m.group(1).split()
            found.add((code, severity, path))
    return found


def _project(tmp_path, config: str = "catalog: catalog.yaml\n"):
    shutil.copy(PUBLISHED / "catalog.yaml", tmp_path / "catalog.yaml")
    (tmp_path / ".planlint.yaml").write_text(config, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("name", CASES)
def test_fixture(name, tmp_path, planlint):
    fragment = (PUBLISHED / f"{name}.yaml").read_text(encoding="utf-8")
    assert "# expect:" in fragment, f"{name}: say what it expects"
    project = _project(tmp_path)
    write(project / "plan.yaml", build(fragment))
    result = planlint("--format", "json", "plan.yaml", cwd=project)
    got = {(f["code"], f["severity"], f["yaml_path"]) for f in result.json["findings"]}
    assert got == _expected(fragment), result.json["findings"]
    assert result.status == (1 if any(s == "error" for _, s, _ in got) else 0)


def test_messages_name_the_source_and_what_is_published(tmp_path, planlint):
    project = _project(tmp_path)
    write(project / "plan.yaml", build((PUBLISHED / "release-not-published.yaml").read_text(encoding="utf-8")))
    [finding] = planlint("--format", "json", "plan.yaml", cwd=project).json["findings"]
    assert finding["message"] == (
        "dataset 'retail-refunds' has no published release '2026.11.30' (according to catalog.yaml): "
        "catalog.yaml lists as published: '2026.09.02', '2026.10.01', '2026.11.03'; pin one of them, e.g. '2026.11.03'"
    )
    write(project / "plan.yaml", build((PUBLISHED / "release-unknown-dataset.yaml").read_text(encoding="utf-8")))
    [finding] = planlint("--format", "json", "plan.yaml", cwd=project).json["findings"]
    assert "'retail-returns' is not in the catalog (catalog.yaml)" in finding["message"]
    assert "check the name for a typo" in finding["message"]


def test_configured_severity_makes_unknown_names_errors(tmp_path, planlint):
    project = _project(tmp_path, "catalog: catalog.yaml\nseverity: {PL105: error}\n")
    write(project / "plan.yaml", build((PUBLISHED / "release-unknown-dataset.yaml").read_text(encoding="utf-8")))
    result = planlint("--format", "json", "plan.yaml", cwd=project)
    assert [(f["code"], f["severity"]) for f in result.json["findings"]] == [("PL105", "error")]
    assert result.status == 1


def test_without_a_catalog_nothing_is_checked(tmp_path, planlint):
    write(tmp_path / "plan.yaml", build((PUBLISHED / "release-not-published.yaml").read_text(encoding="utf-8")))
    assert planlint("--format", "json", "plan.yaml", cwd=tmp_path).json["findings"] == []


def test_a_catalog_without_a_section_does_not_track_it(tmp_path, planlint):
    write(tmp_path / "catalog.yaml", 'datasets: {retail-refunds: {releases: ["2026.11.03"]}}\n')
    write(tmp_path / ".planlint.yaml", "catalog: catalog.yaml\n")
    write(tmp_path / "plan.yaml", build((PUBLISHED / "grader-unknown.yaml").read_text(encoding="utf-8")))
    assert planlint("--format", "json", "plan.yaml", cwd=tmp_path).json["findings"] == []


def test_catalog_path_is_relative_to_the_config(tmp_path, planlint):
    project = _project(tmp_path)
    write(project / "plans" / "deep" / "plan.yaml", build((PUBLISHED / "release-not-published.yaml").read_text(encoding="utf-8")))
    result = planlint("--format", "json", "plan.yaml", cwd=project / "plans" / "deep")
    assert [f["code"] for f in result.json["findings"]] == ["PL105"]


@pytest.mark.parametrize(
    "catalog, message",
    [
        (None, "catalog catalog.yaml: file not found"),
        ("datasets: [retail-refunds]\n", "datasets must be a mapping of names"),
        ("datasets: {retail-refunds: [\"2026.11.03\"]}\n", "must be a mapping with releases"),
        ("datasets: {retail-refunds: {release: [\"2026.11.03\"]}}\n", "must be a mapping with releases"),
        ("graders: {g: {versions: \"1.0\"}}\n", "versions must be a list"),
        ("graders: {g: {versions: [[1]]}}\n", "is not a version"),
        ("dataset: {}\n", "unknown section 'dataset'"),
        ("datasets: {a: {releases: [1]}\n", "catalog.yaml:2:1: invalid YAML"),
        ("datasets: {a: {releases: [1]}, a: {releases: [2]}}\n", "duplicate key"),
        ("- 1\n", "the top level must be a mapping"),
    ],
)
def test_a_broken_catalog_is_a_config_error(catalog, message, tmp_path, planlint):
    if catalog is not None:
        write(tmp_path / "catalog.yaml", catalog)
    write(tmp_path / ".planlint.yaml", "catalog: catalog.yaml\n")
    write(tmp_path / "plan.yaml", build(""))
    result = planlint("plan.yaml", cwd=tmp_path)
    assert result.status == 2, result
    assert message in result.err and "Traceback" not in result.err


def test_the_example_plans_are_checked_against_the_shipped_catalog(tmp_path, planlint):
    """The README's main command (`planlint plans/` at the repo root) runs PL105/PL106."""
    assert "catalog: catalog.yaml" in (ROOT / ".planlint.yaml").read_text(encoding="utf-8")
    result = planlint("--format", "json", "plans/", cwd=ROOT)
    assert result.status == 0 and result.json["findings"] == [], result
    # The same project with a release that was never cut: caught offline.
    for name in (".planlint.yaml", "catalog.yaml"):
        shutil.copy(ROOT / name, tmp_path / name)
    for directory in ("plans", "configs", "rollouts", "data", "graders"):  # the plans, the Osmosis workspace and grader sources they name
        shutil.copytree(ROOT / directory, tmp_path / directory)
    plan = tmp_path / "plans" / "retail-refund-grpo.yaml"
    plan.write_text(plan.read_text(encoding="utf-8").replace('release: "2026.11.03"', 'release: "2026.11.04"'), encoding="utf-8")
    result = planlint("--format", "json", "plans/", cwd=tmp_path)
    assert [(f["code"], f["path"]) for f in result.json["findings"]] == [("PL105", "plans/retail-refund-grpo.yaml")]
