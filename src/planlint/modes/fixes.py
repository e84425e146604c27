"""`--fix`: safe fixes, applied as exact text edits.

A document is never re-dumped. Each fix replaces one scalar's text at the span
the loader recorded, or inserts one line (one entry in a flow mapping), so
comments, key order, quoting, indentation, line endings and blank lines
elsewhere stay byte-for-byte. The edited text is parsed again and must give
exactly the data the fixes intend, or the file is left alone.

Only findings that were reported (after select/ignore and suppressions) are
fixed, and only where the right answer is certain:

* PL102/PL302: a floating value that means "the newest" (`latest`, `newest`,
  `current`, `head`, `tip`, `*`) becomes the newest published release/version
  (registry listing when online, else the catalog); `1.x` / `1.4.*` becomes
  the newest published one with that prefix. `baseline.grader_versions` is
  not touched: re-measuring the baseline is a human decision, and PL306 says so.
* PL502: `max_spend: "$250"` / `"250 USD"` / `"USD 250"` / `"250"` becomes
  `max_spend: 250`, plus `currency: USD` when the plan has no currency; a
  currency that disagrees with the string means no fix.
* PL503: a currency code in the wrong case (`usd`) becomes `USD`.

Files with a syntax error or a duplicate key, unreadable files and files that
are not plans are never touched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from planlint.core.currencies import ISO_4217
from planlint.core.floating import floating_reason
from planlint.core.loader import bom_encoding, decode, load_text
from planlint.core.messages import sanitize, show
from planlint.core.positions import Positions, Route, yaml_path
from planlint.core.yaml_values import YamlFloat, YamlInt, parse_number, scalar_text
from planlint.engine.discovery import discover
from planlint.engine.lint import lint_file
from planlint.engine.run import finish
from planlint.rules.base import Services
from planlint.modes.edits import (
    Edit,
    Fix,
    Site,
    apply_edits,
    line_starts,
    newline_of,
    non_overlapping,
    offset,
    render_scalar,
    scalar_site,
    unified_diff,
    verified,
    write_file,
)

FIXABLE = ("PL102", "PL302", "PL502", "PL503")
NEWEST_WORDS = frozenset({"latest", "newest", "current", "head", "tip"})
_WILD = ("x", "X", "*")
_BOM = b"\xef\xbb\xbf"
_MAX_VALUE = 128
_AMOUNT = r"(?P<amount>(?:0|[1-9][0-9]*)(?:\.[0-9]+)?)"
_GROUPED = r"(?P<amount>[1-9][0-9]{0,2}(?:,[0-9]{3})+(?:\.[0-9]+)?)"
_SPEND_FORMS = [  # (pattern, where the currency comes from)
    (re.compile(rf"^\$\s?{_AMOUNT}$"), "$"),
    (re.compile(rf"^\$\s?{_GROUPED}$"), "$"),  # "$1,000": a dollar amount, US digit grouping
    (re.compile(rf"^(?P<code>[A-Za-z]{{3}})\s?{_AMOUNT}$"), "code"),
    (re.compile(rf"^{_AMOUNT}\s?(?P<code>[A-Za-z]{{3}})$"), "code"),
    (re.compile(rf"^(?P<code>USD|usd)\s?{_GROUPED}$"), "code"),
    (re.compile(rf"^{_GROUPED}\s?(?P<code>USD|usd)$"), "code"),
    (re.compile(rf"^{_AMOUNT}$"), "none"),
]


@dataclass
class FixOutcome:
    fixed: int = 0  # findings resolved
    files: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # one per applied fix
    notes: list[str] = field(default_factory=list)  # files left alone, and why
    diff: str = ""
    repinned: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)  # path -> grader id -> (old, new)

    def summary(self, *, would: bool = False) -> str:
        n, m = self.fixed, len(self.files)
        verb = "Would fix" if would else "Fixed"
        if not n:
            return "No fixes available." if would else "Nothing to fix."
        return f"{verb} {n} finding{'s' if n != 1 else ''} in {m} file{'s' if m != 1 else ''}."


def newest_matching(value: Any, published: tuple[str, ...]) -> str | None:
    """The published value a floating `value` certainly means, or None."""
    if not published or value is None or isinstance(value, (bool, int, float, dict, list)):
        return None
    text = str(value).strip()
    if text.lower() in NEWEST_WORDS or text == "*":
        candidates = list(published)
    else:
        parts = text.split(".")
        first = next((i for i, p in enumerate(parts) if p in _WILD), None)
        if not first or any(p not in _WILD for p in parts[first:]) or any(p in _WILD or not p for p in parts[:first]):
            return None
        prefix = parts[:first]
        candidates = [v for v in published if v.split(".")[:first] == prefix]
    for candidate in reversed(candidates):
        if _usable(candidate):
            return candidate
    return None


def _usable(value: str) -> bool:
    return isinstance(value, str) and 0 < len(value) <= _MAX_VALUE and value.isprintable() and value == value.strip() and floating_reason(value) is None


def parse_spend(value: str) -> tuple[str, str | None] | None:
    """("250", "USD") from "$250" / "250 USD" / "USD 250"; ("250", None) from "250"; None when not certain."""
    text = value.strip()
    for pattern, kind in _SPEND_FORMS:
        match = pattern.match(text)
        if not match:
            continue
        groups = match.groupdict()
        amount = groups["amount"].replace(",", "")
        if float(amount) <= 0:
            return None
        if kind == "$":
            return amount, "USD"
        if kind == "code":
            code = groups["code"].upper()
            return (amount, code) if code in ISO_4217 else None
        return amount, None
    return None


class _Plan:
    """One plan's text, data and positions, and the findings to fix, as the fixes see them."""

    def __init__(self, text: str, data: dict, positions: Positions, wanted: set[tuple[str, str]] | None) -> None:
        self.text, self.data, self.positions = text, data, positions
        self.starts = line_starts(text)
        self.wanted = wanted

    def wants(self, code: str, route: Route) -> bool:
        return self.wanted is None or (code, yaml_path(route)) in self.wanted

    def site(self, route: Route, value: Any) -> Site | None:
        return scalar_site(self.text, self.starts, self.positions, route, value)


