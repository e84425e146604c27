"""The engine: find plans, load them, run rules, place and filter findings.

Rules yield routes; this module turns them into positions, applies the
configuration (select/ignore/severity) and suppression comments, and adds the
file-level findings (PL001-PL006, PL009, PL010).
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from planlint.config import Config
from planlint.loader import Loaded, load_file
from planlint.messages import sanitize, show
from planlint.positions import START, Positions, Span, yaml_path
from planlint.rules import PLAN_RULES, RULES, PlanContext, Problem
from planlint import suppressions as supp

PLAN_API_VERSION = "planlint/v1"
PLAN_KIND = "ExperimentPlan"
YAML_SUFFIXES = (".yaml", ".yml")
_SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".planlint_cache"}


class UsageError(Exception):
    """Bad paths or arguments: exit status 2."""


@dataclass(frozen=True)
class Finding:
    code: str
    name: str
    severity: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    yaml_path: str

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code, self.yaml_path, self.message)


@dataclass
class FileResult:
    path: str
    is_plan: bool = False
    findings: list[Finding] = field(default_factory=list)
    suppressions: list = field(default_factory=list)
    plan_name: str | None = None
    name_span: Span | None = None
    text: str | None = None
    notes: list[str] = field(default_factory=list)  # not findings: e.g. rows a data check could not read
    data_skipped: list[str] = field(default_factory=list)  # split paths not found locally
    data: Any = None  # the plan's data, for repo-level and diff rules
    positions: Positions | None = None
    diff_checked: bool = False  # diff rules ran against a base version (diff mode)


@dataclass
class Report:
    files: int = 0
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)  # path -> text, for excerpts
    paths: list[str] = field(default_factory=list)  # every file checked, in order

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity == "warning")


# --------------------------------------------------------------------------- discovery


def discover(paths: Iterable[str], config: Config) -> list[tuple[str, Path, bool]]:
    """(display path, path, named explicitly) for every file to lint, in order."""
    found: list[tuple[str, Path, bool]] = []
    seen: set[str] = set()
    for arg in paths:
        path = Path(arg)
        if path.is_dir():
            # Per-directory path arithmetic, string joins per file: a monorepo has thousands.
            for directory, names in _walk(path, config):
                prefix = os.path.join(arg, os.path.relpath(directory, path))
                absolute = os.path.abspath(directory)
                for name in names:
                    key = os.path.normcase(os.path.join(absolute, name))
                    if key not in seen:
                        seen.add(key)
                        found.append((os.path.normpath(os.path.join(prefix, name)).replace(os.sep, "/"), Path(directory, name), False))
        elif path.exists() or path.is_symlink():
            if config.excluded(path):
                continue
            _add(found, seen, arg, path, True)
        else:
            raise UsageError(f"{arg}: no such file or directory")
    return found


def _add(found, seen, display, path, explicit) -> None:
    key = os.path.normcase(os.path.abspath(path))
    if key not in seen:
        seen.add(key)
        found.append((display, path, explicit))


def _walk(root: Path, config: Config) -> Iterator[tuple[str, list[str]]]:
    """(directory, sorted names of its YAML files) under root, directories in sorted order."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not config.excluded(Path(dirpath, d)))
        names = [n for n in sorted(filenames) if n.lower().endswith(YAML_SUFFIXES)]
        if config.exclude:
            names = [n for n in names if not config.excluded(Path(dirpath, n))]
        if names:
            yield dirpath, names


# --------------------------------------------------------------------------- one file


def is_plan(data: Any) -> bool:
    return isinstance(data, dict) and data.get("apiVersion") == PLAN_API_VERSION and data.get("kind") == PLAN_KIND


def _looks_like_plan(path: Path) -> bool:
    """Sniff a file that failed to load: is it meant to be a plan?"""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64 * 1024)
    except OSError:
        return False
    return b"ExperimentPlan" in head or PLAN_API_VERSION.encode() in head


