"""The Markdown report: the job summary (`--summary`) and the pull-request comment.

GitHub shows only about ten annotations per step, so this page carries the
whole picture: counts by rule and by plan (always complete) and a table of
findings (capped, then "and N more") with links to the lines.

Everything quoted from a pull request (paths, messages that quote plan
values) goes through `escape()`: it cannot add HTML, images, links,
@mentions, issue references (`#123`, `owner/repo#123`, `GH-123`, which link
and notify), math (`$...$`) or table cells.

GitHub drops a job summary over 1 MiB whole (findings and all) and refuses a
comment over 65,536 characters: `render_within()` shortens the report to fit
(fewer findings, plans and notes listed, never the counts) and says so.
"""

from __future__ import annotations

import html
import os
import re
from typing import Any

from planlint.core.messages import sanitize
from planlint.core.model import Finding, Report
from planlint.core.paths import repo_relative
from planlint.formats.locations import blob_base, line_link
from planlint.rules.budget import money

STICKY_MARKER = "<!-- planlint:sticky-comment -->"
MAX_ROWS = 200
MAX_INPUT_PLANS = 50  # plans whose missing inputs are listed
MAX_INPUTS = 20  # items listed per plan
MAX_NOTES = 50
_MAX_MESSAGE = 500
#: GitHub's limits: a step's job summary (bytes; a larger one is dropped whole)
#: and an issue or pull-request comment (characters).
SUMMARY_LIMIT = 1024 * 1024
COMMENT_LIMIT = 65536

_SPECIAL = re.compile(r"([\\`*_\[\]<>!|~&])")
_AUTOLINK = re.compile(r"(://|www\.)", re.I)
# Issue and pull-request references GitHub links (and notifies): #123, owner/repo#123, GH-123.
_ISSUE_REFERENCE = re.compile(r"(#|\bGH-)(?=\d)", re.I)


def escape(text: str) -> str:
    r"""Plain text for a GitHub Markdown table cell.

    >>> escape("see [x](http://e.com) <b>@team</b> a|b")
    'see \\[x\\](http:\u200b//e.com) \\<b\\>@\u200bteam\\</b\\> a\\|b'
    """
    text = sanitize(" ".join(text.splitlines()))
    text = _SPECIAL.sub(r"\\\1", text)
    text = _AUTOLINK.sub(lambda m: m.group(1)[0] + "\u200b" + m.group(1)[1:], text)
    text = _ISSUE_REFERENCE.sub(lambda m: m.group(1) + "\u200b", text)
    # `$...$` is math on GitHub; an entity is a dollar sign to read but no delimiter to the parser.
    return text.replace("@", "@\u200b").replace("$", "&#36;")


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
    max_cards: int | None = None,
    max_notes: int | None = MAX_NOTES,
    marker: str | None = None,
    env: dict | None = None,
    shortened: str | None = None,
) -> str:
    """The Markdown report. `shortened`: the limit it was cut down to fit, said under the counts."""
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
    if shortened:
        out += ["", f"**This report was shortened to fit {shortened}:** the counts are complete; the lists below "
                    "name the first findings, plans, notes and changed plans only. The JSON report holds everything."]
    notes = report.notes if max_notes is None else report.notes[:max_notes]
    if notes:  # what could not be checked, in a section of its own
        out += ["", "### Notes"]
    for note in notes:
        out += ["", f"> {escape(_clip(note, _MAX_MESSAGE * 2))}"]
    if len(notes) < len(report.notes):
        out += ["", f"> … and {_plural(len(report.notes) - len(notes), 'more note')}."]
    out += _review(report, max_rows)
    if report.changes is not None:
        out += _changes(report, max_cards)
    out += _missing_inputs(report, max_plans)
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