def _pin_newest(plan: _Plan, publications, code: str, kind: str, route: Route, name: Any, value: Any) -> Fix | None:
    if publications is None or not isinstance(name, str) or not plan.wants(code, route) or floating_reason(value) is None:
        return None
    published, source = publications.published_values(kind, name)
    new = newest_matching(value, published)
    site = plan.site(route, value)
    if new is None or site is None:
        return None
    summary = f"{yaml_path(route)} {show(value)} -> {show(new)} (newest published in {source})"
    return Fix(code, route, [Edit(site.start, site.end, render_scalar(new, site.style))], [(route, new)], summary)


def _release_fix(plan: _Plan, publications) -> Iterator[Fix]:
    dataset = plan.data.get("dataset")
    if isinstance(dataset, dict) and "release" in dataset:
        fix = _pin_newest(plan, publications, "PL102", "datasets", ("dataset", "release"), dataset.get("name"), dataset["release"])
        if fix:
            yield fix


def _grader_fixes(plan: _Plan, publications) -> Iterator[Fix]:
    graders = plan.data.get("graders")
    if not isinstance(graders, list):
        return
    for index, grader in enumerate(graders):
        if not isinstance(grader, dict) or "version" not in grader:
            continue
        fix = _pin_newest(plan, publications, "PL302", "graders", ("graders", index, "version"), grader.get("name"), grader["version"])
        if fix:
            ident = grader.get("id")
            if isinstance(ident, str):
                fix.repin = (ident, scalar_text(grader["version"]), fix.expect[0][1])
            yield fix


def _spend_fix(plan: _Plan) -> Iterator[Fix]:
    budget = plan.data.get("budget")
    if not isinstance(budget, dict) or not isinstance(budget.get("max_spend"), str):
        return
    value = budget["max_spend"]
    route = ("budget", "max_spend")
    if not plan.wants("PL502", route):
        return
    parsed = parse_spend(value)
    site = plan.site(route, value)
    if parsed is None or site is None:
        return
    amount, currency = parsed
    number = parse_number(amount)
    if not isinstance(number, (YamlInt, YamlFloat)):
        return
    edits = [Edit(site.start, site.end, amount)]
    expect: list[tuple[Route, Any]] = [(route, number)]
    also: list[tuple[str, Route]] = []
    summary = f"budget.max_spend {show(value)} -> {amount}"
    if currency is not None:
        present = budget.get("currency")
        if "currency" not in budget:
            insert = _currency_insert(plan, currency)
            if insert is None:
                return
            edits.append(insert)
            expect.append((("budget", "currency"), currency))
            also.append(("PL503", ("budget", "currency")))
            summary += f", added budget.currency: {currency}"
        elif not (isinstance(present, str) and present.strip().upper() == currency):
            return  # the string and budget.currency disagree: a human decides
    yield Fix("PL502", route, edits, expect, summary, also)


def _currency_insert(plan: _Plan, currency: str) -> Edit | None:
    """`currency: XXX` right after the max_spend entry, in the mapping's own style."""
    key = plan.positions.keys.get(("budget", "max_spend"))
    value = plan.positions.values.get(("budget", "max_spend"))
    mapping = plan.positions.values.get(("budget",))
    if key is None or value is None or mapping is None:
        return None
    map_start = offset(plan.starts, mapping.line, mapping.column)
    key_start = offset(plan.starts, key.line, key.column)
    if map_start is None or key_start is None:
        return None
    if plan.text[map_start] == "{":  # flow mapping: a new first entry before max_spend
        return Edit(key_start, key_start, f"currency: {currency}, ")
    line_start = plan.starts[key.line - 1]
    indent = plan.text[line_start:key_start]
    if indent.strip(" ") or value.end_line != key.line:
        return None  # not a simple `  max_spend: ...` line
    newline = newline_of(plan.text)
    if value.end_line < len(plan.starts):  # insert at the start of the next line
        at = plan.starts[value.end_line]
        return Edit(at, at, f"{indent}currency: {currency}{newline}")
    at = len(plan.text)  # the last line has no line break: keep it that way
    return Edit(at, at, f"{newline}{indent}currency: {currency}")


