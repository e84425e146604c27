"""Spending caps and their approval: PL501-PL506, and the committed spend of all plans (PL507).

A recurring plan (`recurrence:`) caps each run and each month in
`recurrence.budget` instead of one `budget.max_spend`: committed spend counts
it at its per-month cap (`committed`), and PL508 (rules/recurrence.py) checks
those caps against its schedule.
"""

from __future__ import annotations

import math
import re
from functools import partial
from typing import Any, Iterator

from planlint.core.currencies import ISO_4217
from planlint.core.messages import show
from planlint.core.model import is_recurring
from planlint.core.yaml_values import YamlFloat, YamlInt, parse_number
from planlint.rules.base import ERROR, MISSING, Fix, Insert, Note, PlanContext, Problem, RepoContext, Replace, lookup, rule
from planlint.rules.baseline import ACTIVE_STATUSES

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


def spend_amount(value: Any) -> float | None:
    """`max_spend` as a number when it is a valid one (> 0, finite), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value) or value <= 0:
        return None
    return float(value)


def currency_code(value: Any) -> str | None:
    """`budget.currency` as the ISO 4217 code it means (`usd` and ` USD ` are USD), or None.

    Limits and changes compare on this code, so a spelling PL503 reports
    cannot hide a cap from `max_spend_limit` or a change from PL703.
    """
    if not isinstance(value, str):
        return None
    code = value.strip().upper()
    return code if code in ISO_4217 else None


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


PER_RUN_ROUTE = ("recurrence", "budget", "max_spend_per_run")
PER_MONTH_ROUTE = ("recurrence", "budget", "max_spend_per_month")


def caps_currency(data: Any) -> Any:
    """The currency of a recurring plan's caps: `recurrence.budget.currency`, else `budget.currency` (MISSING if neither)."""
    own = lookup(data, ("recurrence", "budget", "currency"))
    return own if own is not MISSING else lookup(data, ("budget", "currency"))


def _spend_fix(budget: dict, value: str) -> Fix | None:
    """`max_spend: "$250"` -> `max_spend: 250`, plus `currency: USD` when the plan has none; None when
    not certain (a currency that disagrees with budget.currency is a human's choice)."""
    parsed = parse_spend(value)
    if parsed is None:
        return None
    amount, currency = parsed
    number = parse_number(amount)
    if not isinstance(number, (YamlInt, YamlFloat)):
        return None
    changes: list[Replace | Insert] = [Replace(("budget", "max_spend"), number)]
    also: tuple[tuple[str, tuple], ...] = ()
    summary = f"budget.max_spend {show(value)} -> {amount}"
    if currency is not None:
        present = budget.get("currency")
        if "currency" not in budget:
            changes.append(Insert(("budget", "currency"), currency, beside="max_spend"))
            also = (("PL503", ("budget", "currency")),)
            summary += f", added budget.currency: {currency}"
        elif not (isinstance(present, str) and present.strip().upper() == currency):
            return None
    return Fix(summary, tuple(changes), also)


@rule("PL501", "max-spend-missing", ERROR)
def max_spend_missing(ctx: PlanContext) -> Iterator[Problem]:
    """`budget` or `budget.max_spend` is absent.

    A paid run with no ceiling is a blank cheque: a stuck job or a wrong
    setting spends until someone notices. Every plan states the most it may
    spend. A recurring plan states it per run and per month in
    `recurrence.budget` (PL508) and needs no `budget.max_spend`; its
    `budget` still holds the currency and who approved the caps.

    Example (fails):
        budget:
          currency: USD
          estimated_cost: 180
    Example (passes):
        budget:
          currency: USD
          max_spend: 250
          estimated_cost: 180
          approved_by: "@ml-leads"
    """
    recurring = is_recurring(ctx.data)
    if "budget" not in ctx.data:
        if recurring:  # its caps are recurrence.budget's (PL508); currency and approved_by live here
            yield Problem(("budget",), "the plan has no budget: add budget with currency and approved_by (a recurring plan's caps are in recurrence.budget)", missing=True)
        else:
            yield Problem(("budget",), "the plan has no budget: add budget with currency and max_spend, the most the run may spend", missing=True)
        return
    budget = ctx.mapping("budget")
    if budget is not None and "max_spend" not in budget and not recurring:
        yield Problem(("budget", "max_spend"), "budget.max_spend is missing: state the most the run may spend, e.g. max_spend: 250", missing=True)