def _missing_inputs(report: Report, max_plans: int | None) -> list[str]:
    """What each plan still needs (its `missing_inputs`), listed under the plan."""
    if not report.missing_inputs:
        return []
    out = ["", "### Missing inputs", ""]
    plans = list(report.missing_inputs.items())
    limit = MAX_INPUT_PLANS if max_plans is None else min(max_plans, MAX_INPUT_PLANS)
    for path, items in plans[:limit]:
        out.append(f"**{escape(_display(path))}**")
        out.append("")
        out += [f"- {escape(_clip(item, _MAX_MESSAGE))}" for item in items[:MAX_INPUTS]]
        if len(items) > MAX_INPUTS:
            out.append(f"- … and {_plural(len(items) - MAX_INPUTS, 'more input')}")
        out.append("")
    if len(plans) > limit:
        out.append(f"… and {_plural(len(plans) - limit, 'more plan')} with missing inputs.")
        out.append("")
    return out[:-1] if out[-1] == "" else out


def _review(report: Report, max_rows: int) -> list[str]:
    """Diff mode: what the pull request adds that silences or allows something, for the reviewer to judge."""
    out: list[str] = []
    catalog = report.review.get("catalog_added") or []
    silenced = report.review.get("suppressions_added") or []
    limit = max(max_rows, 10)
    if catalog:
        out += ["", "### Catalog entries added by this pull request", "",
                "Plans are checked against the base branch's catalog; these entries count once merged.", "",
                "| catalog | kind | name | release or version |", "|---|---|---|---|"]
        for entry in catalog[:limit]:
            value = entry.get("release", entry.get("version", ""))
            out.append(f"| {escape(str(entry.get('catalog', '')))} | {escape(str(entry.get('kind', '')))} | {escape(str(entry.get('name', '')))} | {escape(str(value))} |")
        if len(catalog) > limit:
            out += ["", f"… and {_plural(len(catalog) - limit, 'more entry')}."]
    if silenced:
        out += ["", "### Suppressions added by this pull request", "",
                "| location | suppression | reason | silences |", "|---|---|---|---|"]
        for item in silenced[:limit]:
            where = escape(f"{_display(str(item.get('path', '')))}:{item.get('line', '')}")
            what = escape(f"{item.get('kind', '')}={','.join(map(str, item.get('codes', [])))}")
            reason = escape(_clip(str(item.get("reason") or ""), _MAX_MESSAGE)) or "(no reason)"
            used = ", ".join(map(str, item.get("silences", []))) or "nothing found"
            out.append(f"| {where} | {what} | {reason} | {escape(used)} |")
        if len(silenced) > limit:
            out += ["", f"… and {_plural(len(silenced) - limit, 'more suppression')}."]
    return out


#: (findings, plans, notes, change cards) listed, from the whole report down to the counts alone.
_LADDER = [
    (MAX_ROWS, None, MAX_NOTES, None), (100, None, 20, None), (100, 100, 20, 50), (50, 100, 10, 20),
    (50, 50, 10, 10), (20, 50, 5, 10), (20, 20, 5, 5), (10, 20, 3, 5), (10, 10, 3, 3), (5, 10, 1, 2),
    (3, 5, 1, 1), (1, 3, 1, 1), (1, 1, 0, 0), (1, 0, 0, 0), (0, 0, 0, 0),
]


