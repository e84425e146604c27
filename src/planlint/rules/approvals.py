"""PL707: a change that needs an approval has a verified one, from the pull request's GitHub reviews.

Runs only in diff mode, for a GitHub pull request. Diff mode hands the rule,
besides the plan and its base version (`ctx.base`):

* `ctx.reviews`: a `reviews.ReviewState` (the pull request's reviews, read by
  diff mode's caller), absent outside a pull request;
* `ctx.changed_since(commit)`: what of the plan's approval subject (its
  budget, metadata.status and run configs, `approval_subject`) differs
  between that commit and the head, `subject_changes`' list; or a string
  saying why that cannot be told (a commit this clone does not have).

An approval counts when it stands (the reviewer's latest verdict), is not
the author's, comes from someone the base revision authorises (a member of
a team of its `approvers` map, or a reviewer with write access), and is of
the head being judged or of an earlier commit whose approval subject is the
head's.

Docstring examples are diff-mode examples (see `rules/diff.py`); a line
`# reviews: carol APPROVED, author: bob` runs them as a pull request whose
reviews a GitHub imitation serves.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from planlint.core.messages import show
from planlint.core.reviews import WRITE_ACCESS, ReviewState, named_approvers
from planlint.core.yaml_values import scalar_text
from planlint.rules.base import ERROR, MISSING, PlanContext, Problem, lookup, rule
from planlint.rules.budget import spend_amount
from planlint.rules.diff import currency_changed, first_change, same
from planlint.rules.recurrence import spend_rises

RUN_CONFIG_KEYS = ("training_config", "eval_config", "benchmark_config")


def approval_subject(data: Any, read: Callable[[str], str | None]) -> dict[str, Any]:
    """What an approval of a plan is of: its `budget`, its `metadata.status`, and the text of each
    run config it names (`read(path)`: the file's text, links resolved, or None). Values may be MISSING."""
    subject: dict[str, Any] = {"budget": lookup(data, ("budget",)), "metadata.status": lookup(data, ("metadata", "status"))}
    for key in RUN_CONFIG_KEYS:
        path = lookup(data, ("run", key))
        subject[f"run.{key}"] = (path, read(path)) if isinstance(path, str) and path.strip() else (None, None)
    return subject


def subject_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What differs between two approval subjects, in words (empty: the same approval subject)."""
    changes: list[str] = []
    if not same(old["budget"], new["budget"]):
        if isinstance(old["budget"], dict) and isinstance(new["budget"], dict):
            where, _ = first_change(old["budget"], new["budget"], ("budget",)) or (("budget",), "changed")
            changes.append(_changed(where, lookup(old["budget"], where[1:]), lookup(new["budget"], where[1:])))
        else:
            changes.append(_changed(("budget",), old["budget"], new["budget"]))
    if not same(old["metadata.status"], new["metadata.status"]):
        changes.append(_changed(("metadata", "status"), old["metadata.status"], new["metadata.status"]))
    for key in RUN_CONFIG_KEYS:
        (old_path, before), (path, after) = old[f"run.{key}"], new[f"run.{key}"]
        if before != after:
            named = path if path is not None else old_path
            changes.append(f"the run config {show(named)} (run.{key}) changed" if named is not None else f"run.{key} changed")
    return changes


def _changed(route: tuple, before: Any, after: Any) -> str:
    where = ".".join(str(part) for part in route)
    if before is MISSING:
        return f"{where} was added"
    if after is MISSING:
        return f"{where} was removed"
    if isinstance(before, (dict, list)) or isinstance(after, (dict, list)):
        return f"{where} changed"
    return f"{where} changed from {_word(before)} to {_word(after)}"


def _word(value: Any) -> str:
    """An amount as written (600), anything else quoted ('running')."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return show(scalar_text(value))[1:-1]
    return show(scalar_text(value) if value is not None else None)


def approval_needed(base: Any, head: Any) -> str | None:
    """Why the change of a plan needs a verified approval (PL707), or None.

    Its status becomes approved or running (a new plan that starts so, too),
    its currency changed (another currency is another cap), its `max_spend` rose,
    or what it may spend as a recurring plan rose (`recurrence.spend_rises`: it
    became recurring, more runs a month, higher caps).
    """
    if not isinstance(head, dict) or not head:
        return None
    base = base if isinstance(base, dict) else {}
    reasons = []
    old_status, new_status = lookup(base, ("metadata", "status")), lookup(head, ("metadata", "status"))
    if new_status in COMMITTING_STATUSES and old_status not in COMMITTING_STATUSES:
        was = f"from {show(scalar_text(old_status))} " if isinstance(old_status, str) else ""
        reasons.append(f"metadata.status becomes {show(new_status)} {was}".rstrip())
    currency = currency_changed(base, head)
    if currency is not None:
        reasons.append(currency)
    old_cap = spend_amount(lookup(base, ("budget", "max_spend")))
    new_cap = spend_amount(lookup(head, ("budget", "max_spend")))
    if old_cap is not None and new_cap is not None and new_cap > old_cap:
        reasons.append(
            f"budget.max_spend rose from {scalar_text(lookup(base, ('budget', 'max_spend')))} to {scalar_text(lookup(head, ('budget', 'max_spend')))}"
        )
    reasons += [rise.words for rise in spend_rises(base, head) if not (rise.currency and currency is not None)]
    return " and ".join(reasons) or None


COMMITTING_STATUSES = ("approved", "running")
_VERDICT_WORDS = {"CHANGES_REQUESTED": "requested changes", "DISMISSED": "had their approval dismissed"}


@rule("PL707", "approval-not-verified", ERROR, scope="diff")
def approval_not_verified(ctx: PlanContext) -> Iterator[Problem]:
    """A plan's status becomes approved or running, or its cap rose or changed currency, without a verified approval of it.

    `budget.approved_by` is text the pull request's author writes; on its own
    it proves nothing. When planlint runs for a GitHub pull request (a
    `pull_request` or `pull_request_review` event), it reads the pull
    request's reviews: someone `approved_by` names must have an APPROVED
    review that still stands (their latest review: a dismissed approval, or
    one followed by CHANGES_REQUESTED, does not count) and must not be the
    pull request's author. `approved_by` names users (`@login`) or teams
    (`@org/team`); a team's members come from the `approvers:` map of the
    base revision's configuration (the pull request cannot add itself to
    it). Who may approve is decided by the base revision too: a member of
    a team of that map, or, for a user named directly, someone with write
    access to the repository (GitHub's `author_association` OWNER, MEMBER
    or COLLABORATOR); otherwise the author could name a friend with no
    access at all. An approval is of one commit (the review's `commit_id`):
    it counts for the head being judged, or for an earlier commit whose
    `budget`, `metadata.status` and run configs (their content, links
    resolved) are the head's; a later change of any of them makes it stale.
    Reviews that cannot be read (no token, 403, 404) fail the check. A
    suppression comment in the plan does not silence PL707 (the author
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
    route: tuple[str, ...] = ("budget", "approved_by")
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
    reasons = [_why_not(login, state, ctx) for login in named.logins]
    if any(reason is None for reason in reasons):
        return
    shown = [reason for reason in reasons[:10] if reason is not None]
    if len(named.logins) > 10:
        shown.append(f"and {len(named.logins) - 10} more have not approved")
    if named.unknown_teams:
        shown.append(f"{', '.join('@' + t for t in named.unknown_teams)} is not in the base revision's approvers map")
    yield Problem(route, f"{need}, and none has one: {'; '.join(shown)}. Ask one of them to approve the pull request", missing=missing)


def _why_not(login: str, state: ReviewState, ctx: PlanContext) -> str | None:
    """Why `login`'s review does not approve this plan's change, or None when it does."""
    standing = state.reviews.get(login)
    verdict = standing.state if standing is not None else state.verdicts.get(login)
    if login == state.author:
        return f"@{login} is the pull request's author" + (" (self-approval does not count)" if verdict == "APPROVED" else "")
    if verdict in _VERDICT_WORDS:
        return f"@{login} {_VERDICT_WORDS[verdict]}"
    if verdict != "APPROVED":
        return f"@{login} has not approved"
    if not state.authorised(login):
        association = standing.association if standing is not None and standing.association else "absent"
        return (f"@{login} approved but has no write access to the repository (author_association {association}, "
                f"not {', '.join(WRITE_ACCESS[:-1])} or {WRITE_ACCESS[-1]}) and is in no team of the base revision's approvers map")
    commit = standing.commit_id if standing is not None else None
    if commit is not None and commit == state.head_sha:
        return None  # an approval of the head being judged
    if commit is None:
        return f"@{login} approved a commit GitHub no longer knows, so what it approved cannot be compared with the head"
    changed = ctx.changed_since(commit) if ctx.changed_since is not None else "diff mode could not read it"
    if isinstance(changed, str):
        return f"@{login} approved commit {commit[:12]}, which {changed}"
    if changed:
        listed = "; ".join(changed[:4]) + (f"; and {len(changed) - 4} more" if len(changed) > 4 else "")
        return f"@{login} approved commit {commit[:12]}, which is stale: since then {listed}"
    return None  # an earlier commit whose budget, status and run configs are the head's
