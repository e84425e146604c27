"""PL005 for named files: the repository's other plans count (the pre-commit case), read cheaply but exactly."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, write
from plan_overlay import REFERENCE
from planlint.core.config import Config
from planlint.core.loader import load_file
from planlint.core.model import is_plan
from planlint.engine import plan_names
from planlint.engine.plan_names import read_name

NAME = "retail-refund-window"


def repo(tmp_path: Path, plans: dict[str, str]) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for rel, text in plans.items():
        write(tmp_path / rel, text)
    return tmp_path


def codes(result) -> list[tuple[str, str]]:
    return [(f["code"], f["path"]) for f in result.json["findings"]]


def test_a_named_plan_reusing_a_name_of_the_repository_is_pl005(tmp_path, planlint):
    root = repo(tmp_path, {"plans/existing.yaml": REFERENCE, "plans/new.yaml": REFERENCE})
    result = planlint("--format", "json", "plans/new.yaml", cwd=root)
    assert codes(result) == [("PL005", "plans/new.yaml")]
    assert f"'{NAME}' is already used by plans/existing.yaml" in result.json["findings"][0]["message"]
    assert result.json["files"] == 1  # the other plans are not linted, only their names read


def test_from_a_subdirectory_and_with_skip_non_plans(tmp_path, planlint):
    root = repo(tmp_path, {"plans/a/existing.yaml": REFERENCE, "plans/b/new.yaml": REFERENCE})
    result = planlint("--format", "json", "--skip-non-plans", "new.yaml", cwd=root / "plans" / "b")
    assert codes(result) == [("PL005", "new.yaml")]
    assert "already used by ../a/existing.yaml" in result.json["findings"][0]["message"]


def test_unique_names_outside_a_repository_and_directories_are_unchanged(tmp_path, planlint):
    root = repo(tmp_path, {"plans/existing.yaml": REFERENCE, "plans/new.yaml": REFERENCE.replace(NAME, "other-name")})
    assert codes(planlint("--format", "json", "plans/new.yaml", cwd=root)) == []
    loose = tmp_path / "loose"  # no .git above: nothing else to compare with
    write(loose / "plans" / "a.yaml", REFERENCE)
    write(loose / "plans" / "b.yaml", REFERENCE)
    # tmp_path itself is a repository; use a directory outside it
    outside = Path(subprocess.run(["mktemp", "-d"], capture_output=True, text=True, check=True).stdout.strip())
    try:
        write(outside / "plans" / "a.yaml", REFERENCE)
        write(outside / "plans" / "b.yaml", REFERENCE)
        assert codes(planlint("--format", "json", "plans/b.yaml", cwd=outside)) == []
    finally:
        import shutil

        shutil.rmtree(outside)
    # a directory run reports the pair once, as before
    both = repo(tmp_path / "both", {"plans/a.yaml": REFERENCE, "plans/b.yaml": REFERENCE})
    assert codes(planlint("--format", "json", "plans/", cwd=both)) == [("PL005", "plans/b.yaml")]


def test_naming_both_plans_reports_once_and_excluded_plans_do_not_count(tmp_path, planlint):
    root = repo(tmp_path, {"plans/a.yaml": REFERENCE, "plans/b.yaml": REFERENCE, "plans/archive/old.yaml": REFERENCE.replace(NAME, "c")})
    assert codes(planlint("--format", "json", "plans/a.yaml", "plans/b.yaml", cwd=root)) == [("PL005", "plans/b.yaml")]
    write(root / "plans" / "archive" / "old.yaml", REFERENCE.replace(NAME, "z"))
    write(root / "plans" / "archive" / "dup.yaml", REFERENCE)
    write(root / ".planlint.yaml", 'exclude: ["plans/archive/**"]\n')
    assert codes(planlint("--format", "json", "plans/a.yaml", cwd=root)) == [("PL005", "plans/a.yaml")]  # b.yaml
    (root / "plans" / "b.yaml").unlink()
    assert codes(planlint("--format", "json", "plans/a.yaml", cwd=root)) == []  # dup.yaml is excluded


def test_ignore_and_suppression_still_apply(tmp_path, planlint):
    root = repo(tmp_path, {"plans/existing.yaml": REFERENCE, "plans/new.yaml": REFERENCE})
    assert codes(planlint("--format", "json", "--ignore", "PL005", "plans/new.yaml", cwd=root)) == []


def _full_parse_name(path: Path) -> str | None:
    loaded = load_file(path)
    if loaded.fatal or not is_plan(loaded.data):
        return None
    meta = loaded.data.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else None


def _every_yaml() -> list[Path]:
    found = sorted(FIXTURES.rglob("*.y*ml")) + sorted((ROOT / "tests" / "fuzz").rglob("*.y*ml"))
    return found + sorted((ROOT / "plans").glob("*.yaml")) + sorted((ROOT / "examples").glob("*.yaml"))


def test_the_text_scan_agrees_with_the_parser_on_every_plan_in_the_repository(tmp_path):
    """Fixture plans (raw and built into whole plans), the fuzz corpus, the shipped plans and the benchmark's corpus."""
    import sys

    from plan_overlay import build

    files = _every_yaml()
    for index, fixture in enumerate(sorted(FIXTURES.rglob("*.y*ml"))):
        files.append(write(tmp_path / "built" / f"{index}.yaml", build(fixture.read_text(encoding="utf-8", errors="replace"))))
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from corpus import write_corpus
    finally:
        sys.path.remove(str(ROOT / "bench"))
    write_corpus(tmp_path / "corpus", 300, 0)
    files += sorted((tmp_path / "corpus").rglob("*.yaml"))
    assert len(files) > 400
    fast = 0
    for path in files:
        assert read_name(path, Config()) == _full_parse_name(path), path
        fast += plan_names._scan(path.read_bytes().decode("utf-8", "replace")) is not None
    assert fast > 300  # the scan answers most plans without parsing


