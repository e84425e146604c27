"""The JSON format: version, file count, findings, the error and warning counts and the notes; in diff mode,
changes and committed spend; missing_inputs when a plan lists some."""

from __future__ import annotations

from planlint.core.messages import json_text
from planlint.core.model import Report


def format_json(report: Report, **_: object) -> str:
    payload = {
        "version": 1,
        "files": report.files,
        "findings": [f.to_dict() for f in report.findings],
        "summary": {"errors": report.errors, "warnings": report.warnings},
        # What planlint could not check (data checks skipped, rows unreadable,
        # a directory without plans): additive to version 1.
        "notes": list(report.notes),
    }
    if report.changes is not None:  # diff mode: what the pull request changes (additive keys)
        payload["changes"] = report.changes
        payload["committed_spend"] = report.committed_spend or {}
    if report.missing_inputs:  # additive: only when a plan lists some (docs/plan-format.md, section 5)
        payload["missing_inputs"] = {path: list(items) for path, items in report.missing_inputs.items()}
    for key in ("catalog_added", "suppressions_added"):  # diff mode only: additive keys
        if key in report.review:
            payload[key] = report.review[key]
    return json_text(payload) + "\n"