def render_within(report: Report, limit: int, *, measure=len, what: str | None = None, **kwargs) -> str:
    """`render()` cut down until `measure(text) <= limit`: fewer findings, plans, notes and change
    cards listed, and a line saying so; the counts (by rule too) and the first findings always stay.

    `measure`: `len` for a comment (GitHub counts characters), `utf8_size`
    for the job summary (bytes). `what`: the limit in words, for that line.
    """
    what = what or f"GitHub's limit of {limit:,} characters"
    text = render(report, **kwargs)
    if measure(text) <= limit:
        return text
    for rows, plans, notes, cards in _LADDER[1:]:
        text = render(report, max_rows=rows, max_plans=plans, max_notes=notes, max_cards=cards, shortened=what, **kwargs)
        if measure(text) <= limit:
            return text
    # Only a report whose counts alone do not fit gets here: cut it, and say so on the last line.
    tail = f"\n\n… cut here to fit {what}.\n"
    room = max(0, limit - measure(tail))
    if measure is len:
        return text[:room] + tail
    return text.encode("utf-8", "surrogatepass")[:room].decode("utf-8", "ignore") + tail


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def render_summary(report: Report, room: int = SUMMARY_LIMIT, **kwargs) -> str:
    """The job summary, within `room` bytes (GitHub drops a step's summary over 1 MiB whole)."""
    return render_within(report, room, measure=utf8_size, what="GitHub's limit of 1 MiB for a job summary", **kwargs)


# --------------------------------------------------------------------------- change cards

MAX_CARDS = 100  # plans shown with their card; the JSON report has every one
MAX_FIELDS = 40  # rows of one card
OPEN_FIELDS = 8  # a card with more rows is collapsed
_MONEY_FIELDS = ("budget.max_spend", "budget.estimated_cost", "recurrence.budget.max_spend_per_run", "recurrence.budget.max_spend_per_month")
_REFERENCE = re.compile(r"(#|GH-)(\d)", re.I)


def _html(text: str) -> str:
    """Text inside an HTML element (`<summary>`): no markup, links or @mentions."""
    text = html.escape(sanitize(" ".join(text.splitlines())), quote=True)
    text = _AUTOLINK.sub(lambda m: m.group(1)[0] + "\u200b" + m.group(1)[1:], text)
    text = _REFERENCE.sub(lambda m: m.group(1) + "\u200b" + m.group(2), text)  # #123, GH-123: no link, no notification
    return text.replace("@", "@\u200b").replace("$", "&#36;")


def _value(value, yaml_path: str) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)) and yaml_path in _MONEY_FIELDS:
        return money(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v, "") for v in value) + "]"
    return _clip(str(value), 200)


def _card_title(card: dict) -> tuple[str, str]:
    """(where, what): the plan's path and name, and its change and status transition."""
    path = card.get("path") if isinstance(card.get("path"), str) else "?"
    name = card.get("plan") if isinstance(card.get("plan"), str) else None
    status = card.get("status") if isinstance(card.get("status"), list) and len(card["status"]) == 2 else [None, None]
    old, new = (s if isinstance(s, str) else None for s in status)
    change = card.get("change") if isinstance(card.get("change"), str) else "changed"
    if old == new:
        transition = f"status {new or '(none)'}"
    else:
        transition = f"status {old or '(none)'} → {new or '(none)'}"
    where = _display(path) + (f" · {name}" if name else "")
    return where, f"{change} · {transition}" + _verdict(card.get("verdict"))


def _verdict(verdict: Any) -> str:
    """ · verdict met, and what the numbers give when it differs (PL615), for a completed plan's card."""
    if not isinstance(verdict, dict):
        return ""
    recorded, computed = (v if isinstance(v, str) else None for v in (verdict.get("recorded"), verdict.get("computed")))
    text = f" · verdict {recorded or '(none)'}"
    if computed is not None and computed != recorded:
        text += f" (its numbers give {computed})"
    return text


def _card(card: dict) -> list[str]:
    where, what = _card_title(card)
    fields = [f for f in card.get("fields") or [] if isinstance(f, dict)]
    rows = ["| field | base → head |", "|---|---|"]
    for f in fields[:MAX_FIELDS]:
        path = f.get("yaml_path") if isinstance(f.get("yaml_path"), str) else "?"
        rows.append(f"| {escape(path)} | {escape(_value(f.get('old'), path))} → {escape(_value(f.get('new'), path))} |")
    if len(fields) > MAX_FIELDS:
        rows.append(f"| … and {_plural(len(fields) - MAX_FIELDS, 'more field')} | (in the JSON report) |")
    if not fields:
        rows = ["No field a reviewer tracks changed (method, model, dataset, splits, graders, baseline, decision, budget)."]
    month = _month_line(card.get("recurring"))
    if month:
        rows = [month, "", *rows]
    if len(fields) > OPEN_FIELDS:
        count = _plural(len(fields), "field")
        return ["", f"<details><summary><b>{_html(where)}</b> · {_html(what)} · {count}</summary>", "", *rows, "", "</details>"]
    return ["", f"**{escape(where)}** · {escape(what)}", "", *rows]


