"""Every rule documents itself, and its documented examples are true."""

from __future__ import annotations

import json

import pytest

from planlint.cli import explain_text
from planlint.core.loader import load_text
from planlint.rules import RULES
from plan_overlay import build, directives, split_files, write_files

DOC_SCOPES = ("plan", "file", "repo", "files")


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_has_documentation(code):
    rule = RULES[code]
    parts = rule.sections()
    assert parts["summary"], code
    assert len(parts["rationale"]) > 40, f"{code}: rationale too short"
    assert parts["fails"].strip() and parts["passes"].strip(), f"{code}: needs both examples"
    assert rule.severity in ("error", "warning")
    assert code.startswith("PL") and len(code) == 5


def _lint(tmp_path, planlint, fragment: str, *, copies: int = 1):
    fragment, others = split_files(fragment)  # run configs and rollout code beside the plan
    write_files(tmp_path, others)
    d = directives(fragment)
    text = build(fragment)
    if "catalog" in d:  # PL105/PL106: a catalog file, and a config that names it
        (tmp_path / "catalog.yaml").write_text(d["catalog"] + "\n", encoding="utf-8")
        settings = load_text(d.get("config") or "{}").data
        settings["catalog"] = "catalog.yaml"
        (tmp_path / ".planlint.yaml").write_text(json.dumps(settings) + "\n", encoding="utf-8")
    elif "config" in d:
        (tmp_path / ".planlint.yaml").write_text(d["config"] + "\n", encoding="utf-8")
    files = []
    for index in range(copies):
        path = tmp_path / f"plan{index}.yaml"
        path.write_bytes(text.encode(d.get("encoding") or "utf-8"))
        files.append(path.name)
    if "found in a directory" in d:  # PL007: only files found by searching a directory
        (tmp_path / "plans").mkdir()
        for name in files:
            (tmp_path / name).rename(tmp_path / "plans" / name)
        files = ["plans"]
    result = planlint("--format", "json", *files, cwd=tmp_path)
    assert result.status in (0, 1), result
    return result.json["findings"]


@pytest.mark.parametrize("code", sorted(c for c, r in RULES.items() if r.scope in DOC_SCOPES))
def test_failing_example_fires(code, tmp_path, planlint):
    fragment = RULES[code].sections()["fails"]
    copies = 2 if "two files" in directives(fragment) else 1
    findings = _lint(tmp_path, planlint, fragment, copies=copies)
    assert code in {f["code"] for f in findings}, findings


@pytest.mark.parametrize("code", sorted(c for c, r in RULES.items() if r.scope in DOC_SCOPES))
def test_passing_example_is_clean(code, tmp_path, planlint):
    findings = _lint(tmp_path, planlint, RULES[code].sections()["passes"])
    assert findings == [], findings


def test_explain_prints_rationale_and_both_examples(planlint):
    result = planlint("explain", "PL102")
    assert result.status == 0
    assert "PL102 dataset-release-floating" in result.out
    assert "Example (fails):" in result.out and "Example (passes):" in result.out
    assert "release: latest" in result.out
    assert "fixable" in result.out


def test_explain_accepts_names_and_rejects_unknown(planlint):
    assert planlint("explain", "dataset-release-floating").out == explain_text(RULES["PL102"])
    result = planlint("explain", "PL999")
    assert result.status == 2 and "unknown rule" in result.err


def test_rules_json_lists_every_rule(planlint):
    result = planlint("rules", "--format", "json")
    rows = json.loads(result.out)
    assert [r["code"] for r in rows] == sorted(RULES)
    assert {"code", "name", "severity", "fixable", "summary"} <= set(rows[0])
