"""`planlint --fix`: byte-for-byte against expected files, idempotent, never on broken files.

Each `tests/fixtures/fix/NAME.input.yaml` is fixed with the catalog beside it
and must then equal `NAME.expected.yaml` byte for byte (comments, quoting,
indentation, CRLF, a missing final newline, a BOM). A case whose expected file
equals its input has no certain fix.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, write

FIX = FIXTURES / "fix"
CASES = sorted(p.name[: -len(".input.yaml")] for p in FIX.glob("*.input.yaml"))


def _project(tmp_path: Path, *names: str) -> Path:
    shutil.copy(FIX / "catalog.yaml", tmp_path / "catalog.yaml")
    (tmp_path / ".planlint.yaml").write_text("catalog: catalog.yaml\n", encoding="utf-8")
    (tmp_path / "plans").mkdir()
    for name in names:
        shutil.copy(FIX / f"{name}.input.yaml", tmp_path / "plans" / f"{name}.yaml")
    return tmp_path


def test_every_case_has_an_expected_file():
    assert CASES, "no fixtures"
    for name in CASES:
        assert (FIX / f"{name}.expected.yaml").is_file(), name


@pytest.mark.parametrize("name", CASES)
def test_fix_gives_the_expected_bytes(name, tmp_path, planlint):
    project = _project(tmp_path, name)
    plan = project / "plans" / f"{name}.yaml"
    expected = (FIX / f"{name}.expected.yaml").read_bytes()
    result = planlint("--fix", "--format", "json", f"plans/{name}.yaml", cwd=project)
    assert result.status in (0, 1), result
    assert plan.read_bytes() == expected
    changed = expected != (FIX / f"{name}.input.yaml").read_bytes()
    assert ("Fixed" in result.err) == changed, result.err
    # What is left is what the linter reports now: the fixed codes are gone.
    remaining = {(f["code"], f["yaml_path"]) for f in result.json["findings"]}
    after = planlint("--format", "json", f"plans/{name}.yaml", cwd=project)
    assert {(f["code"], f["yaml_path"]) for f in after.json["findings"]} == remaining
    assert result.status == after.status


@pytest.mark.parametrize("name", CASES)
def test_fix_is_idempotent(name, tmp_path, planlint):
    project = _project(tmp_path, name)
    plan = project / "plans" / f"{name}.yaml"
    planlint("--fix", "plans/", cwd=project)
    once = plan.read_bytes()
    result = planlint("--fix", "plans/", cwd=project)
    assert plan.read_bytes() == once
    assert "Nothing to fix." in result.err


@pytest.mark.parametrize("name", [c for c in CASES if (FIX / f"{c}.expected.yaml").read_bytes() != (FIX / f"{c}.input.yaml").read_bytes()])
def test_fix_diff_prints_a_patch_and_writes_nothing(name, tmp_path, planlint):
    project = _project(tmp_path, name)
    plan = project / "plans" / f"{name}.yaml"
    before = plan.read_bytes()
    result = planlint("--fix", "--diff", "plans/", cwd=project)
    assert result.status == 1, result  # like ruff --diff: 1 when there is something to change
    assert plan.read_bytes() == before
    assert result.out.startswith(f"--- a/plans/{name}.yaml\n+++ b/plans/{name}.yaml\n@@ ")
    assert "Would fix" in result.err
    # The diff is exact: applying it gives the expected file.
    (project / "fix.patch").write_bytes(result.out.encode("utf-8"))
    subprocess.run(["git", "apply", "--whitespace=nowarn", "fix.patch"], cwd=project, check=True, capture_output=True)
    assert plan.read_bytes() == (FIX / f"{name}.expected.yaml").read_bytes()


def test_fix_diff_with_nothing_to_fix_is_silent_and_passes(tmp_path, planlint):
    project = _project(tmp_path, "uncertain")
    result = planlint("--fix", "--diff", "plans/", cwd=project)
    assert result.status == 0 and result.out == ""
    assert "No fixes available." in result.err


def test_diff_without_fix_is_a_usage_error(tmp_path, planlint):
    project = _project(tmp_path, "flow")
    result = planlint("--diff", "plans/", cwd=project)
    assert result.status == 2 and "--fix --diff" in result.err


def test_exit_status_reflects_what_remains(tmp_path, planlint):
    project = _project(tmp_path, "flow")
    before = planlint("plans/", cwd=project)
    assert before.status == 1
    fixed = planlint("--fix", "plans/", cwd=project)
    assert fixed.status == 0, fixed
    assert "Fixed 4 findings in 1 file." in fixed.err  # PL102, PL302, PL502 and the missing currency (PL503)
    assert "0 errors" in fixed.out


def test_fix_reports_each_fix_and_counts_the_currency_it_added(tmp_path, planlint):
    project = _project(tmp_path, "commented")
    result = planlint("--fix", "plans/", cwd=project)
    assert "plans/commented.yaml:21:12: fixed PL102: dataset.release 'latest' -> '2026.11.03' (newest published in catalog.yaml)" in result.err
    assert "fixed PL502: budget.max_spend '$250' -> 250, added budget.currency: USD" in result.err
    # PL102 + PL502 + the PL503 (currency missing) that the added currency resolves.
    assert "Fixed 3 findings in 1 file." in result.err


def test_repinned_grader_leaves_the_baseline_and_pl306_says_why(tmp_path, planlint):
    project = _project(tmp_path)
    text = (FIXTURES / "reference_plan.yaml").read_text(encoding="utf-8")
    text = text.replace("    version: 1.4.2\n", "    version: latest\n").replace("grader_versions: {db-state: 1.4.2,", "grader_versions: {db-state: latest,")
    plan = write(project / "plans" / "p.yaml", text)
    assert planlint("--format", "json", "plans/", cwd=project).json["findings"][0]["code"] == "PL302"
    result = planlint("--fix", "--format", "json", "plans/", cwd=project)
    assert result.status == 1
    [finding] = result.json["findings"]
    assert finding["code"] == "PL306" and finding["yaml_path"] == "baseline.grader_versions.db-state"
    assert "--fix just pinned 'db-state' from 'latest' to '2.0.0'" in finding["message"]
    assert "re-baselining is a human decision" in finding["message"]
    fixed = plan.read_text(encoding="utf-8")
    assert "    version: 2.0.0\n" in fixed and "grader_versions: {db-state: latest," in fixed


def test_syntax_errors_and_non_plans_are_never_touched(tmp_path, planlint):
    project = _project(tmp_path)
    broken = write(project / "plans" / "broken.yaml", "apiVersion: planlint/v1\nkind: ExperimentPlan\ndataset:\n  name: retail-refunds\n  release: latest\nbudget: {max_spend: \"$250\"\n")
    other = write(project / "plans" / "other.yaml", "dataset:\n  name: retail-refunds\n  release: latest\nbudget:\n  max_spend: \"$250\"\n")
    before = (broken.read_bytes(), other.read_bytes())
    result = planlint("--fix", "--format", "json", "plans/broken.yaml", "plans/other.yaml", cwd=project)
    assert (broken.read_bytes(), other.read_bytes()) == before
    assert result.status == 1
    assert {f["code"] for f in result.json["findings"]} == {"PL001", "PL004"}
    assert "Nothing to fix." in result.err


def test_fix_without_catalog_pins_nothing_but_still_fixes_the_budget(tmp_path, planlint):
    (tmp_path / "plans").mkdir()
    shutil.copy(FIX / "commented.input.yaml", tmp_path / "plans" / "p.yaml")
    result = planlint("--fix", "--format", "json", "plans/", cwd=tmp_path)
    text = (tmp_path / "plans" / "p.yaml").read_text(encoding="utf-8")
    assert "  release: latest" in text and "  max_spend: 250" in text and "  currency: USD\n" in text
    assert [f["code"] for f in result.json["findings"]] == ["PL102"]


def test_fix_only_fixes_selected_rules(tmp_path, planlint):
    project = _project(tmp_path, "commented")
    result = planlint("--fix", "--ignore", "PL5", "plans/", cwd=project)
    text = (project / "plans" / "commented.yaml").read_text(encoding="utf-8")
    assert 'release: "2026.11.03"' in text and 'max_spend: "$250"' in text
    assert "Fixed 1 finding in 1 file." in result.err


def test_fix_keeps_file_mode_and_writes_through_symlinks(tmp_path, planlint):
    project = _project(tmp_path, "flow")
    real = project / "plans" / "flow.yaml"
    real.chmod(0o640)
    link = project / "link.yaml"
    link.symlink_to(real)
    planlint("--fix", "link.yaml", cwd=project)
    assert link.is_symlink()
    assert real.read_bytes() == (FIX / "flow.expected.yaml").read_bytes()
    assert real.stat().st_mode & 0o777 == 0o640


def test_fixable_flags_match_what_fix_can_do(planlint):
    from fix_corpus import FIXABLE
    from planlint.rules import RULES

    assert {code for code, rule in RULES.items() if rule.fixable} == set(FIXABLE)
    rows = json.loads(planlint("rules", "--format", "json").out)
    assert {r["code"] for r in rows if r["fixable"]} == set(FIXABLE)
    for code in FIXABLE:
        assert "fixable with --fix" in planlint("explain", code).out


@pytest.mark.parametrize(
    "text, parsed",
    [
        ("$250", ("250", "USD")),
        ("$ 250.50", ("250.50", "USD")),
        ("$1,250", ("1250", "USD")),
        ("250 USD", ("250", "USD")),
        ("250usd", ("250", "USD")),
        ("EUR 900", ("900", "EUR")),
        (" 250 ", ("250", None)),
        ("1,250 USD", ("1250", "USD")),
        # not certain, so not fixed
        ("1,250 EUR", None),  # 1.25 or 1250?
        ("$1,25", None),
        ("$0", None),
        ("0250", None),
        ("250 dollars", None),
        ("250 XYZ", None),
        ("about 250", None),
        ("€250", None),
        ("-250", None),
        ("$250-300", None),
    ],
)
def test_parse_spend(text, parsed):
    from planlint.rules.budget import parse_spend

    assert parse_spend(text) == parsed


@pytest.mark.parametrize(
    "value, published, newest",
    [
        ("latest", ("1.0", "1.1", "2.0"), "2.0"),
        ("LATEST", ("1.0",), "1.0"),
        ("current", ("1.0", "1.1"), "1.1"),
        ("*", ("1.0", "1.1"), "1.1"),
        ("1.x", ("1.0", "1.1", "2.0"), "1.1"),
        ("1.X.x", ("1.0.1", "1.2.0", "2.0.0"), "1.2.0"),
        ("1.4.*", ("1.4.1", "1.4.2", "1.5.0"), "1.4.2"),
        ("3.x", ("1.0", "2.0"), None),
        ("latest", (), None),
        ("latest", ("1.0", "nightly"), "1.0"),  # a listed value that is itself floating is skipped
        ("stable", ("1.0",), None),
        ("^1.4", ("1.4.2",), None),
        ("x.1", ("1.1",), None),
        ("", ("1.0",), None),
        (None, ("1.0",), None),
    ],
)
def test_newest_matching(value, published, newest):
    from planlint.rules.pinning import newest_matching

    assert newest_matching(value, published) == newest


def test_diff_near_a_byte_order_mark_applies(tmp_path, planlint):
    project = _project(tmp_path)
    plan = project / "plans" / "p.yaml"
    plan.write_bytes(b"\xef\xbb\xbfapiVersion: planlint/v1\nkind: ExperimentPlan\nbudget: {currency: usd, max_spend: 250}\n")
    result = planlint("--fix", "--diff", "plans/p.yaml", cwd=project)
    (project / "fix.patch").write_bytes(result.out.encode("utf-8"))
    subprocess.run(["git", "apply", "fix.patch"], cwd=project, check=True, capture_output=True)
    assert plan.read_bytes() == b"\xef\xbb\xbfapiVersion: planlint/v1\nkind: ExperimentPlan\nbudget: {currency: USD, max_spend: 250}\n"


def test_diff_escapes_bidi_and_format_characters_from_the_plan(tmp_path, planlint):
    project = _project(tmp_path)
    write(project / "plans" / "p.yaml", 'apiVersion: planlint/v1\nkind: ExperimentPlan\nbudget: {currency: usd, max_spend: 250}  # \u202egnp.exe\n')
    result = planlint("--fix", "--diff", "plans/p.yaml", cwd=project)
    assert "\u202e" not in result.out and "\\u202egnp.exe" in result.out


def test_a_file_with_a_duplicate_key_is_not_touched(tmp_path, planlint):
    project = _project(tmp_path)
    text = (FIX / "flow.input.yaml").read_text(encoding="utf-8").replace("release: latest,", "release: latest, release: latest,")
    plan = write(project / "plans" / "dup.yaml", text)
    result = planlint("--fix", "plans/", cwd=project)
    assert plan.read_text(encoding="utf-8") == text
    assert "plans/dup.yaml: not fixed: it repeats a key (PL002); remove the duplicate first" in result.err


@pytest.mark.parametrize("flag", [["--diff-base", "main"], ["--write-baseline", "accepted.json"]])
def test_fix_does_not_combine_with_diff_mode_or_writing_a_baseline(flag, tmp_path, planlint):
    project = _project(tmp_path, "flow")
    before = (project / "plans" / "flow.yaml").read_bytes()
    result = planlint("--fix", *flag, "plans/", cwd=project)
    assert result.status == 2 and "cannot be combined with --diff-base or --write-baseline" in result.err
    assert (project / "plans" / "flow.yaml").read_bytes() == before
