"""The config's `registry:` mapping, validated (spec section 4).

Settings live in core so that the config can validate them without importing
the HTTP client; services.registry builds the client from them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

DEFAULT_TTL = 24 * 3600.0
SETTING_KEYS = {"url", "token_env", "timeout", "on_error", "cache_ttl", "retries", "backoff", "max_retry_after", "online", "workers"}
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Where the token comes from and where it may go are set by the environment (the
# workflow, the action's `registry-url` / `registry-token` inputs), never by a file
# of the checkout: a pull request writes `.planlint.yaml` and `pyproject.toml`.
URL_VARIABLE = "PLANLINT_REGISTRY_URL"
TOKEN_VARIABLE = "PLANLINT_REGISTRY_TOKEN"
TOKEN_ENV_VARIABLE = "PLANLINT_REGISTRY_TOKEN_ENV"


class RegistryError(Exception):
    """A registry that cannot be used at all (bad settings, unusable token)."""


@dataclass(frozen=True)
class RegistrySettings:
    url: str
    token_env: str | None = None  # as the config wrote it, until resolve() sets the environment's
    timeout: float = 10.0
    on_error: str = "warn"  # warn | fail
    cache_ttl: float = DEFAULT_TTL
    retries: int = 2
    backoff: float = 0.5
    max_retry_after: float = 30.0
    online: bool = False  # check on every run, as if --online were given
    workers: int = 8

    @property
    def host(self) -> str:
        """The registry as messages name it: scheme and host, no path."""
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"


def _check_url(url: object, where: str) -> str:
    if not isinstance(url, str) or not url:
        raise ValueError(f"{where}: expected the registry's base URL, e.g. https://registry.example.internal")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{where}: expected an http:// or https:// URL with a host")
    if parts.username or parts.password:
        raise ValueError(f"{where}: must not contain credentials; put the token in ${TOKEN_VARIABLE}")
    if parts.query or parts.fragment:
        raise ValueError(f"{where}: must not have a query or fragment")
    return url.rstrip("/")


def parse_settings(raw: object, *, url_optional: bool = False) -> RegistrySettings:
    """Validate the config's `registry:` mapping; ValueError says what is wrong.

    `url_optional`: the environment may name the registry ($PLANLINT_REGISTRY_URL).
    """
    if not isinstance(raw, dict):
        raise ValueError("expected a mapping with at least url")
    unknown = sorted(set(raw) - SETTING_KEYS)
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r} (known: {', '.join(sorted(SETTING_KEYS))})")
    if url_optional and "url" not in raw:
        values: dict = {"url": ""}
    else:
        values = {"url": _check_url(raw.get("url"), "url")}
    token_env = raw.get("token_env")
    if token_env is not None:
        if not isinstance(token_env, str) or not _ENV_NAME.match(token_env):
            raise ValueError("token_env: expected the name of an environment variable, e.g. PLANLINT_REGISTRY_TOKEN")
        values["token_env"] = token_env
    on_error = raw.get("on_error", "warn")
    if on_error not in ("warn", "fail"):
        raise ValueError("on_error: expected warn or fail")
    values["on_error"] = on_error
    for key, lowest in (("timeout", 0.0), ("cache_ttl", -1.0), ("backoff", -1.0), ("max_retry_after", -1.0)):
        if key in raw:
            value = raw[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > lowest or value != value or value == float("inf"):
                raise ValueError(f"{key}: expected a {'positive' if lowest == 0 else 'non-negative'} number of seconds")
            values[key] = float(value)
    for key, lowest in (("retries", 0), ("workers", 1)):
        if key in raw:
            value = raw[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < lowest or value > 64:
                raise ValueError(f"{key}: expected a whole number from {lowest} to 64")
            values[key] = int(value)
    if "online" in raw:
        if not isinstance(raw["online"], bool):
            raise ValueError("online: expected true or false")
        values["online"] = raw["online"]
    return RegistrySettings(**values)


@dataclass(frozen=True)
class Trusted:
    """What the environment says about the registry: its URL (the only place the token goes) and the token's variable."""

    url: str | None
    token_env: str


def trusted(environ) -> Trusted:
    """The registry URL and token variable from the environment; ValueError when they are malformed."""
    url = (environ.get(URL_VARIABLE) or "").strip()
    token_env = (environ.get(TOKEN_ENV_VARIABLE) or "").strip() or TOKEN_VARIABLE
    if not _ENV_NAME.match(token_env):
        raise ValueError(f"${TOKEN_ENV_VARIABLE}: expected the name of an environment variable, e.g. {TOKEN_VARIABLE}")
    return Trusted(_check_url(url, f"${URL_VARIABLE}") if url else None, token_env)


def resolve(settings: RegistrySettings, trust: Trusted) -> RegistrySettings:
    """The settings to use: the environment's URL over the config's; the token's variable from the environment.

    A config (a file of the checkout, written by the pull request) may not pick
    the variable sent as the token: a `token_env` naming another variable is
    refused (RegistryError) rather than quietly ignored, so a config written
    for the old behaviour is noticed.
    """
    from dataclasses import replace

    if settings.token_env is not None and settings.token_env != trust.token_env:
        raise RegistryError(
            f"registry.token_env in the config names ${settings.token_env}, but the config does not choose the token's "
            f"variable (a pull request could name any secret): the token is read from ${trust.token_env}; "
            f"set {TOKEN_ENV_VARIABLE} in the environment (the workflow) to read it from another variable"
        )
    url = trust.url or settings.url
    if not url:
        raise RegistryError(f"no registry URL: set url in the config's registry section or ${URL_VARIABLE}")
    return replace(settings, url=url, token_env=trust.token_env)