@rule("PL502", "max-spend-invalid", ERROR, fixable=True)
def max_spend_invalid(ctx: PlanContext) -> Iterator[Problem]:
    """`max_spend` is not a number greater than 0.

    A cap written as a string (`"$250"`, `"250 USD"`) is not a cap a tool can
    enforce, and zero or a negative number is no budget at all. Write the
    amount as a number and the currency in `budget.currency`. `planlint --fix`
    rewrites `"$250"`, `"250 USD"` or `"250"` as `250` and adds
    `currency: USD` when the plan has none; when the string's currency and
    `budget.currency` disagree it leaves the choice to you.

    Example (fails):
        budget:
          currency: USD
          max_spend: "$250"
          approved_by: "@ml-leads"
    Example (passes):
        budget:
          currency: USD
          max_spend: 250
          approved_by: "@ml-leads"
    """
    value = ctx.get("budget", "max_spend")
    if value is MISSING or spend_amount(value) is not None:
        return
    fix: Any = None
    if isinstance(value, str):
        hint = "write the amount as a number (max_spend: 250) and the currency in budget.currency"
        fix = partial(_spend_fix, ctx.data["budget"], value)  # parsed only by --fix
    else:
        hint = "it must be a number greater than 0"
    yield Problem(("budget", "max_spend"), f"budget.max_spend {show(value)} is not a valid amount: {hint}", fix=fix)


@rule("PL503", "currency-invalid", ERROR, fixable=True)
def currency_invalid(ctx: PlanContext) -> Iterator[Problem]:
    """`budget.currency` is absent or not a 3-letter ISO 4217 code.

    A spend cap means nothing without its unit, and caps in different
    currencies are compared through their ISO codes. `planlint --fix` writes a
    code given in lower case (`usd`) in capitals; a missing currency is added
    only when `max_spend` itself names it (`"$250"`). A recurring plan may
    repeat the currency beside its caps (`recurrence.budget.currency`): it
    must be a valid code too, and the same as `budget.currency` (a plan has
    one currency).

    Example (fails):
        budget:
          currency: dollars
          max_spend: 250
          approved_by: "@ml-leads"
    Example (passes):
        budget:
          currency: USD
          max_spend: 250
          approved_by: "@ml-leads"
    """
    yield from _caps_currency_invalid(ctx)
    budget = ctx.mapping("budget")
    if budget is None:
        return
    if "currency" not in budget:
        yield Problem(("budget", "currency"), "budget.currency is missing: give the ISO 4217 code of max_spend, e.g. currency: USD", missing=True)
        return
    currency = budget["currency"]
    if isinstance(currency, str) and currency in ISO_4217:
        return
    hint, fix = "", None
    if isinstance(currency, str) and currency.strip().upper() in ISO_4217:
        upper = currency.strip().upper()
        hint = f" (write it in capitals: {upper})"
        fix = Fix(f"budget.currency {show(currency)} -> {upper}", (Replace(("budget", "currency"), upper),))
    yield Problem(("budget", "currency"), f"budget.currency {show(currency)} is not a 3-letter ISO 4217 code{hint}: use e.g. USD or EUR", fix=fix)


