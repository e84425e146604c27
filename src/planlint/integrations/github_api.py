"""A minimal GitHub REST client: the sticky pull-request comment and the reviews PL707 reads.

Five calls (who the token is, list a pull request's comments, create one,
update one; list a pull request's reviews) on top of `planlint.services.http`
(timeouts, retries, same-origin redirects, scrubbed errors); lists follow
`Link: rel="next"`. The token travels only in the Authorization header, to
the API's own origin: pagination links pointing elsewhere are refused.

The sticky comment is found by its marker AND its author: only a comment
written by the token's own identity is adopted. Anyone can post a comment
starting with the marker (the pull request's author first of all); adopting
it would have planlint's edits refused and leave the author's text standing
as "planlint's" verdict.
"""

from __future__ import annotations

import re
import time
from typing import Any, Callable, Iterator
from urllib.parse import urlsplit

from planlint.services.http import (
    DEFAULT_TIMEOUT,
    Answer,
    Client,
    HTTPError,
    RetryPolicy,
    Secret,
    describe,
    log_to_stderr,
    origin,
    scrub,
)
from planlint.core.messages import sanitize
from planlint.rules.secrets import redact

DEFAULT_API_URL = "https://api.github.com"
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_MAX_PAGES = 50  # 5000 comments or reviews
# The login GitHub shows on comments written with the workflow's GITHUB_TOKEN.
ACTIONS_BOT = "github-actions[bot]"
# A GitHub login, or a GitHub App's bot login (`slug[bot]`): no other user can take a `[bot]` name.
_LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}(?:\[bot\])?$")
# GET /user answers this to an installation token (GITHUB_TOKEN, a GitHub App's token).
_INTEGRATION = "resource not accessible by integration"


class GitHubError(HTTPError):
    pass


class GitHub:
    def __init__(
        self,
        token: str,
        api_url: str = DEFAULT_API_URL,
        *,
        timeout: tuple[float, float] = DEFAULT_TIMEOUT,
        policy: RetryPolicy = RetryPolicy(),
        log: Callable[[str], None] = log_to_stderr,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        parts = urlsplit(api_url)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.username or parts.password:
            raise GitHubError("GitHub API URL must be http(s)://host[/path] without credentials")
        if token and token in api_url:
            raise GitHubError("GitHub API URL must not contain the token: it goes only in the Authorization header")
        self.api_url = api_url.rstrip("/")
        self.token = Secret(token)
        self.log = log
        self.client = Client(
            timeout=timeout, policy=policy, token=token, token_origin=self.api_url, foreign_redirects="refuse",
            headers={"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"},
            label="GitHub API", log=log, sleep=sleep,
        )
        self.session = self.client.session
        self._login: str | None = None

    def __repr__(self) -> str:  # never show the token
        return f"GitHub({self.api_url!r})"

    def request(self, method: str, url: str, *, json: Any = None, idempotent: bool | None = None) -> Answer:
        if origin(url) != origin(self.api_url):
            raise GitHubError(f"GitHub API: refusing to send the token to {urlsplit(url).hostname or '?'}")
        try:
            answer = self.client.request(method, url, json=json, idempotent=idempotent)
        except HTTPError as exc:
            raise GitHubError(str(exc), status=exc.status, ambiguous=exc.ambiguous) from None
        if answer.status >= 400:
            raise self._failure(method, url, answer)
        return answer

    def _failure(self, method: str, url: str, answer: Answer) -> GitHubError:
        return GitHubError(
            scrub(f"GitHub API: {describe(method, url)} answered {answer.status} {answer.reason}".rstrip()
                  + _api_message(answer, [self.token.value]), [self.token.value]),
            status=answer.status,
            ambiguous=answer.status >= 500 and method.upper() == "POST",
        )

    def _json(self, answer: Answer) -> Any:
        try:
            return answer.json()
        except ValueError:
            raise GitHubError(f"GitHub API: {describe(answer.method, answer.url)} answered with something that is not JSON") from None

    def token_login(self, app_login: str = "") -> str:
        """The login that comments written with this token carry.

        A user token (a personal access token, a bot user's token): `GET /user`.
        An installation token (the workflow's GITHUB_TOKEN, a GitHub App's
        token) cannot read `/user` (403 "Resource not accessible by
        integration"), and nothing an installation token may read names its
        app, so its login is `app_login` as the workflow set it (the action's
        `comment-author` input), else `github-actions[bot]`. Never guessed from
        the comments themselves: they are written by anyone.
        """
        if self._login is not None:
            return self._login
        if app_login and not _LOGIN.match(app_login):
            raise GitHubError("the comment author must be a GitHub login such as my-app[bot]")
        url = f"{self.api_url}/user"
        try:
            answer = self.client.request("GET", url)
        except HTTPError as exc:
            raise GitHubError(str(exc), status=exc.status, ambiguous=exc.ambiguous) from None
        if answer.status == 403 and _INTEGRATION in answer.body[:4096].decode("utf-8", "replace").lower():
            self._login = app_login or ACTIONS_BOT
            return self._login
        if answer.status >= 400:
            raise self._failure("GET", url, answer)
        data = self._json(answer)
        login = data.get("login") if isinstance(data, dict) else None
        if not isinstance(login, str) or not _LOGIN.match(login):
            raise GitHubError(f"GitHub API: {describe('GET', url)} did not name the token's user")
        self._login = login
        return login

    def _pages(self, url: str, what: str) -> Iterator[dict]:
        """Every item of a list endpoint, following `Link: rel="next"` (same origin only)."""
        for _ in range(_MAX_PAGES):
            response = self.request("GET", url)
            page = self._json(response)
            if not isinstance(page, list):
                raise GitHubError(f"GitHub API: {describe('GET', url)} did not answer with a list")
            yield from (item for item in page if isinstance(item, dict))
            next_url = response.links.get("next", {}).get("url")
            if not next_url:
                return
            url = next_url
        raise GitHubError(f"GitHub API: more than {_MAX_PAGES} pages of {what}")

    def issue_comments(self, repo: str, number: int) -> Iterator[dict]:
        """Every comment on an issue or pull request."""
        return self._pages(f"{self.api_url}/repos/{_repo(repo)}/issues/{int(number)}/comments?per_page=100", "comments")

    def pull_request_reviews(self, repo: str, number: int) -> list[dict]:
        """Every review of a pull request, oldest first (GET /repos/{owner}/{repo}/pulls/{number}/reviews)."""
        return list(self._pages(f"{self.api_url}/repos/{_repo(repo)}/pulls/{int(number)}/reviews?per_page=100", "reviews"))

    def create_issue_comment(self, repo: str, number: int, body: str) -> dict:
        url = f"{self.api_url}/repos/{_repo(repo)}/issues/{int(number)}/comments"
        return self._json(self.request("POST", url, json={"body": body}))

    def update_issue_comment(self, repo: str, comment_id: int, body: str) -> dict:
        url = f"{self.api_url}/repos/{_repo(repo)}/issues/comments/{int(comment_id)}"
        # Setting a body is idempotent: safe to retry after a timeout.
        return self._json(self.request("PATCH", url, json={"body": body}, idempotent=True))


def _repo(repo: str) -> str:
    if not _REPO.match(repo or ""):
        raise GitHubError(f"GITHUB_REPOSITORY must be OWNER/NAME, got {repo!r}")
    return repo


def _api_message(answer: Answer, secrets: list[str]) -> str:
    try:
        data = answer.json()
    except ValueError:
        return ""
    message = data.get("message") if isinstance(data, dict) else None
    if not isinstance(message, str) or not message:
        return ""
    return ": " + sanitize(redact(scrub(message[:200], secrets)))


def comment_login(comment: dict) -> str:
    user = comment.get("user")
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) else ""


