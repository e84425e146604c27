"""planlint's JUnit XML, read by the programs that consume JUnit XML.

* the Jenkins `junit-10.xsd` (tests/consumers/junit-10.xsd, see the README
  there), checked with `xmlschema`, as pytest checks its own output;
* `junit2html`, which renders one `<failure>` per testcase: every finding
  must be on its page;
* `junitparser` (its `merge` command and its reader), whose counts must be
  the findings' counts.

All three are in the `test` extra, so CI runs them.
"""

from __future__ import annotations

import html
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import write
from plan_overlay import REFERENCE

XSD = Path(__file__).resolve().parent / "consumers" / "junit-10.xsd"

# five error-level findings and one warning in one plan
BROKEN = (
    REFERENCE.replace("name: ", "name: broken-", 1)
    .replace('release: "2026.11.03"', "release: latest")
    .replace("max_spend: 250", 'max_spend: "$250"')
    .replace("currency: USD", "currency: usd")
    .replace("version: 1.4.2", "version: latest")
    .replace("frozen: true", "frozen: false")
)


@pytest.fixture
def junit_file(planlint, tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    write(tmp_path / "plans" / "clean.yaml", REFERENCE)
    write(tmp_path / "plans" / "broken.yaml", BROKEN)
    result = planlint("plans/", "--format", "json", "--output", "junit=report.xml", cwd=tmp_path)
    assert result.status == 1
    import json

    findings = json.loads(result.out)["findings"]
    return tmp_path / "report.xml", findings


def test_the_fixture_has_several_errors_in_one_plan(junit_file):
    _, findings = junit_file
    errors = [f for f in findings if f["severity"] == "error"]
    assert len(errors) >= 5 and {f["path"] for f in errors} == {"plans/broken.yaml"}
    assert any(f["severity"] == "warning" for f in findings)


def test_valid_against_jenkins_junit_10_xsd(junit_file, planlint, tmp_path):
    xmlschema = pytest.importorskip("xmlschema", reason="xmlschema is not installed (pip install -e '.[test]')")
    schema = xmlschema.XMLSchema(str(XSD))
    path, _ = junit_file
    schema.validate(str(path))
    # a run with no plan, and one with a deleted plan's finding, too
    from planlint.core.model import Finding, Report
    from planlint.formats.junit import format_junit

    schema.validate(format_junit(Report()))
    gone = Finding("PL704", "active-plan-removed", "error", "plans/gone.yaml", 1, 1, 1, 1, "removed \x1b", "")
    schema.validate(format_junit(Report(files=1, paths=["plans/a.yaml"], findings=[gone])))


def test_the_schema_is_strict_enough_to_catch_the_old_shape():
    """What planlint emitted before: `file` on <testcase>, `skipped` on <testsuites>."""
    xmlschema = pytest.importorskip("xmlschema", reason="xmlschema is not installed (pip install -e '.[test]')")
    old = (
        '<testsuites name="planlint" tests="1" failures="0" errors="0" skipped="0">'
        '<testsuite name="planlint" tests="1" failures="0" errors="0" skipped="0">'
        '<testcase classname="planlint" name="plans/a.yaml" file="plans/a.yaml"/></testsuite></testsuites>'
    )
    assert not xmlschema.XMLSchema(str(XSD)).is_valid(old)


def test_junit2html_shows_every_finding(junit_file, tmp_path):
    pytest.importorskip("junit2htmlreport", reason="junit2html is not installed (pip install -e '.[test]')")
    path, findings = junit_file
    out = tmp_path / "report.html"
    proc = subprocess.run([sys.executable, "-m", "junit2htmlreport", str(path), str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    page = html.unescape(out.read_text(encoding="utf-8"))
    for f in findings:
        assert f"{f['code']} {f['name']} at {f['line']}:{f['column']}" in page, f
        assert f["message"] in page, f
    assert "plans/clean.yaml" in page


def test_junitparser_counts_match_the_findings(junit_file, tmp_path):
    pytest.importorskip("junitparser", reason="junitparser is not installed (pip install -e '.[test]')")
    from junitparser import JUnitXml

    path, findings = junit_file
    errors = sum(1 for f in findings if f["severity"] == "error")
    notes = [s for s in JUnitXml.fromfile(str(path)) if s.name == "planlint notes"]  # what could not be checked: skipped
    skipped = sum(len(list(s)) for s in notes)
    merged = tmp_path / "merged.xml"
    proc = subprocess.run([sys.executable, "-m", "junitparser", "merge", str(path), str(merged)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    for xml in (JUnitXml.fromfile(str(path)), JUnitXml.fromfile(str(merged))):
        xml.update_statistics()
        assert (xml.tests, xml.failures, xml.errors) == (len(findings) + 1 + skipped, errors, 0)  # + the clean plan's testcase
        assert xml.skipped == skipped
        suites = {suite.name: suite for suite in xml if suite.name != "planlint notes"}
        assert set(suites) == {"plans/clean.yaml", "plans/broken.yaml"}
        cases = list(suites["plans/broken.yaml"])
        assert len(cases) == len(findings)
        assert sum(1 for case in cases if not case.is_passed) == errors
        assert [case.is_passed for case in suites["plans/clean.yaml"]] == [True]


def test_notes_are_skipped_testcases_valid_against_the_xsd_and_counted_by_junitparser(tmp_path):
    """What planlint could not check reaches JUnit readers too: one skipped testcase per note."""
    xmlschema = pytest.importorskip("xmlschema", reason="xmlschema is not installed (pip install -e '.[test]')")
    import xml.etree.ElementTree as ET

    from planlint.core.model import Report
    from planlint.formats.junit import format_junit

    notes = ["plans/a.yaml: splits.train.path: gs://b/t.jsonl: reading gs:// paths needs the optional extra: pip install 'planlint[gcs]' (gcsfs)",
             "plans/a.yaml: data checks stopped at data.max_bytes \x1b[31m <&>"]
    text = format_junit(Report(files=1, paths=["plans/a.yaml"], notes=notes))
    xmlschema.XMLSchema(str(XSD)).validate(text)
    root = ET.fromstring(text)
    skipped = root.findall(".//testcase/skipped")
    assert [s.get("message") for s in skipped][0] == notes[0]
    assert "<&>" in skipped[1].get("message") and "\x1b" not in skipped[1].get("message")
    suite = [s for s in root.iter("testsuite") if s.find(".//skipped") is not None][0]
    assert suite.get("skipped") == "2" and suite.get("failures") == "0" and suite.get("tests") == "2"
    assert root.get("tests") == "3" and root.get("failures") == "0"
    pytest.importorskip("junitparser", reason="junitparser is not installed (pip install -e '.[test]')")
    from junitparser import JUnitXml

    (tmp_path / "r.xml").write_text(text)
    xml = JUnitXml.fromfile(str(tmp_path / "r.xml"))
    assert sum(s.skipped for s in xml) == 2
