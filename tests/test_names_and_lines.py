"""Rule names wherever codes go, suppressions that say when they do nothing, lines as editors count them
(issue 12, items 7 and 11)."""

from __future__ import annotations

import pytest

from conftest import REFERENCE_PLAN, write

PLAN = REFERENCE_PLAN.read_text(encoding="utf-8")
UNFROZEN = PLAN.replace("    frozen: true\n", "    frozen: false\n")  # PL205 eval-not-frozen


def _findings(result):
    return [(f["line"], f["code"]) for f in result.json["findings"]]


def test_a_suppression_may_name_the_rule(tmp_path, planlint):
    write(tmp_path / "p.yaml", UNFROZEN.replace("    frozen: false\n", "    frozen: false  # planlint: disable=eval-not-frozen -- eval rotates weekly\n"))
    result = planlint("--format", "json", "p.yaml", cwd=tmp_path)
    assert _findings(result) == [] and result.status == 0, result


def test_a_file_suppression_may_name_the_rule_in_any_case(tmp_path, planlint):
    write(tmp_path / "p.yaml", "# planlint: disable-file=Eval-Not-Frozen, PL305 -- rotates weekly\n" + UNFROZEN)
    result = planlint("--format", "json", "p.yaml", cwd=tmp_path)
    assert [c for _, c in _findings(result)] == ["PL010"], result  # PL305 is not needed; the name was
    assert "does not need PL305" in result.json["findings"][0]["message"]


@pytest.mark.parametrize("written", ["PL999", "eval-not-frozn", "PL2"])
def test_a_suppression_naming_no_rule_is_pl010_saying_so(tmp_path, planlint, written):
    write(tmp_path / "p.yaml", UNFROZEN.replace("    frozen: false\n", f"    frozen: false  # planlint: disable={written} -- x\n"))
    result = planlint("--format", "json", "p.yaml", cwd=tmp_path)
    assert sorted(c for _, c in _findings(result)) == ["PL010", "PL205"], result
    message = next(f["message"] for f in result.json["findings"] if f["code"] == "PL010")
    assert "names no rule" in message and written in message and "unneeded" not in message


def test_a_suppression_naming_nothing_is_pl010(tmp_path, planlint):
    write(tmp_path / "p.yaml", PLAN.replace("kind: ExperimentPlan\n", "kind: ExperimentPlan  # planlint: disable= -- x\n"))
    result = planlint("--format", "json", "p.yaml", cwd=tmp_path)
    assert [c for _, c in _findings(result)] == ["PL010"], result
    assert "names no rule" in result.json["findings"][0]["message"]


def test_a_comment_only_line_covers_itself_and_the_next(tmp_path, planlint):
    """A finding placed at 1:1 (a missing top-level key) is silenced by a suppression on line 1."""
    text = "# planlint: disable=PL401 -- baseline is measured in the launch job\n" + PLAN[PLAN.index("apiVersion"):PLAN.index("baseline:")] + PLAN[PLAN.index("decision:"):]
    write(tmp_path / "p.yaml", text)
    result = planlint("--format", "json", "p.yaml", cwd=tmp_path)
    assert _findings(result) == [], result
    # ... and the line below it, as before
    write(tmp_path / "q.yaml", UNFROZEN.replace("    frozen: false\n", "    # planlint: disable=PL205 -- rotates weekly\n    frozen: false\n"))
    assert _findings(planlint("--format", "json", "q.yaml", cwd=tmp_path)) == []


def test_ignore_and_select_take_rule_names(tmp_path, planlint):
    write(tmp_path / "p.yaml", UNFROZEN)
    assert _findings(planlint("--format", "json", "--ignore", "eval-not-frozen", "p.yaml", cwd=tmp_path)) == []
    result = planlint("--format", "json", "--ignore", "spend-over-limit", "p.yaml", cwd=tmp_path)
    assert [c for _, c in _findings(result)] == ["PL205"], result
    result = planlint("--format", "json", "--select", "eval-not-frozen,PL1", "p.yaml", cwd=tmp_path)
    assert [c for _, c in _findings(result)] == ["PL205"], result
    result = planlint("--ignore", "no-such-rule", "p.yaml", cwd=tmp_path)
    assert result.status == 2 and "no-such-rule" in result.err


def test_config_takes_rule_names(tmp_path, planlint):
    write(tmp_path / "p.yaml", UNFROZEN)
    write(tmp_path / ".planlint.yaml", "severity: {eval-not-frozen: warning}\n")
    result = planlint("--format", "json", "p.yaml", cwd=tmp_path)
    assert [(f["code"], f["severity"]) for f in result.json["findings"]] == [("PL205", "warning")], result
    write(tmp_path / ".planlint.yaml", "ignore: [eval-not-frozen]\n")
    assert _findings(planlint("--format", "json", "p.yaml", cwd=tmp_path)) == []
    write(tmp_path / ".planlint.yaml", "severity: {eval-not-frozn: warning}\n")
    assert planlint("p.yaml", cwd=tmp_path).status == 2


def test_explain_takes_a_name_in_any_case(planlint):
    assert planlint("explain", "Eval-Not-Frozen").out.startswith("PL205 eval-not-frozen")
    assert planlint("explain", "pl205").out.startswith("PL205 eval-not-frozen")


# --------------------------------------------------------------------------- item 11: lines


@pytest.mark.parametrize("odd", ["\u2028", "\u2029", "\x85"])
def test_line_separators_in_a_value_do_not_move_later_findings(tmp_path, planlint, odd):
    text = PLAN.replace("summary: Refund only eligible orders inside the 30-day window", f'summary: "Refund only{odd}eligible{odd}orders inside"').replace(
        "    frozen: true\n", "    frozen: false\n"
    )
    write(tmp_path / "p.yaml", text)
    result = planlint("--format", "json", "p.yaml", cwd=tmp_path)
    expected_line = next(n for n, line in enumerate(UNFROZEN.split("\n"), 1) if "frozen: false" in line)
    assert _findings(result) == [(expected_line, "PL205")], result
    finding = result.json["findings"][0]
    assert finding["column"] == 13
    github = planlint("--format", "github", "p.yaml", cwd=tmp_path).out
    assert f"line={expected_line},col=13," in github


def test_line_separators_before_a_suppression_and_an_excerpt(tmp_path, planlint):
    text = PLAN.replace("summary: Refund only eligible orders inside the 30-day window", 'summary: "Refund only\u2028eligible"').replace(
        "    frozen: true\n", "    frozen: false  # planlint: disable=PL205 -- rotates weekly\n"
    )
    write(tmp_path / "p.yaml", text)
    assert _findings(planlint("--format", "json", "p.yaml", cwd=tmp_path)) == []
    write(tmp_path / "q.yaml", text.replace("  # planlint: disable=PL205 -- rotates weekly", ""))
    out = planlint("q.yaml", cwd=tmp_path).out
    assert "frozen: false" in out.split("PL205", 1)[1].splitlines()[1]  # the excerpt shows the right line


def test_a_block_scalar_name_with_a_newline_fails_the_slug_pattern(tmp_path, planlint):
    text = PLAN.replace("  name: retail-refund-window          # slug ^[a-z0-9][a-z0-9-]{0,62}$, unique across the repo\n", "  name: |\n    retail-refund-window\n")
    write(tmp_path / "a.yaml", text)
    write(tmp_path / "b.yaml", PLAN)
    result = planlint("--format", "json", "a.yaml", "b.yaml", cwd=tmp_path)
    assert ("PL003", "metadata.name") in [(f["code"], f["yaml_path"]) for f in result.json["findings"]], result
    assert result.status == 1