def find_sticky(comments: Iterator[dict], marker: str, author: Callable[[], str]) -> tuple[dict | None, list[str]]:
    """The first comment whose body starts with the marker and whose author is `author()`.

    `author` is called only once a marked comment is seen (most pull requests
    have none, and then the token's identity is never asked for). Also returns
    the logins of marked comments written by anyone else, in order.
    """
    others: list[str] = []
    for comment in comments:
        body = comment.get("body")
        if not (isinstance(body, str) and body.lstrip().startswith(marker) and isinstance(comment.get("id"), int)):
            continue
        login = comment_login(comment)
        if login and login.casefold() == author().casefold():  # GitHub logins ignore case
            return comment, others
        others.append(login)
    return None, others


def upsert_sticky_comment(
    client: GitHub, repo: str, number: int, body: str, marker: str, *, create: bool = True, app_login: str = ""
) -> tuple[str, dict | None]:
    """Update the pull request's marked comment, or create it. Returns (what happened, comment).

    Only a marked comment written by the token's identity is ours (see
    `GitHub.token_login`; `app_login` names a GitHub App's bot). Marked
    comments by anyone else are left alone, and said so in the log.

    A create that may have reached GitHub without an answer (a timeout, a 5xx)
    is not repeated blindly: the comments are listed again first, so a slow
    GitHub never yields two sticky comments. `create=False`: only update an
    existing one (a clean run need not open a new comment).
    """
    retried = False
    while True:
        existing, others = find_sticky(client.issue_comments(repo, number), marker, lambda: client.token_login(app_login))
        if others and not retried:
            who = ", ".join(sorted({"@" + sanitize(login[:40]) if login else "an unknown author" for login in others}))
            client.log(
                f"planlint: ignored {len(others)} comment(s) starting with planlint's marker written by {who}, "
                f"not by this token's identity ({sanitize(client.token_login(app_login))})"
            )
        if existing is not None:
            return "updated", client.update_issue_comment(repo, existing["id"], body)
        if not create:
            return "skipped", None
        try:
            return "created", client.create_issue_comment(repo, number, body)
        except HTTPError as exc:
            if not exc.ambiguous or retried:
                raise
            retried = True
            client.log("planlint: GitHub API: creating the comment got no clear answer; checking whether it exists before trying again")