@pytest.mark.parametrize("text, expected", [
    ("metadata:\n  name: foo\n    bar\n", None),  # a multi-line plain scalar: parse ("foo bar")
    ("metadata:\n  name: 123\n", None),  # a number, not a name: parse
    ("metadata:\n  name: &a x\n", None),
    ("metadata:\n  name: !!str x\n", None),
    ('metadata:\n  name: "a\\u0062"\n', None),  # an escape: parse
    ("metadata: {name: x}\n", None),
    ("metadata:\n  # who\n\n  owner: me\n  name: 'a b'  # c\n", "a b"),
    ("metadata:\n  name: x\n  labels:\n    name: y\n", "x"),
    ("metadata:\n  name: x\n  name: y\n", None),  # a repeated key: the parser decides
    ("metadata:\n  name: x\n---\nmetadata:\n  name: y\n", None),
])
def test_the_scan_answers_only_when_certain(text, expected):
    full = "apiVersion: planlint/v1\nkind: ExperimentPlan\n" + text
    scanned = plan_names._scan(full)
    assert (scanned[1] if scanned else None) == expected


def test_only_the_repositorys_plans_directory_counts(tmp_path, planlint):
    """Fixtures, examples and other YAML elsewhere in the repository reuse names on purpose."""
    root = repo(tmp_path, {"tests/fixtures/a.yaml": REFERENCE, "tests/fixtures/b.yaml": REFERENCE, "examples/c.yaml": REFERENCE})
    assert codes(planlint("--format", "json", "tests/fixtures/b.yaml", cwd=root)) == []
    write(root / "plans" / "real.yaml", REFERENCE)
    result = planlint("--format", "json", "tests/fixtures/b.yaml", cwd=root)
    assert codes(result) == [("PL005", "tests/fixtures/b.yaml")]
    assert "already used by plans/real.yaml" in result.json["findings"][0]["message"]


def test_the_repository_is_the_named_files_not_the_working_directorys(tmp_path, planlint):
    root = repo(tmp_path / "project", {"plans/existing.yaml": REFERENCE, "plans/new.yaml": REFERENCE})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = planlint("--format", "json", str(root / "plans" / "new.yaml"), cwd=elsewhere)
    assert [f["code"] for f in result.json["findings"]] == ["PL005"]
