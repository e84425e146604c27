"""docs/rules/PLxxx.md: one page per rule, generated from its docstring, never stale.

SARIF's `helpUri` points at the page, and the page says what `planlint explain` says.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from conftest import ROOT
from planlint.formats.rule_docs import DOCS_URI, help_uri, pages
from planlint.rules import RULES

RULE_DOCS = ROOT / "docs" / "rules"
HINT = "run: python scripts/update_rule_docs.py"


def test_every_rule_has_a_fresh_page_and_nothing_else_is_there():
    wanted = pages(RULES.values())
    present = {path.name for path in RULE_DOCS.glob("*")}
    assert present == set(wanted), f"docs/rules/ differs from the rules: {sorted(present ^ set(wanted))}; {HINT}"
    stale = [name for name, text in wanted.items() if (RULE_DOCS / name).read_text(encoding="utf-8") != text]
    assert not stale, f"stale pages {stale}; {HINT}"


def test_the_staleness_check_sees_an_edited_docstring(monkeypatch):
    rule = RULES["PL102"]
    monkeypatch.setattr(rule, "doc", rule.doc.replace("floating", "drifting", 1))
    assert pages(RULES.values())["PL102.md"] != (RULE_DOCS / "PL102.md").read_text(encoding="utf-8")


def test_the_script_regenerates_the_pages(tmp_path):
    import shutil

    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "src", copy / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    shutil.copytree(ROOT / "scripts", copy / "scripts")
    (copy / "docs" / "rules").mkdir(parents=True)
    (copy / "docs" / "rules" / "PL999.md").write_text("a rule that no longer exists\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, str(copy / "scripts" / "update_rule_docs.py")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    written = {p.name: p.read_text(encoding="utf-8") for p in (copy / "docs" / "rules").glob("*")}
    assert written == {p.name: p.read_text(encoding="utf-8") for p in RULE_DOCS.glob("*")}


def _content(lines: list[str], *, markdown: bool) -> list[str]:
    """Lines as text: no blank lines, indentation, code fences, heading marks, backticks or trailing colons."""
    out, fenced = [], False
    for line in lines:
        if markdown and line.startswith("```"):
            fenced = not fenced
            continue
        if markdown and not fenced and (line.startswith(("<!--", "Scope: ")) or line == "## Silencing"):
            continue
        text = line.strip()
        if markdown and not fenced:
            text = text.lstrip("#").strip().replace("`", "")
        elif not markdown:
            text = text.replace("`", "") if not line.startswith("    ") else text
        if text:
            out.append(text.rstrip(":"))
    return out


@pytest.mark.parametrize("code", sorted(RULES))
def test_explain_and_the_page_say_the_same(code, planlint):
    explained = planlint("explain", code).out
    page = (RULE_DOCS / f"{code}.md").read_text(encoding="utf-8")
    page_lines = _content(page.splitlines(), markdown=True)
    explain_lines = _content(explained.splitlines(), markdown=False)
    assert page_lines == explain_lines, code


def test_sarif_links_each_rule_to_its_page(planlint, tmp_path):
    (tmp_path / "plans").mkdir()
    sarif = json.loads(planlint("--format", "sarif", "plans/", cwd=tmp_path).out)
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    assert len(rules) == len(RULES)
    uris = [rule["helpUri"] for rule in rules]
    assert len(set(uris)) == len(uris)  # one page each, not one link for all
    for rule in rules:
        assert rule["helpUri"] == help_uri(rule["id"]) == f"{DOCS_URI}{rule['id']}.md"
        assert (RULE_DOCS / f"{rule['id']}.md").is_file()
        assert re.fullmatch(r"https://github\.com/planlint/planlint/blob/main/docs/rules/PL\d{3}\.md", rule["helpUri"])


def test_pl801_carries_what_code_scanning_reads_for_security_rules(planlint, tmp_path):
    (tmp_path / "plans").mkdir()
    sarif = json.loads(planlint("--format", "sarif", "plans/", cwd=tmp_path).out)
    rules = {rule["id"]: rule for rule in sarif["runs"][0]["tool"]["driver"]["rules"]}
    properties = rules["PL801"]["properties"]
    severity = properties["security-severity"]
    assert isinstance(severity, str) and 0.0 < float(severity) <= 10.0  # GitHub reads a number in a string
    assert properties["precision"] in ("very-high", "high", "medium", "low")
    assert "security" in properties["tags"]
    others = [code for code, rule in rules.items() if "security-severity" in rule["properties"]]
    assert others == ["PL801"]
