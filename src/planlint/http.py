"""HTTP with timeouts, bounded retries and no credential leaks (generic; used by the GitHub client).

    session = make_session()
    response = request_with_retries(session, "GET", url, auth=BearerAuth(token), secrets=[token])

* Every call has a (connect, read) timeout.
* Retried with exponential backoff: connection errors and timeouts, 5xx,
  429 and rate-limit 403s (`Retry-After`, or `x-ratelimit-remaining: 0` with
  `x-ratelimit-reset`), honouring the server's wait. Total sleeping is capped
  (`RetryPolicy.max_wait`): a wait past the cap ends the call at once.
* A request that is not idempotent (POST) is retried only when the server
  cannot have acted on it (connect timeout, 429, rate-limit 403); otherwise
  the caller decides (see `HTTPError.ambiguous`).
* Redirects are followed by hand and only to the same origin (scheme, host,
  port), so a credential is never sent to another host.
* Error messages name the method and path, never the query or the
  credentials, and are scrubbed of every value in `secrets`. They are raised
  `from None` so no chained exception carries request details.

`requests` is imported on first use: a plain lint never pays for it.
"""

from __future__ import annotations

import email.utils
import random
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable
from urllib.parse import urljoin, urlsplit

DEFAULT_TIMEOUT = (5.0, 30.0)  # seconds: connect, read
USER_AGENT = "planlint"
_IDEMPOTENT = {"GET", "HEAD", "OPTIONS", "PUT", "DELETE"}
_MAX_REDIRECTS = 5


