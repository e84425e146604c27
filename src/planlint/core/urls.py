"""Split paths that are URIs (`s3://`, `gs://`, `hf://`, `https://`): which scheme,
and how to show one without the secrets a URL can carry.

A URL may hold a credential in its user part (`https://user:token@host/x`)
or its query (a presigned `?X-Amz-Signature=...`, `?sig=...`, `?token=...`).
Nothing planlint writes (a message, a note, an excerpt) shows either:
`show_uri` masks the user part, every query value except the ones that
only pin an object (`versionId`) and a fragment other than a GCS generation
(`#access_token=...`), and `mask_uris` does the same to every URL
inside a longer text (an error a client library raised).
"""

from __future__ import annotations

import re

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")

#: Query parameters that pin an object and carry no secret: shown as written.
_PUBLIC_PARAMETERS = {"versionid", "generation", "revision"}

_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>`]+")

MASK = "***"


def scheme(value: str) -> str | None:
    """The lower-cased scheme of a URI (`s3`), or None for a local path."""
    match = _SCHEME.match(value)
    return match.group(1).lower() if match else None


def is_uri(value: str) -> bool:
    return scheme(value) is not None


def show_uri(value: str) -> str:
    """`value` with its user part and secret-bearing query values masked."""
    match = _SCHEME.match(value)
    if not match:
        return value
    head, rest = value[: match.end()], value[match.end():]
    authority, slash, path = rest.partition("/")
    if "@" in authority:
        authority = MASK + "@" + authority.rpartition("@")[2]
    path, hash_, fragment = path.partition("#")
    path, question, query = path.partition("?")
    if question:
        parts = []
        for item in query.split("&"):
            name, equals, _value = item.partition("=")
            parts.append(item if not equals or name.lower() in _PUBLIC_PARAMETERS else f"{name}={MASK}")
        query = "&".join(parts)
    if fragment and not (fragment.isdigit() or fragment == "<generation>"):
        # a GCS generation (or PL107's placeholder for one) is shown; anything else (#access_token=...) is not
        fragment = MASK
    return head + authority + slash + path + question + query + hash_ + fragment


def mask_uris(text: str) -> str:
    """Every URL inside `text` shown with `show_uri`."""
    return _URL_IN_TEXT.sub(lambda match: show_uri(match.group(0)), text)