def _caps_currency_invalid(ctx: PlanContext) -> Iterator[Problem]:
    """PL503 of `recurrence.budget.currency`: a valid code, and the plan's own (budget.currency)."""
    own = ctx.get("recurrence", "budget", "currency")
    if own is MISSING:
        return
    route = ("recurrence", "budget", "currency")
    if not (isinstance(own, str) and own in ISO_4217):
        upper = own.strip().upper() if isinstance(own, str) else ""
        hint = f" (write it in capitals: {upper})" if upper in ISO_4217 else ""
        yield Problem(route, f"recurrence.budget.currency {show(own)} is not a 3-letter ISO 4217 code{hint}: use e.g. USD or EUR")
        return
    plan = ctx.get("budget", "currency")
    if isinstance(plan, str) and plan in ISO_4217 and plan != own:
        yield Problem(route, f"recurrence.budget.currency {show(own)} differs from budget.currency {show(plan)}: a plan has one currency; write the caps in {plan}")


@rule("PL504", "estimate-over-cap", ERROR)
def estimate_over_cap(ctx: PlanContext) -> Iterator[Problem]:
    """`estimated_cost` is greater than `max_spend`.

    A plan expected to cost more than its ceiling is planned to be stopped
    before it finishes: raise the cap (with approval) or shrink the run.

    Example (fails):
        budget:
          currency: USD
          max_spend: 250
          estimated_cost: 310
          approved_by: "@ml-leads"
    Example (passes):
        budget:
          currency: USD
          max_spend: 250
          estimated_cost: 180
          approved_by: "@ml-leads"
    """
    cap = spend_amount(ctx.get("budget", "max_spend"))
    estimate = ctx.get("budget", "estimated_cost")
    if cap is None or isinstance(estimate, bool) or not isinstance(estimate, (int, float)):
        return
    if estimate > cap:
        yield Problem(("budget", "estimated_cost"), f"budget.estimated_cost {show(estimate)} is over max_spend {show(ctx.get('budget', 'max_spend'))}: raise the cap with approval, or plan a smaller run")


@rule("PL505", "spend-over-limit", ERROR)
def spend_over_limit(ctx: PlanContext) -> Iterator[Problem]:
    """`max_spend` is above the configured `max_spend_limit` for its currency, or its currency has no limit.

    Teams set a ceiling that a single plan may not exceed without a config
    change that leads review (`max_spend_limit: {USD: 1000}`). Once limits
    are configured, a currency they do not list is not unlimited: a plan in
    KWD under `{USD: 1000}` is an error naming the listed currencies (at
    `budget.currency`), and so is an approved or running plan in a currency
    `budget.committed_limit` does not list. Currencies compare by their ISO
    code: `usd` is USD here (PL503 asks for the capitals). For a recurring
    plan the ceiling holds for each of its runs: its
    `recurrence.budget.max_spend_per_run` may not exceed it either (the
    month as a whole is `budget.committed_limit`'s, PL507).

    Example (fails):
        # config: {max_spend_limit: {USD: 1000}}
        budget:
          currency: USD
          max_spend: 2500
          approved_by: "@ml-leads"
    Example (passes):
        # config: {max_spend_limit: {USD: 1000}}
        budget:
          currency: USD
          max_spend: 250
          approved_by: "@ml-leads"
    """
    limits = getattr(ctx.config, "max_spend_limit", None) or {}
    yield from _per_run_over_limit(ctx, limits)
    committed_limits = getattr(ctx.config, "committed_limit", None) or {}
    currency = currency_code(ctx.get("budget", "currency"))
    cap = spend_amount(ctx.get("budget", "max_spend"))
    if cap is None or currency is None:
        return  # an invalid cap or currency is PL502's or PL503's
    unlisted = []
    if limits and currency not in limits:
        unlisted.append(f"max_spend_limit lists {', '.join(sorted(limits))}")
    if committed_limits and currency not in committed_limits and ctx.get("metadata", "status") in COMMITTED_STATUSES:
        unlisted.append(f"budget.committed_limit lists {', '.join(sorted(committed_limits))}")
    if unlisted:
        yield Problem(
            ("budget", "currency"),
            f"budget.currency {show(currency)} is not limited: {' and '.join(unlisted)} only, so a cap in {currency} would have no "
            f"ceiling: use a listed currency, or add {currency} to the configuration's limits with review",
        )
        return
    if currency not in limits:
        return
    limit = limits[currency]
    if cap > limit:
        yield Problem(("budget", "max_spend"), f"budget.max_spend {show(ctx.get('budget', 'max_spend'))} {currency} is over the configured limit of {limit:g} {currency} (max_spend_limit): lower it, or raise the limit in the config with review")


