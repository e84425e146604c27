"""PL207-PL209 wired into the linter: real files in a temp repo, through the CLI."""

from __future__ import annotations

import json
import re

import pytest

from conftest import REFERENCE_PLAN, write
from plan_overlay import build
from planlint.rules import RULES

REF = REFERENCE_PLAN.read_text(encoding="utf-8")
DATA_RULES = sorted(c for c, r in RULES.items() if r.scope == "data")


def _data_directives(fragment: str) -> dict[str, list[str]]:
    files: dict[str, list[str]] = {}
    for line in fragment.splitlines():
        match = re.match(r"^#\s*data\s+(\S+):\s*(.*)$", line.strip())
        if match:
            files.setdefault(match.group(1), []).append(match.group(2))
    return files


def _lint_example(tmp_path, planlint, fragment: str) -> list[dict]:
    for name, rows in _data_directives(fragment).items():
        write(tmp_path / name, "\n".join(rows) + "\n")
    write(tmp_path / "plans" / "plan.yaml", build(fragment))
    result = planlint("--format", "json", "--no-cache", "plans", cwd=tmp_path)
    assert result.status in (0, 1), result
    return result.json["findings"]


def test_data_rules_are_registered():
    assert DATA_RULES == ["PL207", "PL208", "PL209", "PL210", "PL211"]


@pytest.mark.parametrize("code", DATA_RULES)
def test_failing_example_fires(code, tmp_path, planlint):
    findings = _lint_example(tmp_path, planlint, RULES[code].sections()["fails"])
    assert code in {f["code"] for f in findings}, findings


@pytest.mark.parametrize("code", DATA_RULES)
def test_passing_example_is_clean(code, tmp_path, planlint):
    assert _lint_example(tmp_path, planlint, RULES[code].sections()["passes"]) == []


def _plan_with_paths(time_boundary: bool = True) -> str:
    text = REF.replace("path: data/retail/train.jsonl", "path: data/train.jsonl").replace("path: data/retail/eval.jsonl", "path: data/eval.jsonl")
    if not time_boundary:
        text = re.sub(r"\n    time_key:.*\n    cutoff:.*", "", text)
    return text


def _rows(prefix: str, n: int, customers, dates) -> str:
    return "".join(
        json.dumps({"id": f"{prefix}{i}", "customer_id": customers(i), "created_at": dates(i), "prompt": f"{prefix} question {i}"}) + "\n"
        for i in range(n)
    )


def test_done_when_three_customers_and_one_late_row(tmp_path, planlint):
    """The issue's scenario: names those customers and that row, in both files."""
    write(tmp_path / "plans" / "plan.yaml", _plan_with_paths())
    train = _rows("train", 200, lambda i: f"c-{i}", lambda i: "2026-09-15" if i == 41 else "2026-05-01")
    evaluation = _rows("eval", 50, lambda i: f"c-{i * 10}" if i in (1, 2, 3) else f"e-{i}", lambda i: "2026-08-10")
    write(tmp_path / "data" / "train.jsonl", train)
    write(tmp_path / "data" / "eval.jsonl", evaluation)
    result = planlint("--format", "json", "plans", cwd=tmp_path)
    assert result.status == 1
    by_code = {f["code"]: f for f in result.json["findings"]}
    assert set(by_code) == {"PL207", "PL208"}
    group = by_code["PL207"]
    assert group["yaml_path"] == "splits.eval.path"
    assert all(c in group["message"] for c in ("'c-10'", "'c-20'", "'c-30'"))
    assert "train row 11" in group["message"] and "eval row 2" in group["message"]
    assert group["message"].startswith("3 ")
    late = by_code["PL208"]
    assert late["yaml_path"] == "splits.train.path" and "row 42" in late["message"]
    plan_lines = (tmp_path / "plans" / "plan.yaml").read_text().splitlines()
    assert "path: data/eval.jsonl" in plan_lines[group["line"] - 1]
    assert "path: data/train.jsonl" in plan_lines[late["line"] - 1]


def test_clean_split_is_quiet_and_cached(tmp_path, planlint):
    write(tmp_path / "plans" / "plan.yaml", _plan_with_paths())
    write(tmp_path / "data" / "train.jsonl", _rows("train", 100, lambda i: f"c-{i}", lambda i: "2026-05-01"))
    write(tmp_path / "data" / "eval.jsonl", _rows("eval", 20, lambda i: f"e-{i}", lambda i: "2026-08-01"))
    assert planlint("--format", "json", "plans", cwd=tmp_path).json["findings"] == []
    assert list((tmp_path / ".planlint_cache").rglob("*.json")), "the data-check result is cached"


