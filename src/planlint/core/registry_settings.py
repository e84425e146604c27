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


@dataclass(frozen=True)
class RegistrySettings:
    url: str
    token_env: str | None = None
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


def parse_settings(raw: object) -> RegistrySettings:
    """Validate the config's `registry:` mapping; ValueError says what is wrong."""
    if not isinstance(raw, dict):
        raise ValueError("expected a mapping with at least url")
    unknown = sorted(set(raw) - SETTING_KEYS)
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r} (known: {', '.join(sorted(SETTING_KEYS))})")
    url = raw.get("url")
    if not isinstance(url, str) or not url:
        raise ValueError("url: expected the registry's base URL, e.g. https://registry.example.internal")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("url: expected an http:// or https:// URL with a host")
    if parts.username or parts.password:
        raise ValueError("url: must not contain credentials; put the token in the variable token_env names")
    if parts.query or parts.fragment:
        raise ValueError("url: must not have a query or fragment")
    values: dict = {"url": url.rstrip("/")}
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
