"""A run: discover the files, prefetch what the rules will ask the registry, lint, finish.

This is the top of the engine. It calls down into discovery, the pool
(`parallel`, which lints each file with `lint.lint_file`) and the per-file
helpers; nothing below calls back up into it. `finish` adds what needs every
file at once: it calls the repo-level rules on a RepoContext of the run's
plans (committed spend PL507, duplicate plan names PL005, run configs no plan
names PL904) and the suppression rules on each file's comments (PL009/PL010,
also for the run configs the plans report in), then orders the findings.
The config arrives resolved (`config.rules`): which rules run is decided once.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Iterable

from planlint.core import suppressions as supp
from planlint.core.config import Config
from planlint.core.loader import load_file, load_text, read_text
from planlint.core.model import FileResult, Report, is_plan
from planlint.core.paths import repository_root
from planlint.core.positions import START
from planlint.engine.discovery import discover
from planlint.engine.lint import lint_file, make_finding, place
from planlint.engine.parallel import lint_targets
from planlint.engine.plan_names import commitment, mentions, plan_paths, read_name, shown_path
from planlint.rules import RULES, resolved, rule_code
from planlint.rules.base import NamedPlan, Note, RepoContext, Services, SuppressionContext
from planlint.rules.budget import PER_MONTH_ROUTE
from planlint.rules.run import named_training_configs
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
    facts = cache.plan_facts() if cache is not None else None  # the other plans' names and caps, kept per file version
    other_names = None
    if "PL005" in config.rules and any(explicit for _, _, explicit in discovered):
        wanted = {r.plan_name for r in results if r.plan_name is not None}
        first_named = next(path for _, path, explicit in discovered if explicit)
        other_names = repository_plan_names(  # the named file's repository, wherever the run starts
            [path for _, path, _ in discovered], wanted, config, start=os.path.dirname(os.path.abspath(first_named)), facts=facts
        )
    other_commitments = None
    if config.committed_limit and "PL507" in config.rules and any(explicit for _, _, explicit in discovered):
        first_named = next(path for _, path, explicit in discovered if explicit)
        other_commitments = repository_commitments(  # the named file's repository, as for PL005
            [path for _, path, _ in discovered], config, start=os.path.dirname(os.path.abspath(first_named)), facts=facts
        )
    if facts is not None:
        facts.save()
    report.notes.extend(empty_directory_notes(paths, targets, results))
    return finish(results, config, report, other_names=other_names, other_commitments=other_commitments)


def lint_content(
    display: str, path: Path, content: bytes, config: Config, *, services: Services | None = None, named_as_discovered: bool = False,
) -> Report:
    """Lint `content` as the plan at `path`, shown as `display` (`planlint - --stdin-filename PATH`).

    As for a file named on the command line: `exclude` applies (an excluded
    path is not linted), and PL005 and PL507 count the repository's other
    plans (the file at `path` itself, if there is one, is the one being
    linted). Never cached: the content is not the file's.
    """
    config = resolved(config)
    if config.excluded(path):
        return finish([], config)
    result = lint_file(display, path, not named_as_discovered, config, services, content=content)
    if result is None:
        return finish([], config)
    result.data = result.positions = None  # as lint_targets drops them: nothing later reads them
    start = os.path.dirname(os.path.abspath(path))
    other_names = None
    if "PL005" in config.rules and result.plan_name is not None:
        other_names = repository_plan_names([path], {result.plan_name}, config, start=start)
    other_commitments = None
    if config.committed_limit and "PL507" in config.rules:
        other_commitments = repository_commitments([path], config, start=start)
    return finish([result], config, other_names=other_names, other_commitments=other_commitments)


def repository_commitments(linted: list[Path], config: Config, *, start: str | None = None, facts=None) -> list[tuple[str, float]]:
    """(currency, max_spend) of the repository's other approved and running plans (PL507 on named files).

    As for PL005: the pre-commit hook names only the staged plans, but the
    committed spend PL507 limits is the repository's, so the plans under the
    repository's `plans/` that this run does not lint count (as diff mode's
    unchanged plans do). Read only when `budget.committed_limit` is set; a
    file whose bytes say neither `approved` nor `running` (and hold no
    backslash) commits nothing and is not parsed. `start`: where to look for
    the repository (default: the working directory). `facts`: a
    plan_facts.PlanFacts that keeps each file's answer while the file is unchanged.
    """
    root = repository_root(os.path.abspath(start or os.getcwd()))
    plans_dir = os.path.join(root, "plans")
    if not os.path.exists(os.path.join(root, ".git")) or not os.path.isdir(plans_dir):
        return []
    skip = {os.path.normcase(os.path.realpath(path)) for path in linted}
    found: list[tuple[str, float]] = []
    for path in plan_paths(plans_dir, config):
        if facts is not None:
            found_here = facts.get(path, "commit", lambda path=path: commitment(path, config))
        else:
            found_here = commitment(path, config)
        if found_here is not None and os.path.normcase(os.path.realpath(path)) not in skip:
            found.append(found_here)
    return found


def repository_plan_names(
    linted: list[Path], wanted: set[str], config: Config, *, start: str | None = None, display_root: str | None = None, facts=None
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
    the document's directory and its workspace root. `facts`: a
    plan_facts.PlanFacts that keeps each file's name while the file is unchanged
    (every file's name is then read once, and not again).
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
    for path in plan_paths(shown_dir, config):
        if facts is not None:
            name = facts.get(path, "name", lambda path=path: read_name(Path(path), config))
        elif mentions(path, needles, config.max_file_size):
            name = read_name(Path(path), config)
        else:
            continue
        if name is not None and name in wanted and os.path.normcase(os.path.realpath(path)) not in skip:
            if display_root is not None:
                display = os.path.relpath(path, display_root).replace(os.sep, "/")
            else:
                display = shown_path(shown_dir, path)
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


def _unplanned_runs(ctx: RepoContext, config: Config) -> list[FileResult]:
    """PL904 (rules.run.unplanned_run): a result for each training config no plan names, holding
    the finding unless the config's own comments suppress it (their bookkeeping needs the result either way)."""
    found: list[FileResult] = []
    for problem in RULES["PL904"].check(ctx):
        document = problem.document
        result = FileResult(document.path, text=document.text)
        result.suppressions = supp.parse_toml(document.text or "", rule_code)  # its real TOML comments; rules by code or name
        span = place(problem, document.positions)
        if "PL904" in config.narrowed(result.path).rules and not supp.is_suppressed(result.suppressions, "PL904", span.line):
            result.findings.append(make_finding("PL904", result.path, span, problem.message, problem.route, config, problem.severity))
        found.append(result)
    return found