def test_missing_files_are_a_note_or_with_require_data_an_error(tmp_path, planlint):
    write(tmp_path / "plans" / "plan.yaml", _plan_with_paths())
    result = planlint("--format", "json", "plans", cwd=tmp_path)
    assert result.status == 0 and result.json["findings"] == [] and result.err == ""
    text = planlint("plans", cwd=tmp_path)
    assert text.err == "planlint: note: data checks (PL207-PL211) skipped for 1 plan whose split files are not in this checkout (plans/plan.yaml); --require-data makes that an error\n"
    assert planlint("--quiet", "plans", cwd=tmp_path).err == ""
    required = planlint("--format", "json", "--require-data", "plans", cwd=tmp_path)
    assert required.status == 1
    assert [(f["code"], f["yaml_path"]) for f in required.json["findings"]] == [("PL006", "splits.train.path"), ("PL006", "splits.eval.path")]
    write(tmp_path / ".planlint.yaml", "data: {require: true}\n")
    assert planlint("plans", cwd=tmp_path).status == 1


def test_a_split_path_the_system_cannot_look_up_is_not_there(tmp_path, planlint):
    """A path longer than the system allows was an internal error (the lookup raised); now it is a split
    file that is not in the checkout, with and without the result cache (which lists the paths looked at)."""
    long = "d/" + "a" * 300 + "/" + "b" * 4000 + ".jsonl"
    write(tmp_path / "plans" / "plan.yaml", _plan_with_paths().replace("path: data/train.jsonl", f"path: {long}"))
    for cache in (["--no-cache"], []):
        result = planlint(*cache, "plans", cwd=tmp_path)
        assert result.status == 0 and "internal error" not in result.err, result
        assert "skipped for 1 plan whose split files are not in this checkout" in result.err
    required = planlint("--format", "json", "--no-cache", "--require-data", "plans", cwd=tmp_path)
    assert [(f["code"], f["yaml_path"]) for f in required.json["findings"]] == [("PL006", "splits.train.path"), ("PL006", "splits.eval.path")]


def test_paths_resolve_from_the_plan_directory_too(tmp_path, planlint):
    write(tmp_path / "project" / "plans" / "plan.yaml", _plan_with_paths().replace("path: data/", "path: ../data/"))
    write(tmp_path / "project" / "data" / "train.jsonl", _rows("t", 5, lambda i: "same", lambda i: "2026-01-01"))
    write(tmp_path / "project" / "data" / "eval.jsonl", _rows("e", 5, lambda i: "same", lambda i: "2026-09-01"))
    result = planlint("--format", "json", "project/plans", cwd=tmp_path)
    assert [f["code"] for f in result.json["findings"]] == ["PL207"]


def test_input_fields_config_and_selector_splits(tmp_path, planlint):
    write(tmp_path / ".planlint.yaml", "data: {input_fields: [question]}\n")
    write(tmp_path / "plans" / "plan.yaml", _plan_with_paths(time_boundary=False))
    write(tmp_path / "data" / "train.jsonl", json.dumps({"customer_id": "a", "question": "Where  is MY parcel?", "prompt": "x"}) + "\n")
    write(tmp_path / "data" / "eval.jsonl", json.dumps({"customer_id": "b", "question": "where is my parcel?", "prompt": "y"}) + "\n")
    assert [f["code"] for f in planlint("--format", "json", "plans", cwd=tmp_path).json["findings"]] == ["PL209"]
    selector = REF.replace("path: data/retail/train.jsonl", "selector: {field: split, equals: train}").replace("path: data/retail/eval.jsonl", "selector: {field: split, equals: eval}")
    write(tmp_path / "plans" / "plan.yaml", selector)
    result = planlint("plans", cwd=tmp_path)
    assert result.status == 0 and "skipped" not in result.err


def test_broken_data_config_is_exit_2(tmp_path, planlint):
    write(tmp_path / ".planlint.yaml", "data: {input_fields: 3}\n")
    write(tmp_path / "plans" / "plan.yaml", _plan_with_paths())
    result = planlint("plans", cwd=tmp_path)
    assert result.status == 2 and "data" in result.err