def _not_a_plan(data: Any) -> Problem:
    if not isinstance(data, dict):
        what = "empty" if data is None else f"{'a list' if isinstance(data, list) else 'a scalar'}, not a mapping"
        return Problem((), f"not a plan: the top level is {what}; a plan is a mapping with apiVersion: {PLAN_API_VERSION} and kind: {PLAN_KIND}")
    if "apiVersion" not in data:
        return Problem(("apiVersion",), f"not a plan: apiVersion is missing; a v1 plan starts with apiVersion: {PLAN_API_VERSION}", missing=True)
    if data["apiVersion"] != PLAN_API_VERSION:
        return Problem(("apiVersion",), f"not a v1 plan: apiVersion is {show(data['apiVersion'])}, expected {PLAN_API_VERSION}")
    if "kind" not in data:
        return Problem(("kind",), f"not a plan: kind is missing; a plan has kind: {PLAN_KIND}", missing=True)
    return Problem(("kind",), f"not a plan: kind is {show(data['kind'])}, expected {PLAN_KIND}")


def make_finding(code: str, path: str, span: Span, message: str, route: tuple, config: Config, severity: str | None = None) -> Finding:
    rule = RULES[code]
    # Rules quote plan values through messages.show(); sanitizing the whole
    # message as well means a missed quote cannot forge a line or an escape.
    return Finding(code, rule.name, config.severity_of(code, severity or rule.severity), path, span.line, span.column, span.end_line, span.end_column, sanitize(message), yaml_path(route))


def place(problem: Problem, positions: Positions) -> Span:
    if problem.at_key and problem.route in positions.keys:
        return positions.keys[problem.route]
    return positions.resolve(problem.route, problem.missing)


def lint_file(display: str, path: Path, explicit: bool, config: Config, extras: dict | None = None) -> FileResult | None:
    """Lint one file. None when a discovered file turns out not to be a plan.

    `limits.time_budget` bounds the whole file: reading and parsing (checked
    while streaming), then schema validation and each rule (checked between
    them; each is linear in the capped node count). Past the budget the
    remaining checks are skipped and the file gets a PL006 saying so.
    """
    limits = config.parser_limits()
    deadline = time.monotonic() + limits.time_budget
    loaded: Loaded = load_file(path, limits)
    result = FileResult(display, text=loaded.text)
    if loaded.fatal:
        if not explicit and not _looks_like_plan(path):
            return None
        result.is_plan = True
        for problem in loaded.problems:
            if config.enabled(problem.code):
                result.findings.append(make_finding(problem.code, display, problem.span, problem.message, problem.route, config))
        return result
    data = loaded.data
    if not is_plan(data):
        if not explicit:
            return None
        if config.enabled("PL004"):
            problem = _not_a_plan(data)
            result.findings.append(make_finding("PL004", display, place(problem, loaded.positions), problem.message, problem.route, config))
        return result
    result.is_plan = True
    result.data = data
    result.positions = loaded.positions
    name = data.get("metadata", {}).get("name") if isinstance(data.get("metadata"), dict) else None
    if isinstance(name, str):
        result.plan_name = name
        result.name_span = loaded.positions.values.get(("metadata", "name"))

    raw: list[tuple[str, Problem]] = []
    for problem in loaded.problems:  # PL002
        if config.enabled(problem.code):
            result.findings.append(make_finding(problem.code, display, problem.span, problem.message, problem.route, config))
    if config.enabled("PL003"):
        from planlint.schema import schema_problems

        raw.extend(("PL003", p) for p in schema_problems(data))
    # A copy per file: the run's services are shared, "file" is this file's own.
    ctx = PlanContext(data=data, path=display, config=config, extras=dict(extras or {}))
    ctx.extras.setdefault("file", path)
    ctx.extras["notes"] = result.notes
    ctx.extras["data_skipped"] = result.data_skipped
    for rule in PLAN_RULES:
        if time.monotonic() > deadline:
            if config.enabled("PL006"):
                result.findings.append(make_finding(
                    "PL006", display, START,
                    f"checking took longer than {limits.time_budget:g}s (limit time_budget): {rule.code} and the rules after it did not run",
                    (), config,
                ))
            break
        if config.enabled(rule.code):
            raw.extend((problem.code or rule.code, problem) for problem in rule.check(ctx))
    for code, problem in raw:
        result.findings.append(make_finding(code, display, place(problem, loaded.positions), problem.message, problem.route, config, problem.severity))
    result.suppressions = supp.parse(loaded.text or "")
    if result.suppressions:
        result.findings = [f for f in result.findings if not supp.is_suppressed(result.suppressions, f.code, f.line)]
    return result


