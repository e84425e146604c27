"""The text format: one line per finding, a source excerpt with a caret, the summary line.

Values quoted from plans are already escaped in messages (messages.show);
source excerpts are escaped here.
"""

from __future__ import annotations

from planlint.core.messages import safe_path, sanitize
from planlint.core.model import Report
from planlint.rules.secrets import redact
from planlint.core.positions import split_lines

_RED, _YELLOW, _BOLD, _CYAN, _DIM, _RESET = "\x1b[31m", "\x1b[33m", "\x1b[1m", "\x1b[36m", "\x1b[2m", "\x1b[0m"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary_line(report: Report) -> str:
    return f"{_plural(report.files, 'file')} checked: {_plural(report.errors, 'error')}, {_plural(report.warnings, 'warning')}."


def format_text(report: Report, *, color: bool = False, quiet: bool = False, statistics: bool = False, **_: object) -> str:
    def paint(code: str, text: str) -> str:
        return f"{code}{text}{_RESET}" if color else text

    lines: list[str] = []
    split: dict[str, list[str]] = {}  # each source split once, not once per finding
    for f in report.findings:
        code = paint(_RED if f.severity == "error" else _YELLOW, f.code)
        head = f"{paint(_BOLD, safe_path(f.path))}:{f.line}:{f.column}: {code} {f.message} [{f.name}]"
        lines.append(head)
        if quiet:
            continue
        source = report.sources.get(f.path)
        if source is not None and f.path not in split:
            split[f.path] = split_lines(source)
        excerpt = _excerpt(split.get(f.path), f.line, f.column, f.end_line, f.end_column)
        if excerpt:
            number, source, caret = excerpt
            gutter = " " * len(str(number))
            lines.append(f"  {paint(_CYAN, str(number))} | {source}")
            if caret:  # none when a masked credential leaves nothing honest to point at
                lines.append(f"  {gutter} | {paint(_RED if f.severity == 'error' else _YELLOW, caret)}")
    if statistics and report.findings:
        counts: dict[tuple[str, str], int] = {}
        for f in report.findings:
            counts[(f.code, f.name)] = counts.get((f.code, f.name), 0) + 1
        if lines and not quiet:
            lines.append("")
        width = len(str(max(counts.values())))
        for (code, name), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"{n:>{width}}  {code}  {name}")
    if not quiet:
        if lines:
            lines.append("")
        lines.append(summary_line(report))
    return "\n".join(lines) + ("\n" if lines else "")


def _excerpt(source_lines: list[str] | None, line: int, column: int, end_line: int, end_column: int):
    if source_lines is None:
        return None
    if not 1 <= line <= len(source_lines):
        return None
    raw = source_lines[line - 1]
    if len(raw) > 200:
        return None
    start = max(column - 1, 0)
    end = end_column - 1 if end_line == line else len(raw)
    end = max(min(end, len(raw)), start + 1)
    before, marked, after = raw[:start], raw[start:end], raw[end:]
    if redact(raw) != raw:
        # Never show a credential: the line is shown masked, and the caret goes under the masked
        # span, so each part is masked on its own; a credential that straddles the parts is
        # masked in the whole line instead, and then no caret can be honest.
        before, marked, after = redact(before), redact(marked), redact(after)
        if redact(before + marked + after) != before + marked + after:
            return line, sanitize(redact(raw).expandtabs(1)), ""
    # Escaping may widen characters; measure the caret on the escaped prefix.
    shown = sanitize((before + marked + after).expandtabs(1))
    prefix = sanitize(before.expandtabs(1))
    marked = sanitize(marked.expandtabs(1))
    return line, shown, " " * len(prefix) + "^" * max(len(marked), 1)
