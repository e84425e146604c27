"""Recurring plans (`recurrence:`): PL508-PL510, and what committed spend and diff mode read of them.

A recurring plan retrains on a schedule (continual learning): each run takes
the newest published release of its source, new rows reach training only
through review, and every run and every month has a cap. The platform's data
guide: "For recurring checks, submit only the selected published training
tasks to the Model's review queue. A Dataset save does not admit every row or
schedule compute." The schedule is counted by `services.cron`, imported
(with cronsim) only for a plan that has one: a pre-commit hook on other plans
loads neither.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from planlint.core.floating import floating_reason
from planlint.core.messages import show
from planlint.core.model import is_recurring
from planlint.core.positions import Route
from planlint.core.yaml_values import scalar_text
from planlint.rules.base import ERROR, MISSING, PlanContext, Problem, lookup, rule
from planlint.rules.budget import (
    PER_MONTH_ROUTE,
    PER_RUN_ROUTE,
    caps_currency,
    currency_code,
    money,
    spend_amount,
)

REVIEW_STEPS = ("review_queue",)  # how new rows may reach training: the Model's review queue
NEWEST_PUBLISHED = "published"  # the release policy: each run takes the newest published release
# Release policies that are not "newest published" besides the floating words (core.floating).
_OTHER_POLICIES = frozenset(("draft", "drafts", "any", "all", "every", "saved", "unpublished", "unreviewed", "pending", "staged", "staging", "preview"))
_DURATION = re.compile(r"(0|[1-9][0-9]{0,5})([hdw])")
_HOURS = {"h": 1, "d": 24, "w": 168}


def _recurrence(data: Any) -> dict | None:
    return data["recurrence"] if is_recurring(data) else None


def release_policy_problem(value: Any) -> str | None:
    """Why `recurrence.source.releases` is not "the newest published release" nor one exact release, or None."""
    if not isinstance(value, str):
        return f"is {show(value)}, not a release policy"
    text = value.strip()
    if text.lower() == NEWEST_PUBLISHED:
        return None
    if text.lower() in _OTHER_POLICIES:
        return f"takes {show(text)} releases, not only published ones"
    why = floating_reason(text)
    return f"is floating ({why}): it may name a release that is not published" if why else None


def source_moves(recurrence: dict) -> bool:
    """Does each run take a newer release (the policy is not one exact release)?"""
    source = recurrence.get("source")
    releases = source.get("releases") if isinstance(source, dict) else None
    if not isinstance(releases, str):
        return True
    return releases.strip().lower() == NEWEST_PUBLISHED or release_policy_problem(releases) is not None


def runs_per_month(recurrence: dict) -> tuple[int, str] | None:
    """(the most runs a month, where that bound comes from), or None when the schedule cannot be read."""
    # Imported here, for recurring plans only: a plain lint's start-up never loads it (nor cronsim).
    from planlint.services.cron import CronError, month_firings

    try:
        firings = month_firings(recurrence.get("schedule"))
    except CronError:
        return None
    runs, why = firings.busiest_month, f"the most {show(recurrence.get('schedule'))} fires in a month"
    limit = _runs_limit(recurrence)
    if limit is not None and limit < runs:
        runs, why = limit, "max_runs_per_month"
    return runs, why


def _runs_limit(recurrence: dict) -> int | None:
    """`max_runs_per_month` when it is a whole number >= 1 (anything else is PL003's), else None."""
    value = recurrence.get("max_runs_per_month")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None


# --------------------------------------------------------------------------- PL508

@rule("PL508", "recurrence-spend-unbounded", ERROR)
def recurrence_spend_unbounded(ctx: PlanContext) -> Iterator[Problem]:
    """A recurring plan's spend is not bounded by its caps and its schedule.

    A recurring plan spends again on every run, and nobody starts each one.
    `recurrence.budget` caps a run (`max_spend_per_run`) and a month
    (`max_spend_per_month`), and both must be there, as numbers > 0. They
    must also fit the schedule: `recurrence.schedule` is a 5-field cron
    expression in UTC (or a macro such as `@weekly`), read with cronsim, and
    the number of times it fires in the busiest month of the calendar (every
    month length and starting weekday counted: `0 3 * * 1`, Mondays at
    03:00, fires 5 times in a month with 5 Mondays) may not exceed
    `max_runs_per_month` when that is given; the month's cap must cover the
    month's runs (the fewer of the two) times the per-run cap. A schedule
    that is not a cron expression, or never fires, is reported at the
    schedule. A `budget.max_spend` in a recurring plan caps each run too, so
    the per-run cap may not exceed it.

    Example (fails):
        splits:
          train: {selector: {field: split, equals: train}}
          eval: {path: data/retail/eval.jsonl, frozen: true}
          boundary: {group_key: customer_id}
        recurrence:
          schedule: "0 3 * * 1"         # every Monday 03:00 UTC: 5 runs in a month with 5 Mondays
          max_runs_per_month: 5
          source: {dataset: retail-refunds, releases: published}
          admission: review_queue
          budget: {max_spend_per_run: 200, max_spend_per_month: 800, currency: USD}
    Example (passes):
        splits:
          train: {selector: {field: split, equals: train}}
          eval: {path: data/retail/eval.jsonl, frozen: true}
          boundary: {group_key: customer_id}
        recurrence:
          schedule: "0 3 * * 1"         # every Monday 03:00 UTC: 5 runs in a month with 5 Mondays
          max_runs_per_month: 5
          source: {dataset: retail-refunds, releases: published}
          admission: review_queue
          budget: {max_spend_per_run: 200, max_spend_per_month: 1000, currency: USD}
    """
    recurrence = _recurrence(ctx.data)
    if recurrence is None:
        return
    per_run = per_month = None
    if "budget" not in recurrence:
        yield Problem(("recurrence", "budget"), "recurrence.budget is missing: cap each run and each month, e.g. budget: {max_spend_per_run: 200, max_spend_per_month: 1000}", missing=True)
    elif isinstance(recurrence["budget"], dict):  # another type is PL003's
        caps = recurrence["budget"]
        for key, words in (("max_spend_per_run", "the most one run may spend"), ("max_spend_per_month", "the most all runs of a month may spend")):
            if key not in caps:
                yield Problem(("recurrence", "budget", key), f"recurrence.budget.{key} is missing: state {words}, as a number", missing=True)
            elif spend_amount(caps[key]) is None:
                yield Problem(("recurrence", "budget", key), f"recurrence.budget.{key} {show(caps[key])} is not a valid amount: it must be a number greater than 0 ({words})")
        per_run, per_month = spend_amount(caps.get("max_spend_per_run")), spend_amount(caps.get("max_spend_per_month"))
    # Imported here, for recurring plans only: a plain lint's start-up never loads it (nor cronsim).
    from planlint.services.cron import CronError, month_firings

    runs: tuple[int, str] | None = None
    route = ("recurrence", "schedule")
    if "schedule" not in recurrence:
        yield Problem(route, "recurrence.schedule is missing: give the cron expression (UTC) the runs start on, e.g. schedule: \"0 3 * * 1\" (Mondays 03:00)", missing=True)
    else:
        schedule = recurrence["schedule"]
        try:
            firings = month_firings(schedule)
        except CronError as error:
            advice = ("write 5 fields, minute hour day-of-month month day-of-week, in UTC, e.g. \"0 3 * * 1\" (Mondays 03:00)"
                      if error.shape else "fix that field (crontab(5) syntax; times are UTC)")
            yield Problem(route, f"recurrence.schedule {show(schedule)} is not a cron expression planlint can read: {error}; {advice}")
        else:
            limit = _runs_limit(recurrence)
            if firings.busiest_month == 0:
                yield Problem(route, f"recurrence.schedule {show(schedule)} never fires (no day of any month matches it): fix the day-of-month, month or day-of-week field")
            elif limit is not None and firings.busiest_month > limit:
                yield Problem(route, f"recurrence.schedule {show(schedule)} fires up to {firings.busiest_month} times in a month, "
                                     f"more than max_runs_per_month ({limit}): run it less often, or raise max_runs_per_month and the monthly cap with approval")
            runs = runs_per_month(recurrence)
    if runs is not None and runs[0] > 0 and per_run is not None and per_month is not None and runs[0] * per_run > per_month:
        currency = caps_currency(ctx.data)
        unit = f" {currency}" if isinstance(currency, str) and currency.strip() else ""
        need = runs[0] * per_run
        yield Problem(
            PER_MONTH_ROUTE,
            f"recurrence.budget.max_spend_per_month {money(per_month)}{unit} is below what a month's runs may spend: "
            f"{runs[0]} runs ({runs[1]}) x {money(per_run)}{unit} (max_spend_per_run) = {money(need)}{unit}; "
            f"raise it to at least {money(need)} with approval, or lower max_runs_per_month or max_spend_per_run",
        )
    whole = spend_amount(ctx.get("budget", "max_spend"))
    if per_run is not None and whole is not None and per_run > whole:
        yield Problem(PER_RUN_ROUTE, f"recurrence.budget.max_spend_per_run {money(per_run)} is above budget.max_spend {money(whole)}, "
                                     f"which caps each run as well: lower it, or remove budget.max_spend (the caps are recurrence.budget's)")


# --------------------------------------------------------------------------- PL509


@rule("PL509", "recurrence-source-unreviewed", ERROR)
def recurrence_source_unreviewed(ctx: PlanContext) -> Iterator[Problem]:
    """A recurring plan's new rows can reach training without review, or from a release that is not published.

    The platform's guide: "For recurring checks, submit only the selected
    published training tasks to the Model's review queue. A Dataset save
    does not admit every row or schedule compute." So `recurrence.admission`
    is `review_queue` (new rows reach training only through review), and
    `recurrence.source` binds the runs to the plan's dataset
    (`source.dataset` is `dataset.name`) with `releases: published`: each run
    takes the newest *published* release, never a draft, a save or a moving
    name such as `latest`. (`releases` may also name one exact release, which
    every run then uses.) planlint checks what the plan declares; which
    release each run actually took is recorded by the platform with the run,
    and planlint does not read run records.

    Example (fails):
        splits:
          train: {selector: {field: split, equals: train}}
          eval: {path: data/retail/eval.jsonl, frozen: true}
          boundary: {group_key: customer_id}
        recurrence:
          schedule: "0 3 * * 1"
          max_runs_per_month: 5
          source: {dataset: retail-refunds, releases: latest}
          admission: dataset_save       # every saved row would be trained on
          budget: {max_spend_per_run: 200, max_spend_per_month: 1000, currency: USD}
    Example (passes):
        splits:
          train: {selector: {field: split, equals: train}}
          eval: {path: data/retail/eval.jsonl, frozen: true}
          boundary: {group_key: customer_id}
        recurrence:
          schedule: "0 3 * * 1"
          max_runs_per_month: 5
          source: {dataset: retail-refunds, releases: published}
          admission: review_queue
          budget: {max_spend_per_run: 200, max_spend_per_month: 1000, currency: USD}
    """
    recurrence = _recurrence(ctx.data)
    if recurrence is None:
        return
    route: Route = ("recurrence", "admission")
    if "admission" not in recurrence:
        yield Problem(route, "recurrence.admission is missing: say how new rows reach training; admission: review_queue admits only reviewed rows", missing=True)
    elif not (isinstance(recurrence["admission"], str) and recurrence["admission"].strip() in REVIEW_STEPS):
        yield Problem(route, f"recurrence.admission {show(recurrence['admission'])} is not a review step: new rows would reach training unreviewed; "
                             f"use admission: review_queue (only rows the Model's review queue admits are trained on)")
    if "source" not in recurrence:
        yield Problem(("recurrence", "source"), "recurrence.source is missing: bind the runs to the plan's dataset, e.g. source: {dataset: NAME, releases: published}", missing=True)
        return
    source = recurrence["source"]
    if not isinstance(source, dict):
        return  # PL003
    route = ("recurrence", "source", "dataset")
    dataset = ctx.get("dataset", "name")
    if "dataset" not in source:
        yield Problem(route, "recurrence.source.dataset is missing: name the dataset new releases come from (the plan's dataset.name)", missing=True)
    elif not isinstance(source["dataset"], str) or not source["dataset"].strip():
        yield Problem(route, f"recurrence.source.dataset {show(source['dataset'])} is not a dataset name: give the plan's dataset.name")
    elif isinstance(dataset, str) and source["dataset"] != dataset:
        yield Problem(route, f"recurrence.source.dataset {show(source['dataset'])} is not the plan's dataset {show(dataset)}: "
                             f"the runs would train on another dataset than the one the baseline and the eval come from")
    route = ("recurrence", "source", "releases")
    if "releases" not in source:
        yield Problem(route, "recurrence.source.releases is missing: releases: published takes the newest published release on each run", missing=True)
        return
    why = release_policy_problem(source["releases"])
    if why is not None:
        yield Problem(route, f"recurrence.source.releases {why}: use releases: published, so each run takes the newest published release")


# --------------------------------------------------------------------------- PL510


def duration_hours(value: Any) -> int | None:
    """`7d` -> 168: a rolling window's edge, in hours before a run's start; None when not a duration."""
    if not isinstance(value, str):
        return None
    match = _DURATION.fullmatch(value.strip())
    return int(match.group(1)) * _HOURS[match.group(2)] if match else None


def _windows(rolling: dict) -> Iterator[Problem | tuple[str, int, int]]:
    """Problems of `splits.boundary.rolling`'s two windows, then (side, from, to) in hours of each valid one."""
    for side in ("train", "eval"):
        route = ("splits", "boundary", "rolling", side)
        window = rolling.get(side, MISSING)
        if window is MISSING:
            yield Problem(route, f"splits.boundary.rolling.{side} is missing: give the {side} window, e.g. {side}: "
                                 f"{{from: {'90d, to: 7d' if side == 'train' else '7d, to: 0d'}}} (before each run's start)", missing=True)
            continue
        if not isinstance(window, dict):
            continue  # PL003
        edges: dict[str, int] = {}
        for edge in ("from", "to"):
            value = window.get(edge, MISSING)
            if value is MISSING:
                yield Problem(route + (edge,), f"splits.boundary.rolling.{side}.{edge} is missing: give how long before each run's start the window "
                                               f"{'begins' if edge == 'from' else 'ends'}, e.g. {edge}: 7d", missing=True)
            elif duration_hours(value) is None:
                yield Problem(route + (edge,), f"splits.boundary.rolling.{side}.{edge} {show(value)} is not a duration: write a whole number of hours, days or weeks, e.g. 36h, 7d, 2w (0d: the run's start)")
            else:
                edges[edge] = duration_hours(value) or 0
        if len(edges) == 2:
            if edges["from"] <= edges["to"]:
                yield Problem(route + ("from",), f"splits.boundary.rolling.{side} is empty: from {show(window['from'])} must reach further back than to {show(window['to'])} "
                                                 f"(rows from `from` before each run's start up to `to` before it)")
            else:
                yield (side, edges["from"], edges["to"])


@rule("PL510", "recurrence-eval-moves", ERROR)
def recurrence_eval_moves(ctx: PlanContext) -> Iterator[Problem]:
    """The eval split of a recurring plan moves with its source, or its rolling window overlaps training.

    Every run of a recurring plan is measured on its eval split, and the
    runs are compared with each other and with the baseline. That holds
    only if the eval set does not change under them: a frozen set
    (`splits.eval.frozen: true`, a file or a task list rather than a
    `selector`, which picks rows out of each new release), and no fixed
    time `cutoff`, which each new release passes (its rows either join the
    eval set or cross into training). A recurring plan that evaluates on
    recent rows declares a rolling window instead: `splits.boundary.rolling`
    gives, with the `time_key`, a train and an eval window as durations
    before each run's start (`{from: 90d, to: 7d}` is the 90 days up to a
    week before), and the train window must end where the eval window
    begins or earlier (train rows < the rolling cutoff <= eval rows, the
    time boundary of PL204 and PL208 moved with each run). Such an eval set
    is not `frozen`.

    Example (fails):
        splits:
          train: {selector: {field: split, equals: train}}
          eval: {selector: {field: split, equals: eval}, frozen: true}
          boundary: {group_key: customer_id}
        recurrence:
          schedule: "0 3 * * 1"
          max_runs_per_month: 5
          source: {dataset: retail-refunds, releases: published}
          admission: review_queue
          budget: {max_spend_per_run: 200, max_spend_per_month: 1000, currency: USD}
    Example (passes):
        splits:
          train: {selector: {field: split, equals: train}}
          eval: {path: data/retail/eval.jsonl, frozen: true}
          boundary: {group_key: customer_id}
        recurrence:
          schedule: "0 3 * * 1"
          max_runs_per_month: 5
          source: {dataset: retail-refunds, releases: published}
          admission: review_queue
          budget: {max_spend_per_run: 200, max_spend_per_month: 1000, currency: USD}
    """
    recurrence = _recurrence(ctx.data)
    held_out = ctx.mapping("splits", "eval")
    if recurrence is None or held_out is None:  # no eval split is PL201's
        return
    boundary = ctx.mapping("splits", "boundary") or {}
    rolling = boundary.get("rolling", MISSING)
    if rolling is not MISSING:
        yield from _rolling_eval(boundary, rolling, held_out)
        return
    route = ("splits", "eval", "frozen")
    if "frozen" not in held_out:
        yield Problem(route, "splits.eval is not frozen, and every run of this recurring plan is measured on it: set frozen: true, "
                             "or declare a rolling window (splits.boundary.rolling)", missing=True)
    elif held_out["frozen"] is not True:
        yield Problem(route, f"splits.eval.frozen is {show(held_out['frozen'])}, and every run of this recurring plan is measured on it: "
                             f"freeze it (frozen: true), or declare a rolling window (splits.boundary.rolling)")
    if not source_moves(recurrence):
        return
    if "selector" in held_out and isinstance(held_out["selector"], dict):
        yield Problem(("splits", "eval", "selector"), "splits.eval.selector picks the eval rows out of each newly published release, so the eval set moves with "
                                                      "recurrence.source: freeze it as a file (path) or a task list, or declare a rolling window (splits.boundary.rolling)")
    if "cutoff" in boundary and _given(boundary.get("time_key")):
        yield Problem(("splits", "boundary", "cutoff"), f"splits.boundary.cutoff {show(boundary['cutoff'])} is fixed, but each newly published release brings rows after it: "
                                                        f"they would join the eval set or cross into training; declare a rolling window instead "
                                                        f"(splits.boundary.rolling: {{train: {{from: 90d, to: 7d}}, eval: {{from: 7d, to: 0d}}}}), or bound by group_key only")


def _given(value: Any) -> bool:
    return value is not None and value is not MISSING and scalar_text(value).strip() != ""


def _rolling_eval(boundary: dict, rolling: Any, held_out: dict) -> Iterator[Problem]:
    if "cutoff" in boundary:
        yield Problem(("splits", "boundary", "cutoff"), "splits.boundary has both a fixed cutoff and a rolling window: "
                                                        "a recurring plan's cutoff moves with each run (rolling); remove cutoff")
    if held_out.get("frozen") is True:
        yield Problem(("splits", "eval", "frozen"), "splits.eval.frozen is true, but splits.boundary.rolling moves the eval window with each run: "
                                                    "freeze the eval set (and remove rolling), or keep the rolling window and remove frozen")
    if not isinstance(rolling, dict):
        return  # PL003
    windows: dict[str, tuple[int, int]] = {}
    for item in _windows(rolling):
        if isinstance(item, Problem):
            yield item
        else:
            windows[item[0]] = (item[1], item[2])
    if len(windows) == 2 and windows["train"][1] < windows["eval"][0]:
        train, held = rolling["train"], rolling["eval"]
        yield Problem(
            ("splits", "boundary", "rolling", "train", "to"),
            f"the rolling train window (from {show(train['from'])} to {show(train['to'])} before each run) ends after the eval window "
            f"(from {show(held['from'])} to {show(held['to'])}) begins: train rows must be older than every eval row; "
            f"end the train window at {show(held['from'])} or earlier",
        )


# --------------------------------------------------------------------------- diff mode and change cards


def _caps(data: Any) -> tuple[float | None, float | None, Any]:
    return spend_amount(lookup(data, PER_RUN_ROUTE)), spend_amount(lookup(data, PER_MONTH_ROUTE)), caps_currency(data)


class Rise(NamedTuple):
    """One way a change raises what a recurring plan may spend: where (at head) and in words."""

    route: Route
    words: str
    at_key: bool = False  # point at the key (`recurrence:`), not its value
    currency: bool = False  # the caps' currency changed (budget.currency's own change is PL703's already)


def spend_rises(base: Any, head: Any) -> list[Rise]:
    """How a change raises what a recurring plan may spend: it becomes recurring, its schedule
    allows more runs a month, a per-run or per-month cap rose, or the caps' currency changed.

    A cap change like `budget.max_spend` rising (PL703, PL707). Empty for a
    new plan (`base` not a plan) and when the head is not recurring.
    """
    if not isinstance(base, dict) or not base or not is_recurring(head):
        return []
    head_recurrence = head["recurrence"]
    if not is_recurring(base):
        runs = runs_per_month(head_recurrence)
        per_month = spend_amount(lookup(head, PER_MONTH_ROUTE))
        detail = ", ".join(part for part in (
            f"up to {runs[0]} runs a month" if runs else "",
            f"max_spend_per_month {money(per_month)}" if per_month is not None else "",
        ) if part)
        return [Rise(("recurrence",), "the plan became recurring" + (f" ({detail})" if detail else ""), at_key=True)]
    rises: list[Rise] = []
    old_runs, new_runs = runs_per_month(base["recurrence"]), runs_per_month(head_recurrence)
    if old_runs is not None and new_runs is not None and new_runs[0] > old_runs[0]:
        moved = "schedule" if scalar_text(head_recurrence.get("schedule")) != scalar_text(base["recurrence"].get("schedule")) else "max_runs_per_month"
        rises.append(Rise(("recurrence", moved), f"recurrence.{moved} allows more runs a month ({old_runs[0]} -> {new_runs[0]})"))
    (old_run, old_month, old_currency), (new_run, new_month, new_currency) = _caps(base), _caps(head)
    for route, old, new in ((PER_RUN_ROUTE, old_run, new_run), (PER_MONTH_ROUTE, old_month, new_month)):
        if old is not None and new is not None and new > old:
            rises.append(Rise(route, f"recurrence.budget.{route[-1]} rose from {scalar_text(lookup(base, route))} to {scalar_text(lookup(head, route))}"))
    old_code, new_code = currency_code(old_currency), currency_code(new_currency)
    if old_code is not None and new_code is not None and old_code != new_code and new_month is not None:
        rises.append(Rise(PER_MONTH_ROUTE, f"the currency of the recurring caps changed from {show(old_code)} to {show(new_code)}", currency=True))
    return rises


def monthly_figures(data: Any) -> dict | None:
    """A recurring plan's month, for its change card: runs, caps and currency (null where invalid); None if not recurring."""
    if not is_recurring(data):
        return None
    runs = runs_per_month(data["recurrence"])
    per_run, per_month, currency = _caps(data)
    return {
        "schedule": scalar_text(data["recurrence"]["schedule"]) if isinstance(data["recurrence"].get("schedule"), str) else None,
        "runs_per_month": runs[0] if runs else None,
        "max_spend_per_run": _amount(per_run),
        "max_spend_per_month": _amount(per_month),
        "currency": currency if isinstance(currency, str) else None,
    }


def _amount(value: float | None) -> int | float | None:
    if value is None:
        return None
    return int(value) if float(value).is_integer() else value
