"""Who approved a pull request, as GitHub's reviews say: the data PL707 judges `budget.approved_by` by.

Pure data and logic, no I/O: `planlint.integrations.pull_request` reads the reviews from
the GitHub API and builds a `ReviewState`; diff mode hands it to the rules.

A user's standing verdict is their latest review that is APPROVED,
CHANGES_REQUESTED or DISMISSED (GitHub marks an approval DISMISSED when it
is dismissed); COMMENTED and PENDING reviews change nothing, as on GitHub.
Logins compare without regard to case, as GitHub's do. The standing review
keeps what PL707 judges it by besides its verdict: the commit it was of
(`commit_id`, the pull request's head when it was submitted) and the
reviewer's `author_association` with the repository.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

VERDICTS = ("APPROVED", "CHANGES_REQUESTED", "DISMISSED")
# GitHub's author_association values that mean write access to the repository.
WRITE_ACCESS = ("OWNER", "MEMBER", "COLLABORATOR")
_SHA = re.compile(r"^[0-9a-f]{40}$")
_ASSOCIATION = re.compile(r"^[A-Z_]{1,40}$")


@dataclass(frozen=True)
class Standing:
    """A user's standing review: its verdict, the commit it was of (None when GitHub no longer
    knows it, or it is no full SHA), and the reviewer's author_association (None when absent)."""

    state: str
    commit_id: str | None = None
    association: str | None = None
_LOGIN = re.compile(r"^@?([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))$")
_TEAM = re.compile(r"^@?([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/([A-Za-z0-9_.-]{1,100})$")


@dataclass(frozen=True)
class ReviewState:
    """A pull request's reviews as PL707 needs them.

    `verdicts`: login (lower case) -> standing verdict. `author`: the pull
    request's author (lower case), whose own approval never counts.
    `approvers`: team -> logins, from the base revision's configuration.
    `error`: why the reviews could not be read (PL707 then fails closed).
    `reviews`: login (lower case) -> its standing review (verdict, commit, association).
    `head_sha`: the pull request's head commit this run judges (from the event), or None.
    """

    number: int | None = None
    author: str | None = None
    verdicts: dict[str, str] = field(default_factory=dict)
    approvers: dict[str, list[str]] = field(default_factory=dict)
    error: str | None = None
    reviews: dict[str, Standing] = field(default_factory=dict)
    head_sha: str | None = None

    def authorised(self, login: str) -> bool:
        """May `login` approve? A member of a team of the base revision's approvers map may;
        anyone else needs write access to the repository (GitHub's author_association)."""
        if any(login in members for members in self.approvers.values()):
            return True
        standing = self.reviews.get(login)
        return standing is not None and standing.association in WRITE_ACCESS


def standing_verdicts(reviews: Iterable[Any]) -> dict[str, str]:
    """login (lower case) -> the state of that user's latest APPROVED/CHANGES_REQUESTED/DISMISSED review."""
    return {login: standing.state for login, standing in standing_reviews(reviews).items()}


def standing_reviews(reviews: Iterable[Any]) -> dict[str, Standing]:
    """login (lower case) -> that user's latest APPROVED/CHANGES_REQUESTED/DISMISSED review."""
    ordered = [r for r in reviews if isinstance(r, dict)]
    if all(isinstance(r.get("id"), int) and not isinstance(r.get("id"), bool) for r in ordered):
        ordered.sort(key=lambda r: r["id"])  # GitHub lists oldest first; ids only grow
    standing: dict[str, Standing] = {}
    for review in ordered:
        user = review.get("user")
        login = user.get("login") if isinstance(user, dict) else None
        state = review.get("state")
        if not isinstance(login, str) or not _LOGIN.match(login) or state not in VERDICTS:
            continue
        association = review.get("author_association")
        standing[login.lower()] = Standing(
            state,
            full_sha(review.get("commit_id")),
            association if isinstance(association, str) and _ASSOCIATION.match(association) else None,
        )
    return standing


def full_sha(value: Any) -> str | None:
    """`value` as a full lower-case commit SHA, or None."""
    return value.lower() if isinstance(value, str) and _SHA.match(value.lower()) else None


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
