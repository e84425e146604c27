"""Who approved a pull request, as GitHub's reviews say: the data PL707 judges `budget.approved_by` by.

Pure data and logic, no I/O: `planlint.integrations.pull_request` reads the reviews from
the GitHub API and builds a `ReviewState`; diff mode hands it to the rules.

A user's standing verdict is their latest review that is APPROVED,
CHANGES_REQUESTED or DISMISSED (GitHub marks an approval DISMISSED when it
is dismissed); COMMENTED and PENDING reviews change nothing, as on GitHub.
Logins compare without regard to case, as GitHub's do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

VERDICTS = ("APPROVED", "CHANGES_REQUESTED", "DISMISSED")
_LOGIN = re.compile(r"^@?([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))$")
_TEAM = re.compile(r"^@?([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/([A-Za-z0-9_.-]{1,100})$")


@dataclass(frozen=True)
class ReviewState:
    """A pull request's reviews as PL707 needs them.

    `verdicts`: login (lower case) -> standing verdict. `author`: the pull
    request's author (lower case), whose own approval never counts.
    `approvers`: team -> logins, from the base revision's configuration.
    `error`: why the reviews could not be read (PL707 then fails closed).
    """

    number: int | None = None
    author: str | None = None
    verdicts: dict[str, str] = field(default_factory=dict)
    approvers: dict[str, list[str]] = field(default_factory=dict)
    error: str | None = None


def standing_verdicts(reviews: Iterable[Any]) -> dict[str, str]:
    """login (lower case) -> the state of that user's latest APPROVED/CHANGES_REQUESTED/DISMISSED review."""
    ordered = [r for r in reviews if isinstance(r, dict)]
    if all(isinstance(r.get("id"), int) and not isinstance(r.get("id"), bool) for r in ordered):
        ordered.sort(key=lambda r: r["id"])  # GitHub lists oldest first; ids only grow
    verdicts: dict[str, str] = {}
    for review in ordered:
        user = review.get("user")
        login = user.get("login") if isinstance(user, dict) else None
        state = review.get("state")
        if not isinstance(login, str) or not _LOGIN.match(login) or state not in VERDICTS:
            continue
        verdicts[login.lower()] = state
    return verdicts


@dataclass(frozen=True)
class Named:
    """What `budget.approved_by` names: logins, teams resolved to logins, and what could not be read."""

    logins: tuple[str, ...]  # every login named or reached through a team, lower case, in order
    teams: tuple[str, ...]  # teams (and groups) that the approvers map resolved
    unknown_teams: tuple[str, ...]  # teams the approvers map does not list
    invalid: tuple[str, ...]  # words that name no user or team


def named_approvers(value: Any, approvers: dict[str, list[str]]) -> Named:
    """`"@alice, @org/ml-leads"` -> the logins it stands for, through the base revision's `approvers` map.

    A word is a user (`@login`) or a team (`@org/team`); a plain name that
    the map lists (`@ml-leads`) is a group of the map's logins.
    """
    text = value if isinstance(value, str) else ""
    logins: list[str] = []
    teams: list[str] = []
    unknown: list[str] = []
    invalid: list[str] = []
    for word in re.split(r"[\s,;]+", text.strip()):
        if not word:
            continue
        team = _TEAM.match(word)
        login = _LOGIN.match(word)
        key = word.lstrip("@").lower()
        if team or (login and key in approvers):
            if key in approvers:
                teams.append(key)
                logins.extend(m for m in approvers[key] if m not in logins)
            else:
                unknown.append(key)
        elif login:
            if key not in logins:
                logins.append(key)
        else:
            invalid.append(word[:60])
    return Named(tuple(logins), tuple(teams), tuple(unknown), tuple(invalid))