def _named_by_other_plans(root: str, config: Config, linted: set[str], candidates: list[Path], vouch=None) -> set[str]:
    """Training configs named by the repository's plans that this run did not lint and that may vouch for a run.

    Such a plan vouches only when it has no error of its own (linted here with
    the run's config): a decoy "plan" outside the linted paths, broken on
    purpose, cannot make an unplanned run look planned. `vouch(path)`: a further
    test (diff mode: the plan was present at the base revision). Only files that
    mention a candidate's file name are read, and the walk stops once every
    candidate is accounted for: a pre-commit run on one plan does not read the
    whole repository.
    """
    named: set[str] = set()
    wanted = {os.path.abspath(p) for p in candidates}
    names = {p.name for p in candidates}
    for display, path, _ in discover([root], config):
        if os.path.realpath(path) in linted:
            continue
        text, problem = read_text(path, config.max_file_size)
        if problem is not None or text is None or not any(name in text for name in names):
            continue
        loaded = load_text(text, config.parser_limits())
        if loaded.fatal or not is_plan(loaded.data):
            continue
        configs = named_training_configs(loaded.data, Path(root))
        if not set(configs) & ({os.path.realpath(p) for p in wanted} | wanted):
            continue
        if vouch is not None and not vouch(str(path)):
            continue
        result = lint_file(display, Path(path), False, config)
        if result is None or any(finding.severity == "error" for finding in result.findings):
            continue  # a plan with errors of its own vouches for nothing
        named.update(configs)
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
    reported: list[FileResult] | None = None, changed_configs: dict[str, str] | None = None, changed_root: str | None = None,
    vouch=None,
) -> Report:
    """Repo-level rules (PL005, PL507, PL904), suppression bookkeeping (PL009/PL010), ordering.

    `other_names`: names of plans that are not linted in this run but still
    count for PL005 (name -> path; diff mode passes the unchanged plans).
    `other_commitments`: (currency, max_spend) of approved and running plans
    that are not linted but count for PL507 (diff mode: the unchanged ones).
    `reported`: filled with every file's result reported on, the plans' and the
    other files' (run configs, PL904's): diff mode lists their new suppressions.
    `changed_configs`, `changed_root`, `vouch`: diff mode's, for PL904: the training
    configs the pull request adds ("added") or changes ("modified") by absolute path,
    in the repository at `changed_root`; and which plans outside the run may vouch
    for a run (`vouch(path)`: present at the base revision).
    """
    config = resolved(config)
    report = report or Report()
    ctx = _repo_context(results, config, other_names, other_commitments, run_configs="PL904" in config.rules, vouch=vouch)
    ctx.changed_configs, ctx.changed_root = dict(changed_configs or {}), changed_root
    if "PL507" in config.rules:
        _repo_findings("PL507", ctx, results, report)
    if "PL005" in config.rules:
        _repo_findings("PL005", ctx, results, report)
    plans = len(results)
    if "PL904" in config.rules:
        results = results + _unplanned_runs(ctx, config)
    skipped = [r.path for r in results if r.data_skipped]
    if skipped:
        shown = ", ".join(skipped[:3]) + (f" and {len(skipped) - 3} more" if len(skipped) > 3 else "")
        report.notes.append(
            f"data checks (PL207-PL211) skipped for {len(skipped)} plan{'s' if len(skipped) != 1 else ''} "
            f"whose split files are not in this checkout ({shown}); --require-data makes that an error"
        )
    every = _with_attached(results)
    if reported is not None:
        reported.extend(every)
    for index, result in enumerate(every):
        if index < plans:  # run configs are reported on, not counted as checked plans
            report.files += 1
            report.paths.append(result.path)
        report.notes.extend(result.notes)
        if result.missing_inputs:
            report.missing_inputs[result.path] = result.missing_inputs
        here = config.narrowed(result.path, result.status)  # per-file-ignores and severities by status
        if here is not config:  # also for what lint_file did not place: the run configs' findings, the diff rules'
            off, levels = config.rules.enabled - here.rules.enabled, here.rules.severities
            result.findings = [
                f if levels.get(f.code, f.severity) == f.severity else replace(f, severity=levels[f.code])
                for f in result.findings if f.code not in off
            ]
        if result.suppressions:
            ctx = SuppressionContext(result.path, result.suppressions, lambda code, result=result, here=here: _judged(code, result, here), here)
            if "PL009" in here.rules:
                # Not silenced by a suppression: the comment that needs a reason is what it reports.
                for problem in RULES["PL009"].check(ctx):
                    result.findings.append(make_finding("PL009", result.path, problem.span, problem.message, problem.route, here))
            if "PL010" in here.rules:
                for problem in RULES["PL010"].check(ctx):
                    if not supp.is_suppressed(result.suppressions, "PL010", problem.span.line):
                        result.findings.append(make_finding("PL010", result.path, problem.span, problem.message, problem.route, here))
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