class HTTPError(Exception):
    """A request that did not get a usable answer. `str()` is safe to print."""

    def __init__(self, message: str, *, status: int | None = None, ambiguous: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.ambiguous = ambiguous  # the server may have acted on it (non-idempotent request)


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 4  # tries in all, the first included
    backoff: float = 1.0  # first wait in seconds; doubles each retry
    max_backoff: float = 30.0
    max_wait: float = 60.0  # total seconds of waiting across the retries of one call


class BearerAuth:
    """`Authorization: Bearer TOKEN`, given as requests auth so that .netrc never replaces it."""

    def __init__(self, token: str) -> None:
        self._token = token

    def __call__(self, request):
        request.headers["Authorization"] = f"Bearer {self._token}"
        return request

    def __repr__(self) -> str:
        return "BearerAuth(***)"


def make_session(user_agent: str = USER_AGENT):
    import requests

    session = requests.Session()
    session.headers["User-Agent"] = user_agent
    return session


def scrub(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


def origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), port


def describe(method: str, url: str) -> str:
    """`GET /repos/o/r/issues/1/comments`: no host credentials, no query."""
    return f"{method} {urlsplit(url).path or '/'}"


def retry_after(response, now: Callable[[], float] = time.time) -> float | None:
    """Seconds the server asks us to wait (`Retry-After`, or the rate-limit reset), else None."""
    value = response.headers.get("Retry-After")
    if value:
        value = value.strip()
        if value.isdigit():
            return float(value)
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            when = None
        if when is not None:
            return max(0.0, when.timestamp() - now())
    if response.headers.get("x-ratelimit-remaining") == "0":
        reset = response.headers.get("x-ratelimit-reset", "")
        if reset.isdigit():
            return max(0.0, int(reset) - now()) + 1.0
    return None


def _rate_limited(response) -> bool:
    if response.status_code == 429:
        return True
    if response.status_code != 403:
        return False
    if response.headers.get("Retry-After") or response.headers.get("x-ratelimit-remaining") == "0":
        return True
    try:
        return "secondary rate limit" in response.text.lower()
    except Exception:  # noqa: BLE001 - an unreadable body is simply not a rate limit
        return False


def log_to_stderr(message: str) -> None:
    print(message, file=sys.stderr)


def request_with_retries(
    session: Any,
    method: str,
    url: str,
    *,
    json: Any = None,
    params: dict | None = None,
    headers: dict | None = None,
    auth: Any = None,
    timeout: tuple[float, float] = DEFAULT_TIMEOUT,
    policy: RetryPolicy = RetryPolicy(),
    idempotent: bool | None = None,
    secrets: Iterable[str] = (),
    sleep: Callable[[float], None] = time.sleep,
    log: Callable[[str], None] = log_to_stderr,
    label: str = "HTTP",
):
    """Send one request, retrying what is safe to retry. Returns the final response.

    Non-2xx answers that are not retried (or whose retries ran out) are
    returned for the caller to judge; transport failures and refused
    redirects raise `HTTPError`.
    """
    import requests

    method = method.upper()
    secrets = [s for s in secrets if s]
    if idempotent is None:
        idempotent = method in _IDEMPOTENT
    waited = 0.0
    attempt = 0
    redirects = 0
    start_origin = origin(url)

    def fail(message: str, **kwargs) -> HTTPError:
        return HTTPError(scrub(f"{label}: {message}", secrets), **kwargs)

    def plan_wait(delay: float, reason: str) -> bool:
        """Sleep before the next attempt if attempts and the wait budget allow."""
        nonlocal waited
        if attempt >= policy.attempts:
            return False
        if waited + delay > policy.max_wait:
            log(scrub(f"planlint: {label}: {reason}; waiting {delay:.0f}s more would pass the {policy.max_wait:.0f}s limit, giving up", secrets))
            return False
        log(scrub(f"planlint: {label}: {reason}; retrying in {delay:.1f}s (attempt {attempt + 1} of {policy.attempts})", secrets))
        sleep(delay)
        waited += delay
        return True

    def backoff() -> float:
        base = min(policy.max_backoff, policy.backoff * (2 ** (attempt - 1)))
        return base * random.uniform(0.75, 1.0)

    while True:
        attempt += 1
        what = describe(method, url)
        try:
            response = session.request(
                method, url, json=json, params=params, headers=headers, auth=auth,
                timeout=timeout, allow_redirects=False,
            )
        except requests.exceptions.ConnectTimeout:
            if plan_wait(backoff(), f"{what}: connection timed out"):
                continue
            raise fail(f"{what}: could not connect (timed out after {attempt} attempts)") from None
        except requests.exceptions.Timeout:
            if idempotent and plan_wait(backoff(), f"{what}: no answer within {timeout[1]:g}s"):
                continue
            raise fail(f"{what}: no answer within {timeout[1]:g}s", ambiguous=not idempotent) from None
        except requests.exceptions.ConnectionError as exc:
            # A refused connection never reached the server: safe to retry. A reset
            # may come after the server acted, so only idempotent requests retry then.
            unsent = _never_sent(exc)
            if (idempotent or unsent) and plan_wait(backoff(), f"{what}: connection failed"):
                continue
            raise fail(f"{what}: connection failed ({_reason(exc)})", ambiguous=not (idempotent or unsent)) from None
        except requests.exceptions.RequestException as exc:
            raise fail(f"{what}: {type(exc).__name__}") from None

        if response.is_redirect:
            location = response.headers.get("Location", "")
            target = urljoin(url, location)
            if origin(target) != start_origin:
                host = urlsplit(target).hostname or "?"
                raise fail(f"{what}: redirected to another host ({host}); not following it, so the credentials stay with {start_origin[1]}")
            redirects += 1
            if redirects > _MAX_REDIRECTS:
                raise fail(f"{what}: more than {_MAX_REDIRECTS} redirects")
            if response.status_code == 303:
                method, json = "GET", None
            url = target
            attempt -= 1  # following a redirect is not a retry
            continue

        status = response.status_code
        if _rate_limited(response):
            delay = retry_after(response)
            if delay is None:
                delay = 60.0 if status == 403 else backoff()  # GitHub: wait at least a minute
            if plan_wait(delay, f"{what}: rate limited ({status})"):
                continue
            raise fail(f"{what}: rate limited ({status}) after {attempt} attempts", status=status)
        if status >= 500 and idempotent:
            delay = retry_after(response) or backoff()
            if plan_wait(delay, f"{what}: server error {status}"):
                continue
            raise fail(f"{what}: server error {status} after {attempt} attempts", status=status)
        return response


def _never_sent(exc: Exception) -> bool:
    """Did the connection fail before the request was sent (refused, unresolvable host)?"""
    from urllib3.exceptions import NewConnectionError

    args = getattr(exc, "args", ())
    inner = getattr(args[0], "reason", None) if args else None
    return isinstance(inner, NewConnectionError)


def _reason(exc: Exception) -> str:
    """A short, credential-free cause: the class name of what urllib3 reported (e.g. NewConnectionError)."""
    args = getattr(exc, "args", ())
    inner = getattr(args[0], "reason", None) if args else None
    return type(inner if isinstance(inner, BaseException) else exc).__name__
