"""The release registry (spec section 4): is this release or version published?

The contract is planlint's own:

    GET {url}/v1/datasets/{name}/releases/{release}   200 published, 404 not
    GET {url}/v1/graders/{name}/versions/{version}    200 published, 404 not

plus one optional extension used only by `--fix` to find the newest published
release (a registry that lacks it answers 404 and the catalog is used):

    GET {url}/v1/datasets/{name}/releases   -> {"releases": [...]}  oldest first
    GET {url}/v1/graders/{name}/versions    -> {"versions": [...]}  oldest first

Where the token comes from and where it may go are set by the environment
(the workflow, the action's inputs), never by a file of the checkout: a pull
request writes `.planlint.yaml` and `pyproject.toml`, and once chose both the
variable sent as the bearer token (`AWS_SECRET_ACCESS_KEY`) and the server it
went to. The token is `$PLANLINT_REGISTRY_TOKEN` (or the variable that
`$PLANLINT_REGISTRY_TOKEN_ENV` names), sent only to `$PLANLINT_REGISTRY_URL`,
which also replaces the config's `url`. Without `$PLANLINT_REGISTRY_URL` no
token is sent at all. A config's `token_env` is accepted only when it names
that same variable (core/registry_settings.py). The token is never printed.
Lookups are de-duplicated, run concurrently, and their answers are cached on
disk.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Callable, Iterable
from urllib.parse import quote

from planlint.core.atomic import write_atomically
from planlint.core.cache_seal import machine_key, read_sealed, seal
from planlint.core.registry_settings import (
    TOKEN_VARIABLE,
    URL_VARIABLE,
    RegistryError,
    RegistrySettings,
    resolve,
    trusted,
)
from planlint.services.http import Client, HTTPError, RetryPolicy, Secret

NOT_FOUND_TTL = 3600.0  # "not published yet" changes when a release is cut
_TOKEN = re.compile(r"^[\x21-\x7e]+$")  # visible ASCII: what a header value can carry


__all__ = ["Cache", "Registry", "RegistryError"]


def segment(value: str) -> str | None:
    """`value` as one URL path segment, or None when it cannot be one safely."""
    if not value or value in (".", "..") or len(value) > 256 or not value.isprintable():
        return None
    return quote(value, safe="")


# --------------------------------------------------------------------------- cache


class Cache:
    """Registry answers on disk, one small JSON file per URL, written atomically.

    Entries are sealed with this machine's key (`planlint.core.cache_seal`): an
    answer committed into the checkout's cache directory is not believed.
    With no usable key the cache reads and writes nothing.
    """

    def __init__(self, directory: Path, ttl: float, project_root: Path | None = None) -> None:
        self.directory = Path(directory)
        self.ttl = ttl
        self.broken: str | None = None  # why writing failed, once
        self.key = machine_key(project_root)

    def _file(self, url: str) -> Path:
        return self.directory / "registry" / (hashlib.sha256(url.encode("utf-8")).hexdigest()[:40] + ".json")

    def get(self, url: str):
        """(status, data) when a fresh answer that this machine stored is there, else None."""
        entry = read_sealed(self._file(url), self.key, "registry", url, 4 << 20)
        if not isinstance(entry, dict) or entry.get("url") != url or not isinstance(entry.get("stored"), (int, float)):
            return None
        status = entry.get("status")
        ttl = self.ttl if status == 200 else min(self.ttl, NOT_FOUND_TTL)
        if status not in (200, 404) or not 0 <= time.time() - entry["stored"] <= ttl:
            return None
        return status, entry.get("data")

    def put(self, url: str, status: int, data=None) -> None:
        if self.broken or self.ttl <= 0 or self.key is None:
            return
        target = self._file(url)
        try:
            self._prepare(target.parent)
            write_atomically(target, seal(self.key, "registry", url, {"url": url, "status": status, "data": data, "stored": time.time()}))
        except OSError as exc:
            self.broken = f"cannot write the cache in {self.directory} ({exc.strerror or type(exc).__name__}); answers were not saved"

    def _prepare(self, folder: Path) -> None:
        if folder.is_dir():
            return
        folder.mkdir(parents=True, exist_ok=True)
        # Like .pytest_cache and .ruff_cache: keep it out of git and backups.
        for name, text in ((".gitignore", "# created by planlint\n*\n"), ("CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n# planlint registry cache\n")):
            marker = self.directory / name
            if not marker.exists():
                marker.write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------- lookups


Key = tuple  # ("datasets" | "graders", name, value)


class Registry:
    """Answers "is it published?" from the registry, with cache, de-duplication and concurrency.

    The first failure (unreachable, 5xx after retries, 401, an odd answer)
    marks the registry unavailable for the rest of the run: later lookups
    answer None at once, so an outage costs one timeout, not one per plan.
    """

    #: How the client waits between retries. The clock is injected here so a
    #: test proves the waits (Retry-After, rate-limit resets) without taking them.
    sleep: Callable[[float], None] = staticmethod(time.sleep)

    def __init__(self, settings: RegistrySettings, cache: Cache | None = None, environ=None) -> None:
        environ = os.environ if environ is None else environ
        try:
            trust = trusted(environ)
        except ValueError as exc:
            raise RegistryError(str(exc)) from None
        settings = resolve(settings, trust)
        self.settings = settings
        self.cache = cache
        self.failure: str | None = None
        self._answers: dict[str, object] = {}
        self._lock = threading.Lock()
        self._client = None
        self._token = None  # a planlint.services.http.Secret
        self._token_missing = False
        # Set when a token is in the environment but no trusted URL is: it is not sent anywhere.
        self.token_withheld: str | None = None
        if settings.token_env:
            token = (environ.get(settings.token_env) or "").strip()
            if not token:
                self._token_missing = True
            elif trust.url is None:
                self.token_withheld = (
                    f"the token in ${settings.token_env} was not sent to the registry at {settings.host}: a token goes "
                    f"only to the URL the environment names in ${URL_VARIABLE}, never to one a config file names"
                )
            elif not _TOKEN.match(token):
                raise RegistryError(f"the token in ${settings.token_env} contains characters an HTTP header cannot carry (spaces, line breaks or non-ASCII)")
            elif token in settings.url:
                raise RegistryError(f"the registry url contains the token from ${settings.token_env}; the token goes only in the Authorization header")
            else:
                self._token = Secret(token)

    def __repr__(self) -> str:  # never show the token
        return f"Registry({self.settings.host!r})"

    # URLs --------------------------------------------------------------

    def status_url(self, key: Key) -> str | None:
        kind, name, value = key
        a, b = segment(name), segment(value)
        if a is None or b is None:
            return None
        return f"{self.settings.url}/v1/{kind}/{a}/{'releases' if kind == 'datasets' else 'versions'}/{b}"

    def list_url(self, kind: str, name: str) -> str | None:
        a = segment(name)
        if a is None:
            return None
        return f"{self.settings.url}/v1/{kind}/{a}/{'releases' if kind == 'datasets' else 'versions'}"

    # answers -----------------------------------------------------------

    def published(self, key: Key) -> bool | None:
        """True/False from the registry; None when it could not answer."""
        url = self.status_url(key)
        if url is None:
            return None
        answer = self._lookup(url, listing=False)
        return None if answer is None else answer == 200

    def newest(self, kind: str, name: str) -> tuple[str, ...] | None:
        """The published values from the listing extension, oldest first; None if unavailable."""
        url = self.list_url(kind, name)
        if url is None:
            return None
        answer = self._lookup(url, listing=True)
        return answer if isinstance(answer, tuple) else None

    def prefetch(self, keys: Iterable[Key]) -> None:
        """Look up every distinct key, concurrently; answers are kept for `published()`."""
        urls = sorted({u for u in (self.status_url(k) for k in keys) if u is not None})
        todo = [u for u in urls if u not in self._answers]
        if not todo:
            return
        if len(todo) == 1 or self.settings.workers == 1:
            for url in todo:
                self._lookup(url, listing=False)
            return
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(self.settings.workers, len(todo)), thread_name_prefix="planlint-registry") as pool:
            list(pool.map(lambda u: self._lookup(u, listing=False), todo))

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    # the work ----------------------------------------------------------

    def _lookup(self, url: str, *, listing: bool):
        with self._lock:
            if url in self._answers:
                return self._answers[url]
        answer = self._fetch(url, listing)
        with self._lock:
            self._answers.setdefault(url, answer)
            return self._answers[url]

    def _fetch(self, url: str, listing: bool):
        if self.cache is not None:
            hit = self.cache.get(url)
            if hit is not None:
                status, data = hit
                if not listing:
                    return status
                return _listing(data, url) if status == 200 else "absent"
        if self.failure is not None:
            return None
        try:
            answer = self._get_client().get(url)
        except HTTPError as exc:
            self._fail(f"{exc}")
            return None
        if answer.status == 404:
            if self.cache is not None:
                self.cache.put(url, 404)
            return "absent" if listing else 404
        if answer.status == 200:
            if not listing:
                if self.cache is not None:
                    self.cache.put(url, 200)
                return 200
            values = _parse_listing(answer.body, "releases" if "/v1/datasets/" in url else "versions")
            if values is None:
                return "absent"  # not the extension we know: fall back to the catalog
            if self.cache is not None:
                self.cache.put(url, 200, list(values))
            return values
        if answer.status in (401, 403):
            if self.token_withheld:
                self._fail(f"HTTP {answer.status}: no token was sent (${URL_VARIABLE} is not set)")
            elif self._token_missing:
                self._fail(f"HTTP {answer.status}: ${self.settings.token_env} is not set, so no token was sent")
            elif self._token is None:
                self._fail(f"HTTP {answer.status}: the registry wants a token; set ${TOKEN_VARIABLE} and ${URL_VARIABLE}")
            else:
                self._fail(f"HTTP {answer.status}: the registry refused the token in ${self.settings.token_env}")
            return None
        if listing:
            return "absent"  # the listing is an optional extension: any other answer means "not offered"
        self._fail(f"unexpected HTTP {answer.status} (the registry answers 200 or 404)")
        return None

    def _get_client(self):
        with self._lock:
            if self._client is None:
                s = self.settings
                # The registry is planlint's own contract: a long Retry-After is cut
                # to what is left of max_retry_after (total waiting per lookup), and
                # a redirect elsewhere is followed without the token. Retries are silent.
                policy = RetryPolicy(attempts=s.retries + 1, backoff=s.backoff, max_backoff=max(s.backoff, 30.0), max_wait=s.max_retry_after, clip_waits=True)
                self._client = Client(
                    timeout=(s.timeout, s.timeout), policy=policy, token=self._token, token_origin=s.url,
                    foreign_redirects="follow", max_body=1024 * 1024, pool_size=s.workers, log=None,
                    name_request=False,  # concurrent lookups: the first to fail is a race, the host says enough
                    sleep=self.sleep,
                )
            return self._client

    def _fail(self, reason: str) -> None:
        with self._lock:
            if self.failure is None:
                self.failure = reason


def _listing(data, url: str):
    if isinstance(data, list) and all(isinstance(v, str) for v in data):
        return tuple(data)
    return "absent"


def _parse_listing(body: bytes, key: str) -> tuple[str, ...] | None:
    try:
        doc = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    values = doc.get(key) if isinstance(doc, dict) else None
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        return None
    return tuple(values)