def _month_text(figures) -> str:
    """"up to 5 runs × 200 USD, at most 1,000 USD a month" from a card's per-month figures."""
    if not isinstance(figures, dict):
        return "not recurring"

    def amount(key: str) -> str:
        value = figures.get(key)
        return money(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else "?"

    unit = f" {figures['currency']}" if isinstance(figures.get("currency"), str) else ""
    runs = figures.get("runs_per_month")
    runs_text = f"up to {runs} runs" if isinstance(runs, int) and not isinstance(runs, bool) else "? runs"
    return f"{runs_text} × {amount('max_spend_per_run')}{unit}, at most {amount('max_spend_per_month')}{unit} a month"


def _month_line(recurring) -> str:
    """The card's per-month line of a recurring plan: base → head (one side when they agree)."""
    if not isinstance(recurring, list) or len(recurring) != 2:
        return ""
    old, new = (_month_text(side) for side in recurring)
    return f"🔁 Recurring: {escape(new if old == new else f'{old} → {new}')}"


def _changes(report: Report, max_cards: int | None) -> list[str]:
    """The pull request's meaning: committed spend per currency, then a card per changed plan."""
    out = ["", "### What this pull request changes", ""]
    sentences = spend_sentences(report.committed_spend or {})
    for sentence in sentences:
        out.append(f"💰 {escape(sentence[0].upper() + sentence[1:])}.  ")
    if not sentences:
        out.append("No approved or running plan commits spend, at the base or at head.")
    cards = report.changes or []
    shown = cards[: MAX_CARDS if max_cards is None else max_cards]
    for card in shown:
        if isinstance(card, dict):
            out += _card(card)
    if len(shown) < len(cards):
        out += ["", f"… and {_plural(len(cards) - len(shown), 'more changed plan')} (the JSON report lists every change)."]
    return out


def spend_sentences(committed_spend: dict) -> list[str]:
    """"this pull request raises committed spend by 1,000 USD, to 12,400 USD", one per currency."""
    out: list[str] = []
    for currency, entry in committed_spend.items():
        if not isinstance(entry, dict):
            continue
        base, head, delta = (entry.get(k) for k in ("base", "head", "delta"))
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (base, head, delta)):
            continue
        if delta > 0:
            text = f"this pull request raises committed spend by {money(delta)} {currency}, to {money(head)} {currency}"
        elif delta < 0:
            text = f"this pull request lowers committed spend by {money(-delta)} {currency}, to {money(head)} {currency}"
        else:
            text = f"this pull request leaves committed spend at {money(head)} {currency}"
        monthly = entry.get("per_month")
        if isinstance(monthly, dict) and all(isinstance(monthly.get(k), (int, float)) and not isinstance(monthly.get(k), bool) for k in ("base", "head")):
            part = f"{money(monthly['head'])} {currency}" if monthly["base"] == monthly["head"] else f"{money(monthly['base'])} → {money(monthly['head'])} {currency}"
            text += f", of which recurring plans {part} a month (their per-month caps)"
        limit = entry.get("limit")
        if isinstance(limit, (int, float)) and not isinstance(limit, bool):
            text += f" (limit {money(limit)} {currency}{', exceeded' if head > limit else ''})"
        out.append(text)
    return out


def format_markdown(report: Report, **_: object) -> str:
    return render(report)