def _per_run_over_limit(ctx: PlanContext, limits: dict) -> Iterator[Problem]:
    """PL505 of a recurring plan's per-run cap: `max_spend_limit` holds for each run."""
    per_run, currency = spend_amount(ctx.get(*PER_RUN_ROUTE)), currency_code(caps_currency(ctx.data))
    if per_run is not None and currency is not None and currency in limits and per_run > limits[currency]:
        limit = limits[currency]
        yield Problem(PER_RUN_ROUTE, f"recurrence.budget.max_spend_per_run {show(ctx.get(*PER_RUN_ROUTE))} {currency} is over the configured limit of {limit:g} {currency} (max_spend_limit), which holds for each run: lower it, or raise the limit in the config with review")


# --------------------------------------------------------------------------- committed spend

COMMITTED_STATUSES = ("approved", "running")


def committed(data: Any) -> tuple[str, float] | None:
    """(currency, max_spend) when the plan commits money: status approved or running, a valid cap and currency.

    A recurring plan commits its per-month cap (`recurrence.budget.max_spend_per_month`,
    in `caps_currency`), so a monthly committed limit sees what it may spend each month.
    """
    if not isinstance(data, dict):
        return None
    meta, budget = data.get("metadata"), data.get("budget")
    status = meta.get("status") if isinstance(meta, dict) else None
    if status not in COMMITTED_STATUSES:
        return None
    if is_recurring(data):
        currency, amount = caps_currency(data), spend_amount(lookup(data, PER_MONTH_ROUTE))
    elif isinstance(budget, dict):
        currency, amount = budget.get("currency"), spend_amount(budget.get("max_spend"))
    else:
        return None
    currency = currency_code(currency)
    if currency is None or amount is None:
        return None
    return currency, amount


def commitment_route(data: Any) -> tuple[str, ...]:
    """Where the cap committed spend counts is: a recurring plan's per-month cap, else `budget.max_spend`."""
    return PER_MONTH_ROUTE if is_recurring(data) else ("budget", "max_spend")


def uncounted(data: Any) -> bool:
    """An approved or running plan whose cap cannot be counted (no valid max_spend, per-month cap or currency)."""
    if not isinstance(data, dict):
        return False
    meta = data.get("metadata")
    return isinstance(meta, dict) and meta.get("status") in COMMITTED_STATUSES and committed(data) is None


def money(amount: float) -> str:
    """1600 -> '1,600'; 1234.5 -> '1,234.50'."""
    return f"{amount:,.0f}" if float(amount).is_integer() else f"{amount:,.2f}"


