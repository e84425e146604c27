"""`--fix`: apply the fixes rules attach to their findings, as exact text edits, to a fixed point.

A rule that can fix what it reports attaches a symbolic fix to the problem
(`Problem(route, message, fix=Fix(...))`, rules/base.py); which findings have
one, and why it is certain, is the rule's business. This module knows no
rule: it lints, keeps the reported findings (after select/ignore and
suppressions) of rules registered `fixable`, asks those rules again for the
fixes of exactly those findings, has modes/edits.py turn them into text edits
and check them by parsing the edited text again, and repeats on the edited
text until no fix is left (`fix_text`), as ruff does.

Files with a syntax error or a duplicate key, unreadable files and files that
are not plans are never touched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planlint.core.loader import Loaded, bom_encoding, decode, load_text
from planlint.core.messages import sanitize
from planlint.core.model import Finding
from planlint.core.positions import yaml_path
from planlint.engine.discovery import discover
from planlint.engine.lint import lint_file
from planlint.engine.run import finish
from planlint.modes.edits import TextFix, apply_edits, line_starts, non_overlapping, text_fix, unified_diff, verified, write_file
from planlint.rules import PLAN_RULES, RULES, resolved
from planlint.rules.base import PlanContext, Problem, Services, fix_of

_BOM = b"\xef\xbb\xbf"
FIXING_RULES = tuple(r for r in PLAN_RULES if r.fixable)  # the rules whose problems may carry a fix
# A fix that enables another (a name renamed, then a lookup by the new name)
# takes one more pass. Today's fixes never enable one another, so a file
# settles in one pass (and a second lint that finds nothing left); ten passes
# leave room for chains without letting fixes that never settle run on.
MAX_FIX_PASSES = 10


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


def candidate_fixes(text: str, loaded: Loaded, wanted: set[tuple[str, str]], *, path: str = "", config: Any = None,
                    services: Services | None = None, file: Path | None = None) -> list[TextFix]:
    """The fixes of the `wanted` findings, (code, yaml_path), as text edits.

    `loaded` is `text` as the loader read it (data and positions). The fixing
    rules are asked again on that data; each problem of theirs that is wanted
    and carries a fix that can be placed with certainty gives one TextFix.
    """
    ctx = PlanContext(data=loaded.data, path=path, config=config, services=services or Services(), file=file)
    starts = line_starts(text)
    out: list[TextFix] = []
    for rule in FIXING_RULES:
        for problem in rule.check(ctx):
            if not isinstance(problem, Problem) or problem.fix is None or problem.document is not None:
                continue
            code = problem.code or rule.code
            if (code, yaml_path(problem.route)) not in wanted:
                continue
            fix = fix_of(problem)
            if fix is None:
                continue
            edited = text_fix(code, problem.route, fix, text, starts, loaded.positions, loaded.data)
            if edited is not None:
                out.append(edited)
    return out


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
    for result, path in results:
        if not result.is_plan or result.data is None or result.text is None:
            continue  # PL001/PL004/PL006: never touched
        if not any(RULES[f.code].fixable for f in result.findings):
            continue
        _fix_file(result, Path(path), services, config, write, outcome, diffs)
    outcome.diff = "".join(diffs)
    return outcome


@dataclass
class FixPass:
    """One pass of --fix over a file: the findings reported on the text it read, and the fixes it made."""

    fixable: dict[tuple[str, str], Finding]  # (code, yaml_path) -> the finding, for the rules registered fixable
    reported: dict[tuple[str, str], Finding]  # every reported finding: what a fix's `also` may count, and where it is
    fixes: list[TextFix]


@dataclass
class FixedPoint:
    """What the passes over one file came to (`fix_text`)."""

    text: str  # after the last pass that changed it
    passes: list[FixPass]
    refused: str | None = None  # why the file is left as it was (then `passes` is empty)
    unsettled: bool = False  # MAX_FIX_PASSES passes were made and fixes remain


def fix_text(text: str, loaded: Loaded, findings: list[Finding], *, display: str, path: Path, config: Any,
             services: Services | None) -> FixedPoint:
    """Fix `text` to a fixed point: pass after pass, until the findings left have no fix to make.

    `loaded` is `text` as the loader read it, `findings` what the lint reported
    on it. A pass fixes the reported findings of fixable rules that have a fix
    it can place with certainty, and checks the edited text reads as exactly
    those changes (`verified`); the next pass lints that text again (without
    the data rules, which fix nothing), since a fix can enable another (its
    value is what another fix looks up). At most MAX_FIX_PASSES passes: if fixes
    remain then, the text after them is kept, `unsettled`. A pass that does not
    read back as intended, or that gives back the text of an earlier pass (two
    fixes undoing each other), leaves the file as it was (`refused`).
    """
    config = resolved(config)
    limits = config.parser_limits()
    later = config.without(code for code, rule in RULES.items() if rule.scope == "data")
    original, seen = text, {text}
    passes: list[FixPass] = []
    for number in range(1, MAX_FIX_PASSES + 2):
        fixable = {(f.code, f.yaml_path): f for f in findings if RULES[f.code].fixable}
        if not fixable:
            break
        fixes = non_overlapping(candidate_fixes(text, loaded, set(fixable), path=display, config=config, services=services, file=path))
        new_text = apply_edits(text, [e for f in fixes for e in f.edits])
        if new_text == text:
            break
        if number > MAX_FIX_PASSES:
            return FixedPoint(text, passes, unsettled=True)
        if not verified(loaded, new_text, fixes, limits):
            return FixedPoint(original, [], refused="the edited file did not read back as intended, so it was left as it was (please report this)")
        if new_text in seen:
            return FixedPoint(original, [], refused=f"its fixes undo each other (pass {number} gives back the text of an earlier pass), so it was left as it was (please report this)")
        seen.add(new_text)
        passes.append(FixPass(fixable, {(f.code, f.yaml_path): f for f in findings}, fixes))
        text, loaded = new_text, load_text(new_text, limits)
        relinted = lint_file(display, path, True, later, services, content=new_text.encode("utf-8"))
        findings = relinted.findings if relinted is not None else []
    return FixedPoint(text, passes)


def _fix_file(result, path: Path, services: Services | None, config, write: bool, outcome: FixOutcome, diffs: list[str]) -> None:
    limits = config.parser_limits()
    publications = services.publications if services is not None else None
    try:
        raw = path.read_bytes()
    except OSError as exc:
        outcome.notes.append(f"{result.path}: not fixed: cannot read it again ({exc.strerror or type(exc).__name__})")
        return
    text, problem = decode(raw)
    if problem is not None or text is None or text != result.text:
        outcome.notes.append(f"{result.path}: not fixed: the file changed while planlint was reading it")
        return
    original = load_text(text, limits)
    if original.fatal or not isinstance(original.data, dict):
        return
    if original.problems:  # PL002: other YAML tools keep the *last* duplicate, so no edit is certain
        outcome.notes.append(f"{result.path}: not fixed: it repeats a key (PL002); remove the duplicate first")
        return
    run = fix_text(text, original, result.findings, display=result.path, path=path, config=config, services=services)
    if publications is not None and publications.fatal():
        return  # the registry failed with on_error: fail; the CLI exits 2 and nothing is written
    if run.refused is not None:
        outcome.notes.append(f"{result.path}: not fixed: {run.refused}")
        return
    if not run.passes:
        return
    new_text = run.text
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
    if run.unsettled:
        outcome.notes.append(
            f"{result.path}: fixes still apply after {MAX_FIX_PASSES} passes, the most --fix makes: what those passes fixed is "
            f"{'written' if write else 'shown'} and the rest is reported (please report this)"
        )
    outcome.files.append(result.path)
    verb = "fixed" if write else "would fix"
    # Each finding resolved gets its line, at its position in the text its pass read (a later pass reads the text
    # the one before wrote), so the lines add up to the count: a fix's `also` too (the PL503 a PL502 fix resolves).
    for step in run.passes:
        resolved: list[tuple[int, int, str]] = []
        for fix in step.fixes:
            finding = step.fixable[(fix.code, yaml_path(fix.route))]
            resolved.append((finding.line, finding.column, f"{verb} {fix.code}: {fix.summary}"))
            for code, route in fix.fix.also:
                other = step.reported.get((code, yaml_path(route)))
                if other is not None:
                    resolved.append((other.line, other.column, f"{verb} {code}: by the {fix.code} fix ({fix.summary})"))
            if fix.fix.repin and write:
                ident, old, new = fix.fix.repin
                pinned = outcome.repinned.setdefault(result.path, {})
                pinned[ident] = (pinned[ident][0] if ident in pinned else old, new)  # from what the file said, to what it says now
        outcome.fixed += len(resolved)
        for line, column, what in sorted(resolved):
            outcome.lines.append(f"{sanitize(result.path)}:{line}:{column}: {what}")
