"""Fixture plans with their expected findings marked inline (`# expect: PL102`).

A marker names the codes expected on its line; every finding must be expected
and every expectation found, so each fixture also shows the other rules staying
quiet. `# fixture-config: {...}` on the first line gives the run a config;
`# fixture-catalog: FILE` (relative to the fixture) a catalog for PL105/PL106.
"""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from conftest import FIXTURES

RULE_FIXTURES = sorted((FIXTURES / "rules").glob("*.yaml"))
_MARK = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")


def expected(text: str) -> Counter:
    found = Counter()
    for number, line in enumerate(text.splitlines(), start=1):
        match = _MARK.search(line)
        if match:
            for code in match.group(1).split(","):
                if code.strip():
                    found[(number, code.strip())] += 1
    return found


@pytest.mark.parametrize("fixture", RULE_FIXTURES, ids=lambda p: p.stem)
def test_fixture_findings(fixture: Path, tmp_path, planlint):
    text = fixture.read_text(encoding="utf-8")
    config = re.match(r"#\s*fixture-config:\s*(.*)", text)
    if config:
        (tmp_path / ".planlint.yaml").write_text(config.group(1) + "\n", encoding="utf-8")
    catalog = re.match(r"#\s*fixture-catalog:\s*(\S+)", text)
    if catalog:  # PL105/PL106: the catalog the run checks against
        shutil.copy(fixture.parent / catalog.group(1), tmp_path / "catalog.yaml")
        (tmp_path / ".planlint.yaml").write_text("catalog: catalog.yaml\n", encoding="utf-8")
    shutil.copy(fixture, tmp_path / fixture.name)
    result = planlint("--format", "json", fixture.name, cwd=tmp_path)
    assert result.status in (0, 1), result
    actual = Counter((f["line"], f["code"]) for f in result.json["findings"])
    assert actual == expected(text), "\n".join(f"{f['line']}:{f['column']} {f['code']} {f['message']}" for f in result.json["findings"])
    assert result.status == (1 if any(f["severity"] == "error" for f in result.json["findings"]) else 0)


def test_every_plan_rule_has_a_fixture_or_example():
    """Each rule fires in at least one fixture (docstring examples cover the rest)."""
    from planlint.rules import RULES

    seen = set()
    for fixture in RULE_FIXTURES + sorted((FIXTURES / "run").rglob("*.toml")):  # run configs: test_run_configs.py
        seen |= {code for _, code in expected(fixture.read_text(encoding="utf-8"))}
    missing = {c for c, r in RULES.items() if r.scope == "plan"} - seen
    assert not missing, f"no fixture fires {sorted(missing)}"
