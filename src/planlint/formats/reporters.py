"""The reporter table: one function per output format, chosen by name.

Every reporter takes the Report and options and returns the text to write.
Text and JSON are imported with this table; the others when first used, so a
text run never pays for SARIF or GitLab's format.
"""

from __future__ import annotations

from typing import Callable

from planlint.core.model import Report
from planlint.formats.json import format_json
from planlint.formats.text import format_text


# Imported when first used, inside the function: a text run never pays for SARIF.
# Plain imports (no import_module), so the layering contract sees them.


def format_github(report: Report, **options: object) -> str:
    from planlint.formats.github import format_github

    return format_github(report, **options)


def format_sarif(report: Report, **options: object) -> str:
    from planlint.formats.sarif import format_sarif

    return format_sarif(report, **options)


def format_junit(report: Report, **options: object) -> str:
    from planlint.formats.junit import format_junit

    return format_junit(report, **options)


def format_gitlab(report: Report, **options: object) -> str:
    from planlint.formats.gitlab import format_gitlab

    return format_gitlab(report, **options)


def format_markdown(report: Report, **options: object) -> str:
    from planlint.formats.markdown import format_markdown

    return format_markdown(report, **options)


REPORTERS: dict[str, Callable[..., str]] = {
    "text": format_text,
    "json": format_json,
    "github": format_github,
    "sarif": format_sarif,
    "junit": format_junit,
    "markdown": format_markdown,
    "gitlab": format_gitlab,
}
