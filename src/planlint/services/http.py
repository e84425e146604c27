"""HTTP for planlint: the one client behind the registry and the GitHub API.

    client = Client(timeout=(5.0, 30.0), token=token, label="GitHub API")
    answer = client.request("GET", url)          # an Answer: status, headers, body
    answer = client.get(url)

* Every request has a finite (connect, read) timeout, and one exchange
  (headers and body) may take at most connect + 2 x read seconds, however
  slowly a server trickles bytes.
* Retried with exponential backoff and jitter: connection errors and
  timeouts, 5xx, 429 and rate-limit 403s (GitHub: `Retry-After`, or
  `x-ratelimit-remaining: 0` with `x-ratelimit-reset`), honouring the
  server's wait. Total waiting per call is capped (`RetryPolicy.max_wait`):
  a wait past the cap ends the call at once (GitHub, whose rate limits
  punish early retries), or with `clip_waits` is cut to what is left of
  the budget (the registry's `max_retry_after`).
* A request that is not idempotent (POST) is retried only when the server
  cannot have acted on it (refused connection, connect timeout, 429,
  rate-limit 403); otherwise the caller decides (`HTTPError.ambiguous`).
* Redirects are followed by hand. The token goes only to its own origin
  (scheme, host, port): a redirect elsewhere is refused
  (`foreign_redirects="refuse"`) or followed without the token ("follow").
* Bodies are read up to `max_body` bytes.
* Messages are built from the kind of failure (connection refused, no
  answer within 10s, server error 503 ...), never from exception text; they
  name the path, never the query, and are scrubbed of every secret. They are
  raised `from None`, so no chained exception carries request details.

`requests` is imported on first use: a plain lint never pays for it.
"""

from __future__ import annotations

import email.utils
import json as jsonlib
import random
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping
from urllib.parse import urljoin, urlsplit

from planlint.core.messages import sanitize

DEFAULT_TIMEOUT = (5.0, 30.0)  # seconds: connect, read
DEFAULT_MAX_BODY = 16 * 1024 * 1024
USER_AGENT = "planlint"
_IDEMPOTENT = {"GET", "HEAD", "OPTIONS", "PUT", "DELETE"}
_REDIRECTS = {301, 302, 303, 307, 308}
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
    clip_waits: bool = False  # a longer wait is cut to the budget left instead of giving up


@dataclass(frozen=True)
class Answer:
    """A final answer: the status, headers (case-insensitive) and the whole body."""

    status: int
    body: bytes
    url: str
    method: str = "GET"
    reason: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)

    def json(self) -> Any:
        """The body as JSON; ValueError when it is not."""
        return jsonlib.loads(self.body.decode("utf-8"))

    @property
    def links(self) -> dict[str, dict[str, str]]:
        """The `Link` header by rel, as requests gives it."""
        value = self.headers.get("Link")
        if not value:
            return {}
        from requests.utils import parse_header_links

        return {link.get("rel") or link.get("url"): link for link in parse_header_links(value)}


class Secret:
    """A token that never shows in a repr, `vars()` or a traceback's locals: `.value` to use it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        object.__setattr__(self, "_value", value)

    @property
    def value(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret(***)"

    __str__ = __repr__

    def __bool__(self) -> bool:
        return bool(self._value)


def reveal(token: "str | Secret | None") -> str | None:
    return token.value if isinstance(token, Secret) else token


class BearerAuth:
    """`Authorization: Bearer TOKEN`, given as requests auth so that .netrc never replaces it."""

    def __init__(self, token: "str | Secret") -> None:
        self._token = token if isinstance(token, Secret) else Secret(token)

    def __call__(self, request):
        request.headers["Authorization"] = f"Bearer {self._token.value}"
        return request

    def __repr__(self) -> str:
        return "BearerAuth(***)"


def make_session(user_agent: str = USER_AGENT, pool_size: int = 8):
    import requests
    from requests.adapters import HTTPAdapter

    session = requests.Session()
    adapter = HTTPAdapter(pool_connections=pool_size, pool_maxsize=pool_size, max_retries=0)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.headers["User-Agent"] = user_agent
    return session


_TOKEN_PREFIX = re.compile(r"^(?:gh[pousr]_|github_pat_|sk-|hf_|xox[abposr]-)")


def scrub(text: str, secrets: Iterable[str]) -> str:
    """`text` without any of `secrets`, nor a token's body echoed without its `ghp_`-style prefix."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
            prefix = _TOKEN_PREFIX.match(secret)
            if prefix and len(secret) - prefix.end() >= 16:
                text = text.replace(secret[prefix.end():], "***")
    return text


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the default port filled in; a bad port is None."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port or {"http": 80, "https": 443}.get(scheme)


