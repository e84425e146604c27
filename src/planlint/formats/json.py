"""The JSON format: version, file count, findings and the error and warning counts; in diff mode, changes and committed spend."""

from __future__ import annotations

from planlint.core.messages import json_text
from planlint.core.model import Report


def format_json(report: Report, **_: object) -> str:
    payload = {
        "version": 1,
        "files": report.files,
        "findings": [f.to_dict() for f in report.findings],
        "summary": {"errors": report.errors, "warnings": report.warnings},
    }
    if report.changes is not None:  # diff mode: what the pull request changes (additive keys)
        payload["changes"] = report.changes
        payload["committed_spend"] = report.committed_spend or {}
    return json_text(payload) + "\n"
