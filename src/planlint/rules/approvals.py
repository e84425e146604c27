"""PL707: a change that needs an approval has a verified one, from the pull request's GitHub reviews.

Runs only in diff mode, for a GitHub pull request. Diff mode hands the rule,
besides the plan and its base version (`ctx.base`):

* `ctx.reviews`: a `reviews.ReviewState` (the pull request's reviews, read by
  diff mode's caller), absent outside a pull request.

Docstring examples are diff-mode examples (see `rules/diff.py`); a line
`# reviews: carol APPROVED, author: bob` runs them as a pull request whose
reviews a GitHub imitation serves.
"""

from __future__ import annotations

from typing import Any, Iterator

from planlint.core.messages import show
from planlint.core.reviews import ReviewState, named_approvers
from planlint.core.yaml_values import scalar_text
from planlint.rules.base import ERROR, MISSING, PlanContext, Problem, lookup, rule
from planlint.rules.budget import spend_amount


def approval_needed(base: Any, head: Any) -> str | None:
    """Why the change of a plan needs a verified approval (PL707), or None.

    Its status becomes approved or running (a new plan that starts so, too),
    or its `max_spend` rose.
    """
    if not isinstance(head, dict) or not head:
        return None
    base = base if isinstance(base, dict) else {}
    reasons = []
    old_status, new_status = lookup(base, ("metadata", "status")), lookup(head, ("metadata", "status"))
    if new_status in COMMITTING_STATUSES and old_status not in COMMITTING_STATUSES:
        was = f"from {show(scalar_text(old_status))} " if isinstance(old_status, str) else ""
        reasons.append(f"metadata.status becomes {show(new_status)} {was}".rstrip())
    old_cap = spend_amount(lookup(base, ("budget", "max_spend")))
    new_cap = spend_amount(lookup(head, ("budget", "max_spend")))
    if old_cap is not None and new_cap is not None and new_cap > old_cap:
        reasons.append(
            f"budget.max_spend rose from {scalar_text(lookup(base, ('budget', 'max_spend')))} to {scalar_text(lookup(head, ('budget', 'max_spend')))}"
        )
    return " and ".join(reasons) or None


COMMITTING_STATUSES = ("approved", "running")
_VERDICT_WORDS = {"CHANGES_REQUESTED": "requested changes", "DISMISSED": "had their approval dismissed"}


@rule("PL707", "approval-not-verified", ERROR, scope="diff")
def approval_not_verified(ctx: PlanContext) -> Iterator[Problem]:
    """A plan's status becomes approved or running, or its `max_spend` rose, without a verified approval.

    `budget.approved_by` is text the pull request's author writes; on its own
    it proves nothing. When planlint runs for a GitHub pull request (a
    `pull_request` or `pull_request_review` event), it reads the pull
    request's reviews: someone `approved_by` names must have an APPROVED
    review that still stands (their latest review: a dismissed approval, or
    one followed by CHANGES_REQUESTED, does not count) and must not be the
    pull request's author. `approved_by` names users (`@login`) or teams
    (`@org/team`); a team's members come from the `approvers:` map of the
    base revision's configuration (the pull request cannot add itself to
    it). Reviews that cannot be read (no token, 403, 404) fail the check.
    A suppression comment in the plan does not silence PL707 (the author
    wrote it); only the configuration can turn it off. Outside a pull
    request PL707 does not run, and a note says so.

    Example (fails):
        # base
        metadata: {name: retail-refund-window, owner: "@support-ml", status: draft}
        # head
        metadata: {name: retail-refund-window, owner: "@support-ml", status: approved}
        # reviews: alice APPROVED, author: bob
        budget: {currency: USD, max_spend: 250, estimated_cost: 180, approved_by: "@carol"}
    Example (passes):
        # base
        metadata: {name: retail-refund-window, owner: "@support-ml", status: draft}
        # head
        metadata: {name: retail-refund-window, owner: "@support-ml", status: approved}
        # reviews: carol APPROVED, author: bob
        budget: {currency: USD, max_spend: 250, estimated_cost: 180, approved_by: "@carol"}
    """
    state = ctx.reviews
    if not isinstance(state, ReviewState) or not ctx.data:
        return
    why = approval_needed(ctx.base, ctx.data)
    if why is None:
        return
    value = ctx.get("budget", "approved_by")
    route = ("budget", "approved_by")
    missing = value is MISSING
    if missing and ctx.get("budget") is MISSING:
        route = ("budget",)
    need = f"{why}, so the pull request needs a standing GitHub approval by someone budget.approved_by names"
    if state.error:
        yield Problem(route, f"{need}, and it could not be verified: {state.error}", missing=missing)
        return
    named = named_approvers(value, state.approvers)
    if not named.logins:
        if named.unknown_teams:
            detail = (f"{', '.join('@' + t for t in named.unknown_teams)} is not in the approvers map of the base revision's "
                      f"configuration (approvers: {{\"@org/team\": [login, ...]}})")
        elif isinstance(value, str) and value.strip():
            detail = f"{show(value)} names no GitHub user (@login) or team (@org/team)"
        else:
            detail = "budget.approved_by is absent or empty"
        yield Problem(route, f"{need}: {detail}", missing=missing)
        return
    if any(state.verdicts.get(login) == "APPROVED" and login != state.author for login in named.logins):
        return
    reasons = []
    for login in named.logins[:10]:
        verdict = state.verdicts.get(login)
        if login == state.author:
            reasons.append(f"@{login} is the pull request's author" + (" (self-approval does not count)" if verdict == "APPROVED" else ""))
        elif verdict in _VERDICT_WORDS:
            reasons.append(f"@{login} {_VERDICT_WORDS[verdict]}")
        else:
            reasons.append(f"@{login} has not approved")
    if len(named.logins) > 10:
        reasons.append(f"and {len(named.logins) - 10} more have not approved")
    if named.unknown_teams:
        reasons.append(f"{', '.join('@' + t for t in named.unknown_teams)} is not in the base revision's approvers map")
    yield Problem(route, f"{need}, and none has one: {'; '.join(reasons)}. Ask one of them to approve the pull request", missing=missing)
