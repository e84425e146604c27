"""JUnit XML: one testcase per plan, one `<failure>` per error-level finding.

A plan with only warnings passes (as planlint's exit status does); its
warnings are listed in the testcase's `<system-out>` so they stay visible.
Text goes through `messages.sanitize`, so no control character can make the
XML invalid.
"""

from __future__ import annotations

from planlint.engine import Finding, Report
from planlint.messages import sanitize


def _line(f: Finding) -> str:
    return f"{f.path}:{f.line}:{f.column}: {f.severity} {f.code} {f.message} [{f.name}]"


def format_junit(report: Report, **_: object) -> str:
    import xml.etree.ElementTree as ET

    by_path: dict[str, list[Finding]] = {path: [] for path in report.paths}
    for finding in report.findings:
        by_path.setdefault(finding.path, []).append(finding)  # a deleted plan has findings but no file
    failing = sum(1 for findings in by_path.values() if any(f.severity == "error" for f in findings))
    counts = {"tests": str(len(by_path)), "failures": str(failing), "errors": "0", "skipped": "0"}
    suites = ET.Element("testsuites", {"name": "planlint", **counts})
    suite = ET.SubElement(suites, "testsuite", {"name": "planlint", **counts})
    for path, findings in by_path.items():
        case = ET.SubElement(suite, "testcase", {"classname": "planlint", "name": sanitize(path), "file": sanitize(path)})
        for f in findings:
            if f.severity == "error":
                failure = ET.SubElement(case, "failure", {"type": f.code, "message": sanitize(f"{f.code} {f.name}: {f.message}")})
                failure.text = sanitize(_line(f))
        warnings = [sanitize(_line(f)) for f in findings if f.severity != "error"]
        if warnings:
            ET.SubElement(case, "system-out").text = "\n".join(warnings)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
