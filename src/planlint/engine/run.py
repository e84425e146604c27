"""A run: discover the files, prefetch what the rules will ask the registry, lint, finish.

This is the top of the engine. It calls down into discovery, the pool
(`parallel`, which lints each file with `lint.lint_file`) and the per-file
helpers; nothing below calls back up into it. `finish` adds what needs every
file at once: duplicate plan names (PL005) and the suppression bookkeeping
(PL009/PL010), then orders the findings.
"""

from __future__ import annotations

from typing import Iterable

from planlint.core import suppressions as supp
from planlint.core.config import Config
from planlint.core.loader import load_file
from planlint.core.messages import show
from planlint.core.model import FileResult, Report, is_plan
from planlint.core.positions import Span
from planlint.engine.discovery import discover
from planlint.engine.lint import make_finding
from planlint.engine.parallel import lint_targets
from planlint.rules import RULES
from planlint.services.publications import Publications, prefetch


def lint_paths(
    paths: Iterable[str], config: Config, *, extras: dict | None = None, named_as_discovered: bool = False, jobs: int | None = 1, cache=None
) -> Report:
    """Lint `paths`. `named_as_discovered`: a named file that is not a plan is skipped, not PL004
    (pre-commit names every staged YAML file; `--skip-non-plans`).

    `jobs`: worker processes (None: one per available CPU; small inputs stay in
    this process). `cache`: a cache.ResultCache, or None. Neither changes the
    findings (parallel.py).
    """
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


def prefetch_paths(publications: Publications, paths: Iterable[str], config: Config) -> None:
    """Read the plans about to be linted and prefetch their pins (only when a registry is in use)."""
    if publications.registry is None:
        return
    plans = []
    for _display, path, _explicit in discover(paths, config):
        loaded = load_file(path, config.parser_limits())
        if not loaded.fatal and is_plan(loaded.data):
            plans.append(loaded.data)
    prefetch(publications, plans)
