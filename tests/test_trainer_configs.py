"""The run family for the open trainers (TRL, verl, axolotl): each case is a repository.

A case under fixtures/trainers/<trainer>/NAME.case is a plan fragment (laid
over the reference plan), then the repository's other files, each after a
line `--- PATH` (the trainer's YAML, its launch script, the reward code,
...). `--- PATH < upstream/FILE` copies a trainer's own example verbatim
(fixtures/trainers/upstream/, sources in SOURCES.md). Expected findings are
marked on their line, `# expect: PL903`, in the plan and in every file; for a
verbatim upstream copy, by a directive in the plan fragment,
`# expect-in: PATH:LINE PLnnn`. `# expect-note: TEXT` says a note must hold
TEXT. The test compares the exact set of (path, line, code).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from conftest import FIXTURES
from plan_overlay import build
from test_rules_fixtures import expected

CASES = sorted((FIXTURES / "trainers").glob("*/*.case"))
UPSTREAM = FIXTURES / "trainers" / "upstream"
_SECTION = re.compile(r"^--- (\S+)(?:\s+<\s+(\S+))?\s*$", re.M)
_EXPECT_IN = re.compile(r"^#\s*expect-in:\s*(\S+):(\d+)\s+(PL\d{3})\s*$", re.M)
_EXPECT_NOTE = re.compile(r"^#\s*expect-note:\s*(.+?)\s*$", re.M)


def read_case(case: Path) -> tuple[str, dict[str, str], Counter]:
    """(the plan, {path: text}, the expected (path, line, code)) of a case."""
    parts = _SECTION.split(case.read_text(encoding="utf-8"))
    fragment, files, want = parts[0], {}, Counter()
    for path, source, text in zip(parts[1::3], parts[2::3], parts[3::3]):
        files[path] = (UPSTREAM / Path(source).name).read_text(encoding="utf-8") if source else text.lstrip("\n")
        if not source:
            want.update({(path, line, code): n for (line, code), n in expected(files[path]).items()})
    plan = build(fragment)
    want.update({("plans/plan.yaml", line, code): n for (line, code), n in expected(plan).items()})
    for path, line, code in _EXPECT_IN.findall(fragment):
        want[(path, int(line), code)] += 1
    return plan, files, want


def lay_out(root: Path, case: Path) -> tuple[Counter, list[str]]:
    plan, files, want = read_case(case)
    (root / ".git").mkdir(parents=True)
    (root / "plans").mkdir()
    (root / "plans" / "plan.yaml").write_text(plan, encoding="utf-8")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return want, _EXPECT_NOTE.findall(case.read_text(encoding="utf-8").split("\n---", 1)[0])


def _report(result) -> str:
    return "\n".join(f"{f['path']}:{f['line']}:{f['column']} {f['code']} {f['severity']} {f['message']}" for f in result.json["findings"]) + \
        "\nnotes:\n" + "\n".join(result.json.get("notes", []))


def _no_data_checks() -> str:
    """The data rules' codes: the cases' split files are not what they test (and hf:// ones would be fetched)."""
    from planlint.rules import RULES

    return ",".join(code for code, rule in RULES.items() if rule.scope == "data")


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_case_findings(case: Path, tmp_path, planlint):
    want, notes = lay_out(tmp_path, case)
    result = planlint("--format", "json", "--no-cache", "--ignore", _no_data_checks(), "plans/", cwd=tmp_path)
    assert result.status in (0, 1), result
    found = Counter((f["path"], f["line"], f["code"]) for f in result.json["findings"])
    assert found == want, _report(result)
    for note in notes:
        assert any(note in text for text in result.json.get("notes", [])), (note, _report(result))


def test_every_trainer_has_an_upstream_case_and_every_code_fires():
    for trainer in ("trl", "verl", "axolotl"):
        cases = [c for c in CASES if c.parent.name == trainer]
        assert any("< upstream/" in c.read_text(encoding="utf-8") for c in cases), trainer
        codes = set()
        for case in cases:
            codes |= {code for _, _, code in read_case(case)[2]}
        assert {"PL901", "PL902", "PL903"} <= codes, (trainer, codes)