@rule("PL507", "committed-spend-over-limit", ERROR, scope="repo")
def committed_spend_over_limit(ctx: RepoContext) -> Iterator[Problem | Note]:
    """The plans' committed spend goes over the configured `budget.committed_limit`.

    Committed spend is the sum of `max_spend` over the plans whose status is
    `approved` or `running`, per currency: money the team has agreed may be
    spent. A recurring plan counts at its per-month cap
    (`recurrence.budget.max_spend_per_month`), so a monthly limit sees what
    it may spend each month, and a finding it causes points there. Each cap may be fine on its own while together they pass what the
    team can pay for. Teams set the ceiling in the config
    (`budget: {committed_limit: {USD: 20000}}`); the finding points at
    `budget.max_spend` of the plan whose cap pushes the total over, counting
    the plans in path order (in diff mode, the unchanged plans first, then the
    pull request's; for files named on the command line, as by the pre-commit
    hook, the repository's other plans under `plans/` first). One finding per
    currency. Lower a cap, finish a plan
    (`completed` or `abandoned` no longer count), or raise the limit in the
    config with review.

    Example (fails):
        # config: {budget: {committed_limit: {USD: 200}}}
        budget:
          currency: USD
          max_spend: 250
          approved_by: "@ml-leads"
    Example (passes):
        # config: {budget: {committed_limit: {USD: 1000}}}
        budget:
          currency: USD
          max_spend: 250
          approved_by: "@ml-leads"
    """
    # Plans count in order: ctx.other_commitments (not linted) first, then the
    # linted ones by path. When the others alone are over, the first linted plan
    # that commits money in that currency gets the finding; when there is none,
    # a note says so (the engine puts it in the report).
    limits = getattr(ctx.config, "committed_limit", None) or {}
    if not limits:
        return
    # (path, currency, max_spend, per month) of the linted plans that commit money in a limited currency, by path.
    ordered = sorted(
        ((plan.path, *plan.committed, plan.per_month) for plan in ctx.plans if plan.committed is not None and plan.committed[0] in limits),
        key=lambda entry: entry[0],
    )
    before: dict[str, float] = {}
    for currency, amount in ctx.other_commitments:
        before[currency] = before.get(currency, 0.0) + amount
    total = dict(before)
    for _path, currency, amount, _monthly in ordered:
        total[currency] = total.get(currency, 0.0) + amount
    for currency, limit in limits.items():
        if total.get(currency, 0.0) <= limit:
            continue
        running = before.get(currency, 0.0)
        culprit = None
        for entry in ordered:
            if entry[1] != currency:
                continue
            running += entry[2]
            if running > limit or before.get(currency, 0.0) > limit:
                culprit = entry
                break
        counted = "max_spend of approved and running plans"
        if any(entry[1] == currency and entry[3] for entry in ordered):
            counted += ", max_spend_per_month of recurring ones"
        what = (
            f"committed spend ({counted}) in {currency} is {money(total[currency])} {currency}, "
            f"over budget.committed_limit of {money(limit)} {currency}"
        )
        if culprit is None:
            yield Note(f"{what}; no plan checked in this run commits {currency}, so PL507 has no plan to report it at")
            continue
        path, _, amount, monthly = culprit
        if before.get(currency, 0.0) > limit:
            why = f"without this plan it is already {money(before[currency])} {currency}"
        else:
            cap = f"{money(amount)} {currency} a month" if monthly else f"{money(amount)} {currency}"
            why = f"this plan's cap of {cap} takes it over (to {money(running)} {currency} counting plans in path order)"
        yield Problem(
            PER_MONTH_ROUTE if monthly else ("budget", "max_spend"),
            f"{what}: {why}; lower a cap, finish or abandon a plan, or raise the limit in the config with review",
            path=path,
        )


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or (isinstance(value, (list, dict)) and not value)


@rule("PL506", "approval-missing", ERROR)
def approval_missing(ctx: PlanContext) -> Iterator[Problem]:
    """`metadata.status` is approved, running or completed and `budget.approved_by` is absent or empty.

    The planning guide asks to review the price and maximum spend before
    Start. A plan that is approved (or already running) without saying who
    approved its spending cap has a cap nobody answered for. Drafts may leave
    it open.

    Example (fails):
        metadata:
          name: retail-refund-window
          owner: "@support-ml"
          status: approved
        budget:
          currency: USD
          max_spend: 250
    Example (passes):
        metadata:
          name: retail-refund-window
          owner: "@support-ml"
          status: approved
        budget:
          currency: USD
          max_spend: 250
          approved_by: "@ml-leads"
    """
    status = ctx.get("metadata", "status")
    budget = ctx.mapping("budget")
    if status not in ACTIVE_STATUSES or budget is None:  # no budget at all is PL501's
        return
    route = ("budget", "approved_by")
    if "approved_by" not in budget:
        yield Problem(route, f"the plan is {status} but budget.approved_by is missing: name who approved max_spend before the run starts, e.g. approved_by: \"@ml-leads\"", missing=True)
    elif _empty(budget["approved_by"]):
        yield Problem(route, f"the plan is {status} but budget.approved_by is empty: name who approved max_spend before the run starts, e.g. approved_by: \"@ml-leads\"")