# --------------------------------------------------------------------------- a run


def lint_paths(
    paths: Iterable[str], config: Config, *, extras: dict | None = None, named_as_discovered: bool = False, jobs: int | None = 1, cache=None
) -> Report:
    """Lint `paths`. `named_as_discovered`: a named file that is not a plan is skipped, not PL004
    (pre-commit names every staged YAML file; `--skip-non-plans`).

    `jobs`: worker processes (None: one per available CPU; small inputs stay in
    this process). `cache`: a cache.ResultCache, or None. Neither changes the
    findings (parallel.py).
    """
    from planlint.parallel import lint_targets

    report = Report()
    targets = [(display, path, explicit and not named_as_discovered) for display, path, explicit in discover(paths, config)]
    results = lint_targets(targets, config, extras=extras, jobs=jobs, cache=cache)
    return finish([r for r in results if r is not None], config, report)


def _judged(code: str, result: FileResult, config: Config) -> bool:
    """Can a suppression of `code` be called unused here? Not if the rule did not run:
    diff rules (PL7xx) run only in diff mode, against a base version."""
    if not config.enabled(code):
        return False
    rule = RULES.get(code)
    return rule is None or rule.scope != "diff" or result.diff_checked


def finish(results: list[FileResult], config: Config, report: Report | None = None, *, other_names: dict[str, str] | None = None) -> Report:
    """Repo-level rules (PL005), suppression bookkeeping (PL009/PL010), ordering.

    `other_names`: names of plans that are not linted in this run but still
    count for PL005 (name -> path; diff mode passes the unchanged plans).
    """
    report = report or Report()
    if config.enabled("PL005"):
        first: dict[str, str] = dict(other_names or {})
        for result in results:
            if result.plan_name is None:
                continue
            if result.plan_name in first:
                span = result.name_span or Span(1, 1, 1, 1)
                if not supp.is_suppressed(result.suppressions, "PL005", span.line):
                    result.findings.append(
                        make_finding(
                            "PL005", result.path, span,
                            f"metadata.name {show(result.plan_name)} is already used by {first[result.plan_name]}: give each plan a unique name",
                            ("metadata", "name"), config,
                        )
                    )
            else:
                first[result.plan_name] = result.path
    skipped = [r.path for r in results if r.data_skipped]
    if skipped:
        shown = ", ".join(skipped[:3]) + (f" and {len(skipped) - 3} more" if len(skipped) > 3 else "")
        report.notes.append(
            f"data checks (PL207-PL209) skipped for {len(skipped)} plan{'s' if len(skipped) != 1 else ''} "
            f"whose split files are not in this checkout ({shown}); --require-data makes that an error"
        )
    for result in results:
        report.files += 1
        report.notes.extend(result.notes)
        report.paths.append(result.path)
        for s in result.suppressions:
            if not s.reason and config.enabled("PL009"):
                result.findings.append(
                    make_finding("PL009", result.path, s.span, f"suppression of {', '.join(s.codes) or 'nothing'} gives no reason: add one after --, e.g. '# planlint: {s.kind}={','.join(s.codes)} -- why this is fine'", (), config)
                )
            if config.enabled("PL010"):
                unused = [c for c in s.codes if c not in s.used and (not supp.valid_code(c) or _judged(c, result, config))]
                if unused and not supp.is_suppressed(result.suppressions, "PL010", s.span.line):
                    what = "suppresses nothing" if len(unused) == len(s.codes) else f"does not need {', '.join(unused)}"
                    result.findings.append(
                        make_finding("PL010", result.path, s.span, f"this suppression {what}: remove {'it' if len(unused) == len(s.codes) else 'those codes'}", (), config)
                    )
        if result.findings and result.text is not None:
            report.sources[result.path] = result.text
        report.findings.extend(result.findings)
    report.findings.sort(key=lambda f: f.sort_key)
    return report
