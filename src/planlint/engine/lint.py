"""Lint one file: load it, run the rules, place and filter the findings.

Rules yield routes; this module turns them into positions, applies the run's
resolved rules (`config.rules`: which rules run, at what severity) and
suppression comments, and adds the file-level findings (PL001-PL004, PL006,
PL007). The run around it (engine.run) adds the repo-level ones (PL005, PL507,
PL904, PL009, PL010).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from planlint.core import suppressions as supp
from planlint.core.config import Config
from planlint.core.loader import Loaded, load_bytes, load_file
from planlint.core.messages import sanitize
from planlint.core.model import FileResult, Finding, is_plan
from planlint.core.positions import Positions, Span, START, yaml_path
from planlint.core.yaml_values import scalar_text
from planlint.rules import PLAN_RULES, RULES, PlanContext, Problem, resolved, rule_code
from planlint.rules.base import Note, Services
from planlint.rules.budget import commitment_route, committed, uncounted
from planlint.rules.run import named_configs
from planlint.rules.secrets import comment_problems


def make_finding(code: str, path: str, span: Span, message: str, route: tuple, config: Config, severity: str | None = None) -> Finding:
    rule = RULES[code]
    # Rules quote plan values through messages.show(); sanitizing the whole
    # message as well means a missed quote cannot forge a line or an escape.
    return Finding(code, rule.name, config.rules.severity(code, severity or rule.severity), path, span.line, span.column, span.end_line, span.end_column, sanitize(message), yaml_path(route))


def place(problem: Problem, positions: Positions) -> Span:
    if problem.span is not None:  # a check about the text (a suppression comment), not the data
        return problem.span
    if problem.document is not None:
        positions = problem.document.positions
        if not problem.route and problem.document.error is not None:
            return problem.document.error[1]  # where the TOML parser stopped
    if problem.at_key and problem.route in positions.keys:
        return positions.keys[problem.route]
    return positions.resolve(problem.route, problem.missing)


def _missing_inputs(data: dict) -> list[str]:
    """The plan's `missing_inputs` as text (items that are not text are PL003's, and left out)."""
    items = data.get("missing_inputs")
    if not isinstance(items, list):
        return []
    return [scalar_text(item) for item in items if item is not None and not isinstance(item, (dict, list)) and scalar_text(item).strip()]


def attached_result(result: FileResult, document: Any) -> FileResult:
    """The FileResult of another file the plan names (a run config), made on first use."""
    for other in result.attached:
        if other.path == document.path:
            return other
    other = FileResult(document.path, text=document.text)
    text = document.text or ""
    # A TOML file's real comments only (a string holding the text suppresses nothing); rules by code or name.
    other.suppressions = supp.parse_toml(text, rule_code) if document.path.lower().endswith(".toml") else \
        supp.parse(text, getattr(document, "quoted", ()), resolve=rule_code)  # a trainer's YAML or script: its quoted strings are no comments
    result.attached.append(other)
    return other


def add_finding(
    result: FileResult, code: str, problem: Problem, positions: Positions | None, config: Config, *,
    suppressed: bool = False, unsuppressible: bool = False,
) -> None:
    """Place `problem` and add it to `result`, or to the result of the file it is in (problem.document).

    `suppressed`: drop it when a suppression comment of its file covers it
    (lint_file filters the plan's own findings in one pass at the end).
    `unsuppressible`: no comment of any file silences it (diff mode's PL707 and
    PL708: the pull request wrote those comments).
    """
    target = result
    if problem.document is not None:
        target = attached_result(result, problem.document)
        suppressed = not unsuppressible  # the run config's own comments
    span = place(problem, positions) if positions is not None or problem.document is not None else START
    if suppressed and supp.is_suppressed(target.suppressions, code, span.line):
        return
    target.findings.append(make_finding(code, target.path, span, problem.message, problem.route, config, problem.severity))


def lint_file(display: str, path: Path, explicit: bool, config: Config, services: Services | None = None, *, content: bytes | None = None) -> FileResult | None:
    """Lint one file. None when a discovered file turns out not to be a plan.

    `services`: the run's (catalog, registry, ...), shared by every file.
    `content`: the file's bytes as an editor holds them (the language server), instead of reading `path`.
    `config`: the run's, its rules resolved once (`rules.resolved`); resolved here when it is not.

    `limits.time_budget` bounds the whole file: reading and parsing (checked
    while streaming), then schema validation and each rule (checked between
    them; each is linear in the capped node count). Past the budget the
    remaining checks are skipped and the file gets a PL006 saying so. The
    time of the data rules (scope "data": reading the split files) is not
    counted: `data.time_budget` bounds them.
    """
    config = resolved(config).narrowed(path)  # without the rules per-file-ignores turns off for this file
    selected = config.rules
    limits = config.parser_limits()
    deadline = time.monotonic() + limits.time_budget
    loaded: Loaded = load_file(path, limits) if content is None else load_bytes(content, limits)
    result = FileResult(display, text=loaded.text)
    if loaded.fatal:
        # Whether it was meant to be a plan cannot be told from what did not
        # load (a marker can be escaped, or 64 KiB down): a YAML file in a linted
        # directory that cannot be read or parsed is reported, unless excluded.
        result.is_plan = True
        for problem in loaded.problems:
            if problem.code in selected:
                result.findings.append(make_finding(problem.code, display, problem.span, problem.message, problem.route, config))
        return result
    data = loaded.data
    if not is_plan(data):
        if not explicit:
            near = list(RULES["PL007"].check(PlanContext(data=data, path=display, config=config))) if "PL007" in selected else []
            if not near:
                return None
            for problem in near:
                result.findings.append(make_finding("PL007", display, place(problem, loaded.positions), problem.message, problem.route, config))
            result.suppressions = supp.parse(loaded.text or "", loaded.quoted, rule_code)
            result.findings = [f for f in result.findings if not supp.is_suppressed(result.suppressions, f.code, f.line)]
            return result
        if "PL004" in selected:
            for problem in RULES["PL004"].check(PlanContext(data=data, path=display, config=config)):
                result.findings.append(make_finding("PL004", display, place(problem, loaded.positions), problem.message, problem.route, config))
        return result
    result.is_plan = True
    result.data = data
    result.positions = loaded.positions
    status = data.get("metadata", {}).get("status") if isinstance(data.get("metadata"), dict) else None
    if isinstance(status, str):
        result.status = status
        config = config.narrowed(path, status)  # the severities `severity:` sets for this status
        selected = config.rules
    result.missing_inputs = _missing_inputs(data)
    name = data.get("metadata", {}).get("name") if isinstance(data.get("metadata"), dict) else None
    if isinstance(name, str):
        result.plan_name = name
        result.name_span = loaded.positions.value_span(("metadata", "name"))
    commitment = committed(data)
    if commitment is not None:
        result.committed_currency, result.committed_amount = commitment
        route = commitment_route(data)
        result.committed_per_month = route != ("budget", "max_spend")
        result.spend_span = loaded.positions.resolve(route, False)
    result.uncounted = uncounted(data)

    raw: list[tuple[str, Problem]] = []
    for problem in loaded.problems:  # PL002
        if problem.code in selected:
            result.findings.append(make_finding(problem.code, display, problem.span, problem.message, problem.route, config))
    ctx = PlanContext(data=data, path=display, config=config, services=services or Services(), file=path)
    if "PL003" in selected:
        raw.extend(("PL003", p) for p in RULES["PL003"].check(ctx))
    enabled = selected.enabled  # the frozenset itself: tested for every rule of every file
    for rule in PLAN_RULES:
        if time.monotonic() > deadline:
            if "PL006" in selected:
                result.findings.append(make_finding(
                    "PL006", display, START,
                    f"checking took longer than {limits.time_budget:g}s (limit time_budget): {rule.code} and the rules after it did not run",
                    (), config,
                ))
            break
        if rule.code in enabled:
            started = time.monotonic()
            for problem in rule.check(ctx):
                if isinstance(problem, Note):  # not a finding: what a data rule could not check
                    (result.data_skipped if problem.skipped else result.notes).append(problem.text)
                else:
                    raw.append((problem.code or rule.code, problem))
            if rule.scope == "data":
                # Reading the split files is bounded by data.time_budget (per
                # plan), not by this one: the time it took does not count here.
                deadline += time.monotonic() - started
    if "PL801" in selected and loaded.text and "#" in loaded.text:
        # Comments have no route: the rule's problems carry their span (rules/secrets.comment_problems).
        for problem in comment_problems(loaded.text, loaded.quoted):
            result.findings.append(make_finding("PL801", display, problem.span, problem.message, problem.route, config))
    # One finding per value: a placeholder (PL008) is not also floating or malformed.
    placeholders = {(id(problem.document), problem.route) for code, problem in raw if code == "PL008"}
    if placeholders:
        raw = [(code, problem) for code, problem in raw if code == "PL008" or (id(problem.document), problem.route) not in placeholders]
    for code, problem in raw:
        add_finding(result, code, problem, loaded.positions, config)
    result.repo_root, result.run_configs = named_configs(ctx)
    result.suppressions = supp.parse(loaded.text or "", loaded.quoted, rule_code)
    if result.suppressions:
        result.findings = [f for f in result.findings if not supp.is_suppressed(result.suppressions, f.code, f.line)]
    return result


