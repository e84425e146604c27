"""JUnit XML: a `<testsuite>` per plan, a `<testcase>` per finding.

The shape ESLint's junit formatter emits, and what JUnit readers expect: one
`<failure>` per testcase (junit2html and `junitparser` count testcases, and a
second `<failure>` in one testcase vanishes from their reports).

* A plan with findings is a testsuite named by its path; each finding is a
  testcase (`classname` the path, `name` "CODE rule-name at LINE:COL").
  An error-level finding is a failing testcase; a warning is a passing one
  (as planlint's exit status has it) whose `<system-out>` holds the warning.
* A clean plan is a testsuite with one passing testcase named by its path.
* A finding about a plan that no longer exists (PL704) has its own testsuite.
* What planlint could not check (the report's notes: a split it could not
  read, a missing extra, a byte cap or time budget reached) is a testsuite
  named "planlint notes" with one skipped testcase per note, the note its
  `<skipped message>`: nothing passes silently in this format either.

Every attribute is one the Jenkins `junit-10.xsd` allows (pytest's own output
is checked against the same schema). Text goes through `messages.sanitize`,
so no control character can make the XML invalid.
"""

from __future__ import annotations

from planlint.core.messages import sanitize
from planlint.core.model import Finding, Report


def _line(f: Finding) -> str:
    return f"{f.path}:{f.line}:{f.column}: {f.severity} {f.code} {f.message} [{f.name}]"


def _counts(tests: int, failures: int) -> dict[str, str]:
    return {"tests": str(tests), "failures": str(failures), "errors": "0"}


def format_junit(report: Report, **_: object) -> str:
    import xml.etree.ElementTree as ET

    by_path: dict[str, list[Finding]] = {path: [] for path in report.paths}
    for finding in report.findings:
        by_path.setdefault(finding.path, []).append(finding)  # a deleted plan has findings but no file
    total_tests = sum(max(1, len(findings)) for findings in by_path.values()) + len(report.notes)
    suites = ET.Element("testsuites", {"name": "planlint", **_counts(total_tests, report.errors), "time": "0"})
    for path, findings in by_path.items():
        name = sanitize(path)
        failures = sum(1 for f in findings if f.severity == "error")
        suite = ET.SubElement(
            suites, "testsuite", {"name": name, **_counts(max(1, len(findings)), failures), "skipped": "0", "time": "0", "file": name}
        )
        if not findings:
            ET.SubElement(suite, "testcase", {"classname": name, "name": name, "time": "0"})
            continue
        for f in findings:
            case = ET.SubElement(
                suite, "testcase", {"classname": name, "name": sanitize(f"{f.code} {f.name} at {f.line}:{f.column}"), "time": "0"}
            )
            if f.severity == "error":
                failure = ET.SubElement(case, "failure", {"type": f.code, "message": sanitize(f"{f.code} {f.name}: {f.message}")})
                failure.text = sanitize(_line(f))
            else:
                ET.SubElement(case, "system-out").text = sanitize(_line(f))
    if report.notes:
        notes = ET.SubElement(suites, "testsuite", {"name": "planlint notes", **_counts(len(report.notes), 0),
                                                    "skipped": str(len(report.notes)), "time": "0"})
        for number, note in enumerate(report.notes, 1):
            case = ET.SubElement(notes, "testcase", {"classname": "planlint notes", "name": f"note {number}", "time": "0"})
            ET.SubElement(case, "skipped", {"message": sanitize(note)})
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