def describe(method: str, url: str) -> str:
    """`GET /repos/o/r/issues/1/comments`: no host credentials, no query."""
    return f"{method} {urlsplit(url).path or '/'}"


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date), else None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def server_wait(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asks us to wait: `Retry-After`, else GitHub's rate-limit reset."""
    wait = retry_after(headers.get("Retry-After"), now)
    if wait is not None:
        return wait
    if headers.get("x-ratelimit-remaining") == "0":
        reset = (headers.get("x-ratelimit-reset") or "").strip()
        if reset.isdigit():
            return max(0.0, int(reset) - (time.time() if now is None else now)) + 1.0
    return None


def rate_limited(answer: Answer) -> bool:
    """429, or one of GitHub's rate-limit 403s (primary or secondary)."""
    if answer.status == 429:
        return True
    if answer.status != 403:
        return False
    if answer.headers.get("Retry-After") or answer.headers.get("x-ratelimit-remaining") == "0":
        return True
    return b"secondary rate limit" in answer.body[:4096].lower()


def log_to_stderr(message: str) -> None:
    print(message, file=sys.stderr)


class _Failure(Exception):
    """Why one attempt failed, in words safe to print; `retry`: may another attempt help."""

    def __init__(self, reason: str, *, retry: str = "no") -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry = retry  # "no", "always" (never reached the server), "idempotent"


def _classify(exc: Exception, timeout: tuple[float, float]) -> _Failure:
    """A safe description of a requests failure: its kind, never its text."""
    import requests

    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return _Failure(f"could not connect within {timeout[0]:g}s", retry="always")
    if isinstance(exc, requests.exceptions.ReadTimeout):
        return _Failure(f"no answer within {timeout[1]:g}s", retry="idempotent")
    if isinstance(exc, requests.exceptions.SSLError):
        return _Failure("TLS error (certificate or protocol)")
    if isinstance(exc, (requests.exceptions.ConnectionError, requests.exceptions.ChunkedEncodingError)):
        from urllib3.exceptions import NewConnectionError, ReadTimeoutError

        args = getattr(exc, "args", ())
        inner = getattr(args[0], "reason", args[0] if args else None) if args else None
        text = str(exc).lower()
        if isinstance(inner, ReadTimeoutError) or "read timed out" in text:
            return _Failure(f"no answer within {timeout[1]:g}s", retry="idempotent")
        if "refused" in text:
            return _Failure("connection refused", retry="always")
        if any(s in text for s in ("name or service not known", "nodename nor servname", "getaddrinfo failed", "name resolution", "no address associated")):
            return _Failure("host name not found", retry="always")
        if isinstance(inner, NewConnectionError):
            return _Failure("could not connect", retry="always")
        if "reset" in text or "aborted" in text or "remotedisconnected" in text:
            return _Failure("connection closed by the server", retry="idempotent")
        return _Failure("connection failed", retry="idempotent")
    if isinstance(exc, requests.exceptions.InvalidHeader):
        return _Failure("invalid request header (is the token well-formed?)")
    return _Failure(f"request failed ({type(exc).__name__})")


def request_with_retries(
    session: Any,
    method: str,
    url: str,
    *,
    json: Any = None,
    headers: dict | None = None,
    token: "str | Secret | None" = None,
    token_origin: str | None = None,
    timeout: tuple[float, float] = DEFAULT_TIMEOUT,
    policy: RetryPolicy = RetryPolicy(),
    idempotent: bool | None = None,
    foreign_redirects: str = "refuse",
    max_body: int = DEFAULT_MAX_BODY,
    secrets: Iterable[str] = (),
    sleep: Callable[[float], None] = time.sleep,
    log: Callable[[str], None] | None = log_to_stderr,
    label: str = "",
    name_request: bool = True,
) -> Answer:
    """Send one request, retrying what is safe to retry. Returns the final Answer.

    Non-2xx answers that are not retried are returned for the caller to
    judge; transport failures, retries that ran out, refused redirects and
    oversized bodies raise `HTTPError`. The token is sent as a bearer token
    while the URL's origin is `token_origin` (default: the first URL's).
    Messages start with `label` and, with `name_request`, the method and path.
    """
    method = method.upper()
    token = reveal(token)
    secrets = [s for s in (*secrets, token) if s]
    if idempotent is None:
        idempotent = method in _IDEMPOTENT
    if foreign_redirects not in ("refuse", "follow"):
        raise ValueError("foreign_redirects: refuse or follow")
    connect, read = float(timeout[0]), float(timeout[1])
    if not (0 < connect < float("inf") and 0 < read < float("inf")):
        raise ValueError("timeout: a finite (connect, read) pair of positive seconds")
    timeout = (connect, read)
    start_origin = origin(token_origin or url)
    auth = BearerAuth(token) if token else None
    prefix = f"{label}: " if label else ""
    waited = 0.0
    attempt = 0
    redirects = 0

    def fail(message: str, **kwargs) -> HTTPError:
        return HTTPError(sanitize(scrub(prefix + message, secrets)), **kwargs)

    def note(message: str) -> None:
        if log is not None:
            log(sanitize(scrub(f"planlint: {prefix}{message}", secrets)))

    def tries() -> str:
        return f" (after {attempt} attempts)" if attempt > 1 else ""

    def backoff() -> float:
        base = min(policy.max_backoff, policy.backoff * (2 ** (attempt - 1)))
        return base * random.uniform(0.75, 1.0)

    def wait_for_retry(delay: float, reason: str, asked: bool = False) -> str | None:
        """Sleep before the next attempt; None if it may go ahead, else why not."""
        nonlocal waited
        if attempt >= policy.attempts:
            return "attempts"
        left = policy.max_wait - waited
        if delay > left:
            if not policy.clip_waits or left <= 0:
                note(f"{reason}; waiting {delay:.0f}s more would pass the {policy.max_wait:g}s limit, giving up")
                if asked:
                    return f"the server asks to wait {delay:.0f}s, past the {policy.max_wait:g}s limit on waiting"
                return f"another {delay:.1f}s of backoff would pass the {policy.max_wait:g}s limit on waiting"
            delay = left
        note(f"{reason}; retrying in {delay:.1f}s (attempt {attempt + 1} of {policy.attempts})")
        sleep(delay)
        waited += delay
        return None

    while True:
        attempt += 1
        what = describe(method, url) + ": " if name_request else ""
        send_token = origin(url) == start_origin
        try:
            answer, location = _send_within(
                _deadline(timeout), session, method, url, json, headers, auth if send_token else None, timeout, max_body,
            )
        except _Failure as failure:
            retryable = failure.retry == "always" or (failure.retry == "idempotent" and idempotent)
            if retryable:
                why = wait_for_retry(backoff(), f"{what}{failure.reason}")
                if why is None:
                    continue
            ambiguous = failure.retry == "idempotent" and not idempotent
            raise fail(f"{what}{failure.reason}{tries()}", ambiguous=ambiguous) from None

        if location is not None:
            try:
                target = urljoin(url, location)
                target_origin = origin(target)
            except ValueError:  # e.g. an unclosed [ in the host
                raise fail(f"{what}redirected to an invalid URL") from None
            if target_origin[0] not in ("http", "https"):
                raise fail(f"{what}redirected to a URL that is not http(s)")
            if target_origin != start_origin and foreign_redirects == "refuse":
                host = urlsplit(target).hostname or "?"
                raise fail(f"{what}redirected to another host ({host}); not following it, so the credentials stay with {start_origin[1]}")
            redirects += 1
            if redirects > _MAX_REDIRECTS:
                raise fail(f"{what}more than {_MAX_REDIRECTS} redirects")
            if answer.status == 303 or (answer.status in (301, 302) and method == "POST"):
                method, json = "GET", None
            url = target
            attempt -= 1  # following a redirect is not a retry
            continue

        status = answer.status
        if rate_limited(answer):
            delay = server_wait(answer.headers)
            asked = delay is not None
            if delay is None:
                delay = 60.0 if status == 403 else backoff()  # GitHub: wait at least a minute
            why = wait_for_retry(delay, f"{what}rate limited ({status})", asked or status == 403)
            if why is None:
                continue
            raise fail(f"{what}rate limited ({status}){tries()}" + (f"; {why}" if why != "attempts" else ""), status=status)
        if status >= 500 and idempotent:
            delay = server_wait(answer.headers)
            why = wait_for_retry(backoff() if delay is None else delay, f"{what}server error {status}", delay is not None)
            if why is None:
                continue
            raise fail(f"{what}server error {status}{tries()}" + (f"; {why}" if why != "attempts" else ""), status=status)
        return answer


def _deadline(timeout: tuple[float, float]) -> float:
    """The most one exchange may take, headers and body: a server that sends a byte
    just before each read timeout would otherwise hold the call for ever."""
    return timeout[0] + 2 * timeout[1]


def _send_within(deadline: float, *args) -> tuple[Answer, str | None]:
    """`_send(*args)`, given up after `deadline` seconds.

    The exchange runs in a daemon thread; one that overruns is abandoned (its
    socket is closed when it next reads, or when planlint exits), so a
    trickling server costs at most the deadline.
    """
    import threading

    box: dict = {}

    def run() -> None:
        try:
            box["answer"] = _send(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=run, name="planlint-http", daemon=True)
    worker.start()
    worker.join(deadline)
    if worker.is_alive():
        raise _Failure(f"no complete answer within {deadline:g}s", retry="idempotent")
    if "error" in box:
        raise box["error"]
    return box["answer"]


def _send(session, method, url, json, headers, auth, timeout, max_body) -> tuple[Answer, str | None]:
    """One HTTP exchange, body read up to `max_body`: (answer, redirect location or None)."""
    import requests

    try:
        response = session.request(
            method, url, json=json, headers=headers, auth=auth, timeout=timeout, allow_redirects=False, stream=True,
        )
    except requests.exceptions.RequestException as exc:
        raise _classify(exc, timeout) from None
    except (ValueError, UnicodeError):  # requests parses a redirect's Location even when not following it
        raise _Failure("invalid URL (in the request or in a redirect)") from None
    try:
        status = response.status_code
        location = response.headers.get("Location") if status in _REDIRECTS else None
        body = b""
        if location is None:
            chunks, size = [], 0
            try:
                for chunk in response.iter_content(64 * 1024):
                    size += len(chunk)
                    if size > max_body:
                        raise _Failure(f"answer larger than {max_body:,} bytes")
                    chunks.append(chunk)
            except requests.exceptions.RequestException as exc:
                raise _classify(exc, timeout) from None
            body = b"".join(chunks)
        reason = response.reason if isinstance(response.reason, str) else ""
        return Answer(status, body, url, method, reason, response.headers), location
    finally:
        response.close()


class Client:
    """A session with its timeout, retry policy and token: what the registry and GitHub clients share."""

    def __init__(
        self,
        *,
        timeout: tuple[float, float] = DEFAULT_TIMEOUT,
        policy: RetryPolicy = RetryPolicy(),
        token: "str | Secret | None" = None,
        token_origin: str | None = None,
        headers: Mapping[str, str] | None = None,
        foreign_redirects: str = "refuse",
        max_body: int = DEFAULT_MAX_BODY,
        pool_size: int = 8,
        label: str = "",
        name_request: bool = True,
        log: Callable[[str], None] | None = log_to_stderr,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.timeout = (float(timeout[0]), float(timeout[1]))
        self.policy = policy
        self._token = Secret(reveal(token)) if token else None
        self.token_origin = token_origin
        self.foreign_redirects = foreign_redirects
        self.max_body = max_body
        self.label = label
        self.name_request = name_request
        self.log = log
        self._sleep = sleep
        self.session = make_session(pool_size=pool_size)
        self.session.headers.update(headers or {})

    def __repr__(self) -> str:  # never show the token
        return f"Client(timeout={self.timeout}, policy={self.policy}, token={'set' if self._token else 'none'})"

    def close(self) -> None:
        self.session.close()

    def request(self, method: str, url: str, *, json: Any = None, idempotent: bool | None = None) -> Answer:
        return request_with_retries(
            self.session, method, url, json=json, token=self._token, token_origin=self.token_origin,
            timeout=self.timeout, policy=self.policy, idempotent=idempotent,
            foreign_redirects=self.foreign_redirects, max_body=self.max_body,
            sleep=self._sleep, log=self.log, label=self.label, name_request=self.name_request,
        )

    def get(self, url: str) -> Answer:
        return self.request("GET", url)
