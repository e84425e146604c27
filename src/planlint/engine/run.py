"""A run: discover the files, prefetch what the rules will ask the registry, lint, finish.

This is the top of the engine. It calls down into discovery, the pool
(`parallel`, which lints each file with `lint.lint_file`) and the per-file
helpers; nothing below calls back up into it. `finish` adds what needs every
file at once: duplicate plan names (PL005), run configs no plan names (PL904)
and the suppression bookkeeping (PL009/PL010, also for the run configs the
plans report in), then orders the findings.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from planlint.core import suppressions as supp
from planlint.core.config import Config
from planlint.core.loader import load_file, load_text, read_text
from planlint.core.model import FileResult, Report, is_plan
from planlint.core.paths import repository_root
from planlint.core.positions import START, Span
from planlint.engine.discovery import discover
from planlint.engine.lint import make_finding
from planlint.engine.parallel import lint_targets
from planlint.engine.plan_names import mentions, plan_files, read_name
from planlint.rules import RULES, resolved, rule_code
from planlint.rules.base import NamedPlan, RepoContext, Services, SuppressionContext
from planlint.rules.budget import committed, money
from planlint.rules.run import display_path, inside, named_training_configs, training_configs
from planlint.services.run_config import TomlDocument, read_document
from planlint.services.publications import Publications, prefetch


def lint_paths(
    paths: Iterable[str], config: Config, *, services: Services | None = None, named_as_discovered: bool = False, jobs: int | None = 1, cache=None
) -> Report:
    """Lint `paths`. `named_as_discovered`: a named file that is not a plan is skipped, not PL004
    (pre-commit names every staged YAML file; `--skip-non-plans`).

    `jobs`: worker processes (None: one per available CPU; small inputs stay in
    this process). `cache`: a cache.ResultCache, or None. Neither changes the
    findings (parallel.py).
    """
    config = resolved(config)  # select/ignore/severity, once for the whole run
    report = Report()
    paths = list(paths)
    discovered = discover(paths, config)
    targets = [(display, path, explicit and not named_as_discovered) for display, path, explicit in discovered]
    results = lint_targets(targets, config, services=services, jobs=jobs, cache=cache)
    results = [r for r in results if r is not None]
    other_names = None
    if "PL005" in config.rules and any(explicit for _, _, explicit in discovered):
        wanted = {r.plan_name for r in results if r.plan_name is not None}
        first_named = next(path for _, path, explicit in discovered if explicit)
        other_names = repository_plan_names(  # the named file's repository, wherever the run starts
            [path for _, path, _ in discovered], wanted, config, start=os.path.dirname(os.path.abspath(first_named))
        )
    other_commitments = None
    if config.committed_limit and "PL507" in config.rules and any(explicit for _, _, explicit in discovered):
        first_named = next(path for _, path, explicit in discovered if explicit)
        other_commitments = repository_commitments(  # the named file's repository, as for PL005
            [path for _, path, _ in discovered], config, start=os.path.dirname(os.path.abspath(first_named))
        )
    report.notes.extend(empty_directory_notes(paths, targets, results))
    return finish(results, config, report, other_names=other_names, other_commitments=other_commitments)


def repository_commitments(linted: list[Path], config: Config, *, start: str | None = None) -> list[tuple[str, float]]:
    """(currency, max_spend) of the repository's other approved and running plans (PL507 on named files).

    As for PL005: the pre-commit hook names only the staged plans, but the
    committed spend PL507 limits is the repository's, so the plans under the
    repository's `plans/` that this run does not lint count (as diff mode's
    unchanged plans do). Read only when `budget.committed_limit` is set; a
    file whose bytes say neither `approved` nor `running` (and hold no
    backslash) commits nothing and is not parsed. `start`: where to look for
    the repository (default: the working directory).
    """
    root = repository_root(os.path.abspath(start or os.getcwd()))
    plans_dir = os.path.join(root, "plans")
    if not os.path.exists(os.path.join(root, ".git")) or not os.path.isdir(plans_dir):
        return []
    skip = {os.path.normcase(os.path.realpath(path)) for path in linted}
    found: list[tuple[str, float]] = []
    for _display, path in plan_files(plans_dir, config):
        if os.path.normcase(os.path.realpath(path)) in skip or not mentions(path, [b"approved", b"running"], config.max_file_size):
            continue
        loaded = load_file(Path(path), config.parser_limits())
        if not loaded.fatal and is_plan(loaded.data):
            commitment = committed(loaded.data)
            if commitment is not None:
                found.append(commitment)
    return found


def repository_plan_names(
    linted: list[Path], wanted: set[str], config: Config, *, start: str | None = None, display_root: str | None = None
) -> dict[str, str]:
    """metadata.name -> path, for the repository's other plans named like a linted one (PL005 on named files).

    pre-commit names only the staged files, so a new plan reusing the name of
    a plan already committed would pass the hook and fail the next full run.
    When files are named inside a git repository, the plans under the
    repository's `plans/` directory (where the hook's files come from) that
    this run does not lint count for PL005, as diff mode's unchanged plans do.
    The hook must stay fast with thousands of plans there: a file whose bytes
    do not contain one of the `wanted` names (the linted plans' names) cannot
    share one and is not parsed; the few that do are read exactly
    (`plan_names.read_name`).

    `start`: where to look for the repository (default: the working
    directory, as the CLI runs); `display_root`: what the paths shown are
    relative to (default: the working directory). The language server passes
    the document's directory and its workspace root.
    """
    if not wanted:
        return {}
    root = repository_root(os.path.abspath(start or os.getcwd()))
    plans_dir = os.path.join(root, "plans")
    if not os.path.exists(os.path.join(root, ".git")) or not os.path.isdir(plans_dir):
        return {}
    # A name without whitespace is in the file's bytes as written, unless escaped (mentions() reads any
    # file with a backslash); one with whitespace may be folded over lines: then every file is read.
    needles = None if any(ch.isspace() for name in wanted for ch in name) else [name.encode("utf-8", "surrogatepass") for name in wanted]
    shown_dir = os.path.relpath(plans_dir)
    skip = {os.path.normcase(os.path.realpath(path)) for path in linted}
    names: dict[str, str] = {}
    for display, path in plan_files(shown_dir, config):
        if not mentions(path, needles, config.max_file_size):
            continue
        if os.path.normcase(os.path.realpath(path)) in skip:
            continue
        name = read_name(Path(path), config)
        if name is not None and name in wanted:
            if display_root is not None:
                display = os.path.relpath(path, display_root).replace(os.sep, "/")
            names.setdefault(name, display)
    return names


def empty_directory_notes(paths: list[str], targets: list, results: list[FileResult]) -> list[str]:
    """A note for each directory named on the command line under which no plan was found."""
    notes = []
    for arg in paths:
        if not os.path.isdir(arg):
            continue
        prefix = os.path.normpath(arg).replace(os.sep, "/")
        prefix = "" if prefix == "." else prefix.rstrip("/") + "/"
        if any(r.is_plan and r.path.startswith(prefix) for r in results):
            continue
        yaml_files = sum(1 for display, _, _ in targets if display.startswith(prefix))
        held = f"its {yaml_files} YAML file{'s' if yaml_files != 1 else ''} {'are' if yaml_files != 1 else 'is'} not plans" if yaml_files else "it holds no *.yaml or *.yml file"
        notes.append(f"{arg}: no plan found under this directory ({held}); nothing in it was checked")
    return notes


def _judged(code: str, result: FileResult, config: Config) -> bool:
    """Can a suppression of `code` be called unused here? Not if the rule did not run:
    diff rules (PL7xx) run only in diff mode, against a base version."""
    if code not in config.rules:
        return False
    rule = RULES.get(code)
    return rule is None or rule.scope != "diff" or result.diff_checked


def _unplanned_runs(results: list[FileResult], config: Config) -> list[FileResult]:
    """PL904: a result for each training config under configs/training/ of the linted plans'
    repositories that no plan names (plans not linted in this run are read for their run section)."""
    named = {path for r in results for path in r.run_configs}
    for r in results:
        named.update(os.path.realpath(other.path) for other in r.attached)
    found: list[FileResult] = []
    for root in sorted({r.repo_root for r in results if r.repo_root}):
        def planned(path: Path) -> bool:
            return os.path.abspath(path) in named or os.path.realpath(path) in named

        candidates = [p for p in training_configs(root) if not planned(p)]
        if candidates:
            named |= _named_by_other_plans(root, config, {os.path.realpath(r.path) for r in results}, candidates)
        for path in candidates:
            if planned(path):
                continue
            display = display_path(path)
            if inside(path, root) and path.is_file():
                document = read_document(path, display, "training", config.max_file_size)
            else:  # a link out of the repository: named, never read
                document = TomlDocument(display, "training")
            result = FileResult(display, text=document.text)
            result.suppressions = supp.parse(document.text or "", resolve=rule_code)  # rules by code or name, as in plans
            span = document.positions.values.get(("experiment",)) or START
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            message = (f"no plan names this training config: a run nobody reviewed. Name it from its plan "
                       f"(run: {{platform: osmosis, training_config: {rel}}}), or delete it")
            if not supp.is_suppressed(result.suppressions, "PL904", span.line):
                result.findings.append(make_finding("PL904", display, span, message, ("experiment",) if span != START else (), config))
            found.append(result)
    return found


def _named_by_other_plans(root: str, config: Config, linted: set[str], candidates: list[Path]) -> set[str]:
    """Training configs named by the repository's plans that this run did not lint.

    Only files that mention a candidate's file name are parsed, and the walk
    stops once every candidate is accounted for: a pre-commit run on one plan
    does not parse the whole repository.
    """
    named: set[str] = set()
    wanted = {os.path.abspath(p) for p in candidates}
    names = {p.name for p in candidates}
    for _, path, _ in discover([root], config):
        if os.path.realpath(path) in linted:
            continue
        text, problem = read_text(path, config.max_file_size)
        if problem is not None or text is None or not any(name in text for name in names):
            continue
        loaded = load_text(text, config.parser_limits())
        if not loaded.fatal and is_plan(loaded.data):
            named.update(named_training_configs(loaded.data, Path(root)))
            if all(p in named or os.path.realpath(p) in named for p in wanted):
                break
    return named


def _with_attached(results: list[FileResult]) -> list[FileResult]:
    """The plans' results, then one result per other file they name (a run config two plans
    share is one file: its findings once, its suppressions used by either)."""
    out = list(results)
    merged: dict[str, FileResult] = {}
    for result in results:
        for other in result.attached:
            other.diff_checked = other.diff_checked or result.diff_checked
            first = merged.get(other.path)
            if first is None:
                merged[other.path] = other
                out.append(other)
                continue
            known = set(first.findings)
            first.findings.extend(f for f in other.findings if f not in known)
            first.diff_checked = first.diff_checked or other.diff_checked
            for mine, theirs in zip(first.suppressions, other.suppressions):
                mine.used |= theirs.used
    return out


def finish(
    results: list[FileResult], config: Config, report: Report | None = None, *,
    other_names: dict[str, str] | None = None, other_commitments: list[tuple[str, float]] | None = None,
) -> Report:
    """Repo-level rules (PL005, PL507, PL904), suppression bookkeeping (PL009/PL010), ordering.

    `other_names`: names of plans that are not linted in this run but still
    count for PL005 (name -> path; diff mode passes the unchanged plans).
    `other_commitments`: (currency, max_spend) of approved and running plans
    that are not linted but count for PL507 (diff mode: the unchanged ones).
    """
    config = resolved(config)
    report = report or Report()
    _committed_over_limit(results, config, report, other_commitments or [])
    if "PL005" in config.rules:
        by_path = {result.path: result for result in results}
        ctx = RepoContext([NamedPlan(r.path, r.plan_name) for r in results], dict(other_names or {}), config)
        for problem in RULES["PL005"].check(ctx):
            result = by_path[problem.path]
            span = result.name_span or Span(1, 1, 1, 1)  # positions are gone by now; the name's span was kept
            if not supp.is_suppressed(result.suppressions, "PL005", span.line):
                result.findings.append(make_finding("PL005", result.path, span, problem.message, problem.route, config))
    plans = len(results)
    if "PL904" in config.rules:
        results = results + _unplanned_runs(results, config)
    skipped = [r.path for r in results if r.data_skipped]
    if skipped:
        shown = ", ".join(skipped[:3]) + (f" and {len(skipped) - 3} more" if len(skipped) > 3 else "")
        report.notes.append(
            f"data checks (PL207-PL211) skipped for {len(skipped)} plan{'s' if len(skipped) != 1 else ''} "
            f"whose split files are not in this checkout ({shown}); --require-data makes that an error"
        )
    for index, result in enumerate(_with_attached(results)):
        if index < plans:  # run configs are reported on, not counted as checked plans
            report.files += 1
            report.paths.append(result.path)
        report.notes.extend(result.notes)
        if result.missing_inputs:
            report.missing_inputs[result.path] = result.missing_inputs
        if result.suppressions:
            ctx = SuppressionContext(result.path, result.suppressions, lambda code, result=result: _judged(code, result, config), config)
            if "PL009" in config.rules:
                # Not silenced by a suppression: the comment that needs a reason is what it reports.
                for problem in RULES["PL009"].check(ctx):
                    result.findings.append(make_finding("PL009", result.path, problem.span, problem.message, problem.route, config))
            if "PL010" in config.rules:
                for problem in RULES["PL010"].check(ctx):
                    if not supp.is_suppressed(result.suppressions, "PL010", problem.span.line):
                        result.findings.append(make_finding("PL010", result.path, problem.span, problem.message, problem.route, config))
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


def _committed_over_limit(results: list[FileResult], config: Config, report: Report, others: list[tuple[str, float]]) -> None:
    """PL507: at the plan whose cap takes a currency's committed spend over budget.committed_limit.

    Plans count in order: `others` (not linted) first, then `results` by path.
    When `others` alone are over, the first linted plan that commits money in
    that currency gets the finding; when there is none, a note says so.
    """
    limits = config.committed_limit
    if not limits or "PL507" not in config.rules:
        return
    ordered = sorted((r for r in results if r.committed_currency in limits), key=lambda r: r.path)
    before: dict[str, float] = {}
    for currency, amount in others:
        before[currency] = before.get(currency, 0.0) + amount
    total = dict(before)
    for result in ordered:
        total[result.committed_currency] = total.get(result.committed_currency, 0.0) + result.committed_amount
    for currency, limit in limits.items():
        if total.get(currency, 0.0) <= limit:
            continue
        running = before.get(currency, 0.0)
        culprit = None
        for result in ordered:
            if result.committed_currency != currency:
                continue
            running += result.committed_amount
            if running > limit or before.get(currency, 0.0) > limit:
                culprit = result
                break
        what = (
            f"committed spend (max_spend of approved and running plans) in {currency} is {money(total[currency])} {currency}, "
            f"over budget.committed_limit of {money(limit)} {currency}"
        )
        if culprit is None:
            report.notes.append(f"{what}; no plan checked in this run commits {currency}, so PL507 has no plan to report it at")
            continue
        if before.get(currency, 0.0) > limit:
            why = f"without this plan it is already {money(before[currency])} {currency}"
        else:
            why = f"this plan's cap of {money(culprit.committed_amount)} {currency} takes it over (to {money(running)} {currency} counting plans in path order)"
        span = culprit.spend_span or START
        if supp.is_suppressed(culprit.suppressions, "PL507", span.line):
            continue
        culprit.findings.append(make_finding(
            "PL507", culprit.path, span,
            f"{what}: {why}; lower a cap, finish or abandon a plan, or raise the limit in the config with review",
            ("budget", "max_spend"), config,
        ))