def _currency_fix(plan: _Plan) -> Iterator[Fix]:
    budget = plan.data.get("budget")
    if not isinstance(budget, dict) or not isinstance(budget.get("currency"), str):
        return
    value = budget["currency"]
    upper = value.strip().upper()
    if value == upper or upper not in ISO_4217:
        return
    route = ("budget", "currency")
    site = plan.site(route, value)
    if site is None or not plan.wants("PL503", route):
        return
    yield Fix("PL503", route, [Edit(site.start, site.end, render_scalar(upper, site.style))], [(route, upper)], f"budget.currency {show(value)} -> {upper}")


def candidate_fixes(text: str, data: dict, positions: Positions, publications, wanted: set[tuple[str, str]] | None = None) -> list[Fix]:
    """The certain fixes for this plan; only for `wanted` (code, yaml_path) findings when given."""
    plan = _Plan(text, data, positions, wanted)
    return [*_release_fix(plan, publications), *_grader_fixes(plan, publications), *_spend_fix(plan), *_currency_fix(plan)]


def fix_paths(paths, config, services: Services | None = None, *, write: bool = True) -> FixOutcome:
    """Lint, fix what was reported and can be fixed with certainty, and write (or diff) the files."""
    results = []
    for display, path, explicit in discover(paths, config):
        result = lint_file(display, path, explicit, config, services)
        if result is not None:
            results.append((result, path))
    finish([r for r, _ in results], config)
    outcome = FixOutcome()
    diffs: list[str] = []
    publications = services.publications if services is not None else None
    for result, path in results:
        if not result.is_plan or result.data is None or result.text is None:
            continue  # PL001/PL004/PL006: never touched
        reported = {(f.code, f.yaml_path): f for f in result.findings if f.code in FIXABLE}
        if not reported:
            continue
        _fix_file(result, Path(path), reported, publications, config, write, outcome, diffs)
    outcome.diff = "".join(diffs)
    return outcome


def _fix_file(result, path: Path, reported: dict, publications, config, write: bool, outcome: FixOutcome, diffs: list[str]) -> None:
    limits = config.parser_limits()
    try:
        raw = path.read_bytes()
    except OSError as exc:
        outcome.notes.append(f"{result.path}: not fixed: cannot read it again ({exc.strerror or type(exc).__name__})")
        return
    text, problem = decode(raw)
    if problem is not None or text != result.text:
        outcome.notes.append(f"{result.path}: not fixed: the file changed while planlint was reading it")
        return
    original = load_text(text, limits)
    if original.fatal or not isinstance(original.data, dict):
        return
    if original.problems:  # PL002: other YAML tools keep the *last* duplicate, so no edit is certain
        outcome.notes.append(f"{result.path}: not fixed: it repeats a key (PL002); remove the duplicate first")
        return
    fixes = non_overlapping(candidate_fixes(text, original.data, original.positions, publications, set(reported)))
    if not fixes:
        return
    new_text = apply_edits(text, [e for f in fixes for e in f.edits])
    if new_text == text:
        return
    if publications is not None and publications.fatal():
        return  # the registry failed with on_error: fail; the CLI exits 2 and nothing is written
    if not verified(original, new_text, fixes, limits):
        outcome.notes.append(f"{result.path}: not fixed: the edited file did not read back as intended, so it was left as it was (please report this)")
        return
    if write:
        try:
            wide = bom_encoding(raw)  # written back in the encoding it was read in
            if wide is not None:
                encoded = wide[1] + new_text.encode(wide[0])
            else:
                encoded = (_BOM if raw.startswith(_BOM) else b"") + new_text.encode("utf-8")
            write_file(path, encoded)
        except OSError as exc:
            outcome.notes.append(f"{result.path}: not fixed: cannot write it ({exc.strerror or type(exc).__name__})")
            return
    else:
        bom = "\ufeff" if raw.startswith(_BOM) else ""  # part of line 1, so the patch applies
        diffs.append(unified_diff(bom + text, bom + new_text, result.path))
    outcome.files.append(result.path)
    codes = {(f.code, f.yaml_path) for f in result.findings}
    for fix in sorted(fixes, key=lambda f: (reported[(f.code, yaml_path(f.route))].line, reported[(f.code, yaml_path(f.route))].column)):
        finding = reported[(fix.code, yaml_path(fix.route))]
        outcome.fixed += 1 + sum(1 for code, route in fix.also if (code, yaml_path(route)) in codes)
        verb = "fixed" if write else "would fix"
        outcome.lines.append(f"{sanitize(result.path)}:{finding.line}:{finding.column}: {verb} {fix.code}: {fix.summary}")
        if fix.repin and write:
            ident, old, new = fix.repin
            outcome.repinned.setdefault(result.path, {})[ident] = (old, new)
