"""The HTTP client of `http(s)://` split objects: it connects to public addresses only.

fsspec's HTTPFileSystem builds its aiohttp session with `public_client`, whose
connector resolves names with `PublicResolver`: the system resolver
(`getaddrinfo`, as the check before any request uses), every answer judged
by `_addresses.refused_address` before aiohttp may connect to it. A name
whose answer holds a non-public address is refused whole (as the check
before any request refuses it), with `AddressRefused`, whose text becomes the
split's note. aiohttp asks the resolver again whenever its DNS cache entry
(10 s) has expired, so a name that changes its answer later is judged again.

Why the system resolver, never aiodns (aiohttp's DefaultResolver when aiodns
is installed): the one look-up behaviour for both checks (/etc/hosts,
nsswitch), whatever else is installed.

aiohttp resolves only names: a literal address in the URL is connected to as
written, and `_addresses.non_public_host` has judged it before (it cannot
change). Proxies from the environment (HTTP(S)_PROXY, `trust_env`) are not
used: a proxy resolves the name itself, where no check can follow.

Imported only for an http(s) split: aiohttp is an optional extra.
"""

from __future__ import annotations

import socket

import aiohttp
from aiohttp.abc import AbstractResolver
from aiohttp.resolver import ThreadedResolver

from planlint.services.split_data._addresses import AddressRefused, refused_address


class PublicResolver(AbstractResolver):
    """aiohttp's ThreadedResolver, refusing any answer that holds a non-public address."""

    def __init__(self) -> None:
        self._resolver = ThreadedResolver()

    async def resolve(self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET) -> list:
        answers = await self._resolver.resolve(host, port, family)
        for answer in answers:
            refused = refused_address(host, answer["host"])
            if refused:
                raise AddressRefused(refused)
        return answers

    async def close(self) -> None:
        await self._resolver.close()


async def public_client(**options) -> aiohttp.ClientSession:
    """fsspec's `get_client`: an aiohttp session that connects through PublicResolver, without proxies."""
    options["trust_env"] = False
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(resolver=PublicResolver()), **options)
