"""The GitHub pull request a run is for, and its reviews (PL707).

A run is for a pull request when `$GITHUB_EVENT_PATH` holds a `pull_request`
or `pull_request_review` event (`$GITHUB_EVENT_NAME`, when set, must be one
of the pull_request* events). The payload, the environment and the workflow
are trusted; the checkout is not, so nothing here reads a file of it. The
API is `$GITHUB_API_URL` (default https://api.github.com), the repository
`$GITHUB_REPOSITORY` (else the payload's), the token `$PLANLINT_GITHUB_TOKEN`
or `$GITHUB_TOKEN`. Every call goes through `planlint.integrations.github_api` and so
`planlint.services.http` (timeouts, retries, pagination, no token in any message).

Reading the reviews never raises: a failure becomes `ReviewState.error`,
and PL707 then fails closed, saying why.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib.util import find_spec
from typing import Any, Callable, Mapping

from planlint.core.reviews import ReviewState, full_sha, standing_reviews
from planlint.integrations import github_event
from planlint.integrations.github_api import DEFAULT_API_URL, GitHub, GitHubError
from planlint.services.http import HTTPError, RetryPolicy, Secret, log_to_stderr, scrub


@dataclass
class PullRequest:
    number: int
    repository: str
    author: str | None
    api_url: str
    token: Any  # http.Secret, or None
    head_sha: str | None = None  # the head commit the event is for: what this run judges
    _state: ReviewState | None = None

    def __repr__(self) -> str:  # never show the token
        return f"PullRequest(#{self.number} in {self.repository})"

    def review_state(self, approvers: dict[str, list[str]], *, log: Callable[[str], None] | None = None) -> ReviewState:
        """The reviews, read once per run (a later call with other `approvers` reuses the reading)."""
        if self._state is None:
            self._state = self._read(log)
        state = self._state
        return ReviewState(state.number, state.author, state.verdicts, dict(approvers), state.error, state.reviews, state.head_sha)

    def _read(self, log) -> ReviewState:
        def failed(why: str) -> ReviewState:
            return ReviewState(self.number, self.author, {}, {}, why, head_sha=self.head_sha)

        if not self.token:
            return failed("no token in PLANLINT_GITHUB_TOKEN or GITHUB_TOKEN to read the pull request's reviews with "
                          "(the workflow needs pull-requests: read)")
        if find_spec("requests") is None:
            return failed("reading the pull request's reviews needs requests: pip install 'planlint[http]'")
        try:
            client = GitHub(self.token.value, self.api_url, timeout=(10.0, 30.0), policy=RetryPolicy(max_wait=60.0),
                            log=log or log_to_stderr)
            reviews = client.pull_request_reviews(self.repository, self.number)
        except (GitHubError, HTTPError) as exc:
            hint = ""
            if exc.status in (401, 403):
                hint = " (the token needs pull-requests: read)"
            elif exc.status == 404:
                hint = f" (is #{self.number} a pull request of {self.repository}, and can the token see it?)"
            return failed(f"the pull request's reviews could not be read: {exc}{hint}")
        except Exception as exc:  # noqa: BLE001 - a failure to read is a finding, never a traceback
            return failed(scrub(f"the pull request's reviews could not be read ({type(exc).__name__})", [self.token.value]))
        standing = standing_reviews(reviews)
        verdicts = {login: review.state for login, review in standing.items()}
        return ReviewState(self.number, self.author, verdicts, {}, None, standing, self.head_sha)


def from_environment(environ: Mapping[str, str] | None = None) -> PullRequest | None:
    """The pull request of this GitHub Actions run, or None when it is not for one."""
    env: Mapping[str, str] = os.environ if environ is None else environ
    event_name = env.get("GITHUB_EVENT_NAME")
    if event_name and not event_name.startswith("pull_request"):
        return None
    data = github_event.payload(dict(env))
    pull = data.get("pull_request")
    if not isinstance(pull, dict):
        return None
    number = pull.get("number")
    if not isinstance(number, int) or isinstance(number, bool) or number <= 0:
        return None
    repo = env.get("GITHUB_REPOSITORY") or ""
    if not repo:
        repository = data.get("repository")
        full_name = repository.get("full_name") if isinstance(repository, dict) else None
        repo = full_name if isinstance(full_name, str) else ""
    user = pull.get("user")
    author = user.get("login") if isinstance(user, dict) else None
    head = pull.get("head")
    token = env.get("PLANLINT_GITHUB_TOKEN") or env.get("GITHUB_TOKEN") or ""
    return PullRequest(
        number=number, repository=repo, author=author.lower() if isinstance(author, str) else None,
        api_url=env.get("GITHUB_API_URL") or DEFAULT_API_URL, token=Secret(token) if token else None,
        head_sha=full_sha(head.get("sha")) if isinstance(head, dict) else None,
    )
