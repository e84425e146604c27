"""A small, careful HTTP GET client on `requests`.

* One shared `requests.Session` (connection reuse; safe for concurrent GETs).
* Every request has a timeout.
* Connection errors, timeouts, 5xx and 429 are retried with exponential
  backoff; a `Retry-After` header is honoured, capped at `max_retry_after`.
* Redirects are followed by hand, so the bearer token only ever goes to the
  origin (scheme, host, port) it was configured for.
* Error messages are built here from the kind of failure, never from the
  exception text or the response, so they cannot carry the token.

`requests` is imported when the first client is made, not at start-up.
"""

from __future__ import annotations

import email.utils
import random
import time
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urljoin, urlsplit

USER_AGENT = "planlint"
_REDIRECTS = {301, 302, 303, 307, 308}


class HttpError(Exception):
    """A request that did not get a usable answer; the message is safe to print."""


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    url: str


def origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port or {"http": 80, "https": 443}.get(scheme)


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
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


class Client:
    """GET with timeouts, retries and a bearer token that stays with its origin."""

    def __init__(
        self,
        *,
        timeout: float,
        retries: int = 2,
        backoff: float = 0.5,
        max_retry_after: float = 30.0,
        token: str | None = None,
        token_origin: str | None = None,
        pool_size: int = 8,
        max_redirects: int = 5,
        max_body: int = 1024 * 1024,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        import requests
        from requests.adapters import HTTPAdapter

        self.timeout = float(timeout)
        self.retries = max(0, int(retries))
        self.backoff = max(0.0, float(backoff))
        self.max_retry_after = max(0.0, float(max_retry_after))
        self.max_redirects = max_redirects
        self.max_body = max_body
        self._sleep = sleep
        self._token = token
        self._token_origin = origin(token_origin) if token and token_origin else None
        self.session = requests.Session()
        adapter = HTTPAdapter(pool_connections=pool_size, pool_maxsize=pool_size, max_retries=0)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self.session.headers["User-Agent"] = USER_AGENT

    def __repr__(self) -> str:  # never show the token
        return f"Client(timeout={self.timeout}, retries={self.retries}, token={'set' if self._token else 'none'})"

    def close(self) -> None:
        self.session.close()

    def get(self, url: str) -> Answer:
        """The final answer for `url` (after redirects and retries); HttpError if there is none.

        Statuses other than 429 and 5xx are answers: the caller decides what
        a 404 or a 401 means.
        """
        error: HttpError | None = None
        for attempt in range(self.retries + 1):
            delay = self.backoff * (2 ** attempt) * random.uniform(0.5, 1.0)
            try:
                answer, wait = self._follow(url)
            except _Retryable as exc:
                error = HttpError(exc.message)
            else:
                if answer.status != 429 and answer.status < 500:
                    return answer
                error = HttpError(f"HTTP {answer.status}{' (rate limited)' if answer.status == 429 else ''}")
                if wait is not None:
                    delay = wait
            if attempt < self.retries:
                self._sleep(min(delay, self.max_retry_after))
        assert error is not None
        if self.retries:
            raise HttpError(f"{error} (after {self.retries + 1} attempts)")
        raise error

    def _headers(self, url: str) -> dict[str, str]:
        if self._token and self._token_origin is not None and origin(url) == self._token_origin:
            return {"Authorization": f"Bearer {self._token}"}
        return {}

    def _follow(self, url: str) -> tuple[Answer, float | None]:
        for _ in range(self.max_redirects + 1):
            answer, location, wait = self._once(url)
            if location is None:
                return answer, wait
            target = urljoin(url, location)
            if urlsplit(target).scheme.lower() not in ("http", "https"):
                raise HttpError("redirected to a URL that is not http(s)")
            url = target
        raise HttpError(f"more than {self.max_redirects} redirects")

    def _once(self, url: str) -> tuple[Answer, str | None, float | None]:
        import requests

        try:
            response = self.session.request(
                "GET", url, headers=self._headers(url), timeout=self.timeout, allow_redirects=False, stream=True,
            )
        except requests.exceptions.RequestException as exc:
            raise _classify(exc, self.timeout) from None
        try:
            status = response.status_code
            location = response.headers.get("Location") if status in _REDIRECTS else None
            wait = retry_after(response.headers.get("Retry-After")) if status == 429 or status >= 500 else None
            body = b""
            if location is None:
                chunks, size = [], 0
                try:
                    for chunk in response.iter_content(64 * 1024):
                        size += len(chunk)
                        if size > self.max_body:
                            raise HttpError(f"answer larger than {self.max_body:,} bytes")
                        chunks.append(chunk)
                except requests.exceptions.RequestException as exc:
                    raise _classify(exc, self.timeout) from None
                body = b"".join(chunks)
            return Answer(status, body, url), location, wait
        finally:
            response.close()


class _Retryable(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _classify(exc: Exception, timeout: float) -> Exception:
    """A safe description of a requests failure: its kind, never its text."""
    import requests

    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return _Retryable(f"connection timed out after {timeout:g}s")
    if isinstance(exc, requests.exceptions.ReadTimeout):
        return _Retryable(f"no answer within {timeout:g}s")
    if isinstance(exc, requests.exceptions.SSLError):
        return HttpError("TLS error (certificate or protocol)")
    if isinstance(exc, (requests.exceptions.ConnectionError, requests.exceptions.ChunkedEncodingError)):
        text = str(exc).lower()
        if "refused" in text:
            return _Retryable("connection refused")
        if any(s in text for s in ("name or service not known", "nodename nor servname", "getaddrinfo failed", "name resolution", "no address associated")):
            return _Retryable("host name not found")
        if "reset" in text or "aborted" in text or "remotedisconnected" in text:
            return _Retryable("connection closed by the server")
        return _Retryable("connection failed")
    if isinstance(exc, requests.exceptions.InvalidHeader):
        return HttpError("invalid request header (is the token well-formed?)")
    return HttpError(f"request failed ({type(exc).__name__})")
