"""The spec's rule table (docs/plan-format.md, "## 2. Rules") agrees with the registry.

The table is written by hand (its "fires when" column says more than a rule's
summary), so this test holds its codes, names and severities equal to what
`planlint rules --format json` prints: every registered rule has exactly one
row, and no row names a rule that is not registered.
"""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from conftest import ROOT

SPEC = ROOT / "docs" / "plan-format.md"
HEADER = "| code | name | sev | fires when |"
LETTERS = {"E": "error", "W": "warning"}

# A row's first three cells. The severity cell is the registered (default)
# severity, optionally followed by the other one a finding may take instead:
# `E`, `W`, `E/W` (either, by case), `E (W while metadata.status is draft)`.
ROW = re.compile(r"\| (?P<code>PL\d{3}) \| (?P<name>[a-z0-9]+(?:-[a-z0-9]+)*) \| (?P<sev>[^|]+?) \| .+\|")
SEVERITY = re.compile(r"(?P<default>[EW])(?:/(?P<either>[EW])| \((?P<while>[EW]) while [^()]+\))?")


def severity_cell(cell: str) -> tuple[str, str | None]:
    """(registered severity, the other severity a finding may take or None) of a sev cell."""
    match = SEVERITY.fullmatch(cell)
    if match is None:
        raise ValueError(f"severity {cell!r} is none of E, W, E/W, W/E, 'E (W while ...)', 'W (E while ...)'")
    default = LETTERS[match["default"]]
    other = match["either"] or match["while"]
    if other is not None and LETTERS[other] == default:
        raise ValueError(f"severity {cell!r} names the same severity twice")
    return default, LETTERS[other] if other else None


def table_rows(text: str) -> list[tuple[int, str]]:
    """(line number, line) of each row of the rule table, below its header and separator."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == HEADER]
    assert len(starts) == 1, f"docs/plan-format.md should hold one rule table headed {HEADER!r}, found {len(starts)}"
    first = starts[0] + 1
    assert re.fullmatch(r"\|(-+\|){4}", lines[first].strip()), f"line {first + 1}: the header's separator row"
    rows = []
    for number, line in enumerate(lines[first + 1:], start=first + 2):
        if not line.startswith("|"):
            break
        rows.append((number, line))
    return rows


def parsed_rows(text: str) -> list[tuple[int, str, str, str]]:
    """(line, code, name, registered severity) of every row; a row of another shape fails."""
    out = []
    for number, line in table_rows(text):
        match = ROW.fullmatch(line.rstrip())
        assert match, f"docs/plan-format.md:{number}: not a rule row (| PLnnn | kebab-name | sev | fires when |): {line[:80]!r}"
        try:
            severity, _ = severity_cell(match["sev"])
        except ValueError as exc:
            raise AssertionError(f"docs/plan-format.md:{number} ({match['code']}): {exc}") from None
        out.append((number, match["code"], match["name"], severity))
    return out


def disagreements(text: str, registered: dict[str, tuple[str, str]]) -> list[str]:
    """What the table in `text` says that the registry (code -> (name, severity)) does not."""
    problems = []
    seen: dict[str, int] = {}
    for number, code, name, severity in parsed_rows(text):
        if code in seen:
            problems.append(f"line {number}: {code} has a second row (first at line {seen[code]})")
            continue
        seen[code] = number
        if code not in registered:
            problems.append(f"line {number}: {code} is not a registered rule")
        elif (name, severity) != registered[code]:
            problems.append(f"line {number}: {code} is {name} ({severity}) here, {registered[code][0]} ({registered[code][1]}) in the registry")
    problems += [f"{code} ({registered[code][0]}) has no row" for code in registered if code not in seen]
    return problems


@pytest.fixture(scope="module")
def registered() -> dict[str, tuple[str, str]]:
    """code -> (name, severity), as `planlint rules --format json` prints them."""
    import json

    from planlint.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["rules", "--format", "json"]) == 0
    return {row["code"]: (row["name"], row["severity"]) for row in json.loads(out.getvalue())}


def test_spec_rule_table_matches_planlint_rules_json(registered):
    problems = disagreements(SPEC.read_text(encoding="utf-8"), registered)
    assert not problems, "docs/plan-format.md's rule table disagrees with `planlint rules --format json`:\n" + "\n".join(problems)


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("E", ("error", None)),
        ("W", ("warning", None)),
        ("E/W", ("error", "warning")),
        ("W/E", ("warning", "error")),
        ("E (W while `metadata.status` is `draft`)", ("error", "warning")),
        ("W (E while the plan is approved)", ("warning", "error")),
    ],
)
def test_severity_cells_the_table_uses_are_understood(cell, expected):
    assert severity_cell(cell) == expected


@pytest.mark.parametrize("cell", ["error", "E/E", "E (E while draft)", "E (W)", "W/", "e", "E, W"])
def test_a_severity_cell_of_another_form_is_refused(cell):
    with pytest.raises(ValueError):
        severity_cell(cell)


def test_the_check_catches_each_kind_of_drift(registered):
    """A row removed, repeated, of an unknown code, with a wrong name or severity, each fails the test."""
    text = SPEC.read_text(encoding="utf-8")
    line = table_rows(text)[0][1]
    code = ROW.fullmatch(line)["code"]
    name, severity = registered[code]
    other = "W" if severity == "error" else "E"

    def drift(changed: str) -> list[str]:
        return disagreements(text.replace(line + "\n", changed + "\n" if changed else "", 1), registered)

    assert disagreements(text, registered) == []
    assert drift("") == [f"{code} ({name}) has no row"]
    assert drift(line + "\n" + line)[0].endswith(f"{code} has a second row (first at line {table_rows(text)[0][0]})")
    unknown = drift(line.replace(f"| {code} |", "| PL999 |", 1))
    assert [p.rsplit(": ", 1)[-1] for p in unknown] == ["PL999 is not a registered rule", f"{code} ({name}) has no row"]
    assert "not-its-name" in drift(line.replace(f"| {name} |", "| not-its-name |", 1))[0]
    with_severity = lambda cell: re.sub(r"^(\| PL\d{3} \| [a-z0-9-]+ \| )[^|]+", rf"\g<1>{cell} ", line)  # noqa: E731
    assert drift(with_severity(other))[0].endswith("in the registry")
    assert drift(with_severity(f"{other}/{severity[0].upper()}"))[0].endswith("in the registry")  # the first letter is the registered one
    assert drift(with_severity(f"{severity[0].upper()}/{other}")) == []
    with pytest.raises(AssertionError, match="E/E"):  # a severity cell of no known form fails loudly
        drift(with_severity("E/E"))