def _repo_context(
    results: list[FileResult], config: Config, other_names: dict[str, str] | None, other_commitments: list[tuple[str, float]] | None,
    *, run_configs: bool, vouch=None,
) -> RepoContext:
    """What the repo-level rules (PL005, PL507, PL904) see of the run: each plan's path,
    name, commitment and (`run_configs`: only for PL904) named training configs, and what
    counts without being linted."""
    plans = []
    for r in results:
        configs = tuple(r.run_configs) + tuple(os.path.realpath(other.path) for other in r.attached) if run_configs else ()
        committed = (r.committed_currency, r.committed_amount) if r.committed_currency is not None and r.committed_amount is not None else None
        plans.append(NamedPlan(r.path, r.plan_name, committed, r.repo_root, configs, per_month=r.committed_per_month))
    linted = None

    def named_elsewhere(root: str, candidates: list[Path]) -> set[str]:
        nonlocal linted
        if linted is None:
            linted = {os.path.realpath(r.path) for r in results}
        return _named_by_other_plans(root, config, linted, candidates, vouch)

    return RepoContext(plans, dict(other_names or {}), config, list(other_commitments or []), named_elsewhere)


# Where a repo-level problem goes: the plan's data and positions are gone by
# now, so lint_file kept the spans these routes point at.
_KEPT_SPANS = {("metadata", "name"): "name_span", ("budget", "max_spend"): "spend_span", PER_MONTH_ROUTE: "spend_span"}


def _repo_findings(code: str, ctx: RepoContext, results: list[FileResult], report: Report) -> None:
    """Run the repo-level rule `code` and file its problems (at the plan each names) and notes."""
    by_path = {result.path: result for result in results}
    for problem in RULES[code].check(ctx):
        if isinstance(problem, Note):
            report.notes.append(problem.text)
            continue
        result = by_path[problem.path]
        here = ctx.config.narrowed(result.path, result.status)  # per-file-ignores and severities by status
        span = getattr(result, _KEPT_SPANS[problem.route]) or START
        if code in here.rules and not supp.is_suppressed(result.suppressions, code, span.line):
            result.findings.append(make_finding(code, result.path, span, problem.message, problem.route, here))
