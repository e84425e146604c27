"""GitLab Code Quality: the JSON array of issues a merge request's Code Quality widget reads.

    [{"description": "...", "check_name": "PL102 dataset-release-floating", "fingerprint": "...",
      "severity": "major", "location": {"path": "plans/a.yaml", "lines": {"begin": 31, "end": 31},
                                         "positions": {"begin": {"line": 31, "column": 12}, "end": {...}}}}]

The format is the subset of the Code Climate spec GitLab documents
(docs.gitlab.com, "Code Quality report format"); each entry satisfies
GitLab's own schema for one issue (`app/validators/json_schemas/codeclimate.json`
in gitlab-org/gitlab, vendored into the tests). Severities: an error is
`major`, a warning `minor`. Fingerprints are SARIF's (path, rule, YAML path,
rank): GitLab compares a merge request's issues with the target branch's by
fingerprint, so an issue stays the same issue when unrelated lines move.
Paths are relative to the repository root, as GitLab links them. Notes have
no place in the format and stay on standard error.
"""

from __future__ import annotations

from planlint.core.messages import json_text, sanitize
from planlint.core.model import Report
from planlint.core.paths import repo_relative
from planlint.formats.sarif import fingerprints

SEVERITY = {"error": "major", "warning": "minor"}


def format_gitlab(report: Report, **_: object) -> str:
    issues = []
    relative: dict[str, str] = {}
    for finding, fingerprint in zip(report.findings, fingerprints(report.findings)):
        if finding.path not in relative:
            relative[finding.path] = sanitize(repo_relative(finding.path) or finding.path)
        issues.append({
            "description": f"{finding.code}: {finding.message}",
            "check_name": f"{finding.code} {finding.name}",
            "fingerprint": fingerprint,
            "severity": SEVERITY.get(finding.severity, "minor"),
            "location": {
                "path": relative[finding.path],
                "lines": {"begin": finding.line, "end": finding.end_line},
                "positions": {
                    "begin": {"line": finding.line, "column": finding.column},
                    "end": {"line": finding.end_line, "column": finding.end_column},
                },
            },
        })
    return json_text(issues) + "\n"
