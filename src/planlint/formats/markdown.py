"""The Markdown report: the job summary (`--summary`) and the pull-request comment.

GitHub shows only about ten annotations per step, so this page carries the
whole picture: counts by rule and by plan (always complete) and a table of
findings (capped, then "and N more") with links to the lines.

Everything quoted from a pull request (paths, messages that quote plan
values) goes through `escape()`: it cannot add HTML, images, links,
@mentions or table cells.
"""

from __future__ import annotations

import os
import re

from planlint.core.messages import sanitize
from planlint.core.model import Finding, Report
from planlint.core.paths import repo_relative
from planlint.formats.locations import blob_base, line_link

STICKY_MARKER = "<!-- planlint:sticky-comment -->"
MAX_ROWS = 200
_MAX_MESSAGE = 500

_SPECIAL = re.compile(r"([\\`*_\[\]<>!|~&])")
_AUTOLINK = re.compile(r"(://|www\.)", re.I)


def escape(text: str) -> str:
    r"""Plain text for a GitHub Markdown table cell.

    >>> escape("see [x](http://e.com) <b>@team</b> a|b")
    'see \\[x\\](http:\u200b//e.com) \\<b\\>@\u200bteam\\</b\\> a\\|b'
    """
    text = sanitize(" ".join(text.splitlines()))
    text = _SPECIAL.sub(r"\\\1", text)
    text = _AUTOLINK.sub(lambda m: m.group(1)[0] + "\u200b" + m.group(1)[1:], text)
    return text.replace("@", "@\u200b")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _display(path: str) -> str:
    return repo_relative(path) or path


def _location(f: Finding, base: str | None) -> str:
    rel = repo_relative(f.path)
    label = escape(f"{_display(f.path)}:{f.line}")
    if base and rel is not None and os.path.exists(f.path):  # a deleted plan has nothing to link to
        return f"[{label}]({line_link(base, rel, f.line, f.end_line)})"
    return label


def render(
    report: Report,
    *,
    max_rows: int = MAX_ROWS,
    max_plans: int | None = None,
    marker: str | None = None,
    env: dict | None = None,
) -> str:
    base = blob_base(env)
    out: list[str] = []
    if marker:
        out.append(marker)
    out.append("## planlint")
    out.append("")
    plans = _plural(report.files, "plan")
    if not report.findings:
        out.append(f"✅ No findings in {plans}.")
    else:
        touched = len({f.path for f in report.findings})
        icon = "❌" if report.errors else "⚠️"
        out.append(
            f"{icon} **{_plural(report.errors, 'error')}**, {_plural(report.warnings, 'warning')} "
            f"in {touched} of {plans}."
        )
    for note in report.notes:
        out += ["", f"> {escape(note)}"]
    if not report.findings:
        return "\n".join(out) + "\n"

    by_rule: dict[tuple[str, str, str], int] = {}
    by_plan: dict[str, list[int]] = {}
    for f in report.findings:
        key = (f.code, f.name, f.severity)
        by_rule[key] = by_rule.get(key, 0) + 1
        counts = by_plan.setdefault(f.path, [0, 0])
        counts[0 if f.severity == "error" else 1] += 1
    out += ["", "### By rule", "", "| rule | name | severity | findings |", "|---|---|---|--:|"]
    for (code, name, severity), n in sorted(by_rule.items(), key=lambda kv: (-kv[1], kv[0])):
        out.append(f"| {code} | {escape(name)} | {severity} | {n} |")

    out += ["", "### By plan", "", "| plan | errors | warnings |", "|---|--:|--:|"]
    plan_rows = sorted(by_plan.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))
    shown = plan_rows if max_plans is None else plan_rows[:max_plans]
    for path, (errors, warnings) in shown:
        out.append(f"| {escape(_display(path))} | {errors} | {warnings} |")
    if len(shown) < len(plan_rows):
        rest = plan_rows[len(shown):]
        out.append(
            f"| … and {_plural(len(rest), 'more plan')} | {sum(r[1][0] for r in rest)} | {sum(r[1][1] for r in rest)} |"
        )

    ordered = sorted(report.findings, key=lambda f: (f.severity != "error", f.sort_key))
    rows = ordered[:max_rows]
    out += ["", "### Findings", "", "| | location | rule | message |", "|---|---|---|---|"]
    for f in rows:
        icon = "❌ error" if f.severity == "error" else "⚠️ warning"
        out.append(f"| {icon} | {_location(f, base)} | {f.code} {escape(f.name)} | {escape(_clip(f.message, _MAX_MESSAGE))} |")
    if len(rows) < len(ordered):
        more = len(ordered) - len(rows)
        out += ["", f"… and {_plural(more, 'more finding')} not shown here (the counts above include them)."]
    out += ["", "`planlint explain CODE` describes each rule."]
    return "\n".join(out) + "\n"


def render_within(report: Report, limit: int, **kwargs) -> str:
    """`render()` cut down until it fits in `limit` characters (a comment holds 65536)."""
    rows, plans = MAX_ROWS, None
    while True:
        text = render(report, max_rows=rows, max_plans=plans, **kwargs)
        if len(text) <= limit:
            return text
        if rows > 0:
            rows //= 2
        elif plans is None or plans > 0:
            plans = 100 if plans is None else plans // 2
        else:
            return text[: limit - 2] + "…\n"


def format_markdown(report: Report, **_: object) -> str:
    return render(report)
