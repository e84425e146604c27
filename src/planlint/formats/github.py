"""GitHub Actions workflow commands: one `::error`/`::warning` annotation per finding.

    ::error file=plans/a.yaml,line=31,col=12,endLine=31,endColumn=18,title=PL102 dataset-release-floating::dataset.release 'latest' is floating ...

Escaping follows the runner (actions/toolkit `command.ts`): in the message
`%` first, then CR and LF; in properties also `:` and `,`. A message can
therefore never end the command early or start a new one.
"""

from __future__ import annotations

from planlint.core.messages import sanitize
from planlint.core.model import Finding, Report
from planlint.core.paths import repo_relative
from planlint.formats.text import summary_line


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: Finding) -> str:
    command = "error" if finding.severity == "error" else "warning"
    # A path with a line break or an escape cannot be annotated as it is: the
    # escaped form keeps the command on one line (and the message readable).
    path = sanitize(repo_relative(finding.path) or finding.path)
    props = {
        "file": path,
        "line": finding.line,
        "col": finding.column,
        "endLine": finding.end_line,
        "endColumn": finding.end_column,
        "title": f"{finding.code} {finding.name}",
    }
    rendered = ",".join(f"{key}={escape_property(str(value))}" for key, value in props.items())
    return f"::{command} {rendered}::{escape_data(sanitize(finding.message))}"


def format_github(report: Report, *, quiet: bool = False, **_: object) -> str:
    lines = [annotation(f) for f in report.findings]
    lines += [f"::notice title=planlint::{escape_data(sanitize(note))}" for note in report.notes]
    if not quiet:
        lines.append(summary_line(report))
    return "\n".join(lines) + "\n"
