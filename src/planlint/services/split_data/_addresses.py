"""Which network addresses an `http(s)://` split may be read from: public ones.

A plan comes with the pull request, and the CI machine can reach what the
internet cannot: the cloud's instance metadata (169.254.169.254), services
on the private network, its own loopback. A split URL may lead to a public
address only (the tests' loopback servers with the test switch).

The rule (`refused_address`) is applied twice, in the same words:

* before anything is opened, to the addresses the URL's host resolves to
  (`non_public_host`): an early, clear note, and the only check a literal
  address needs (the HTTP client never resolves one, and it cannot change);
* by the HTTP client itself, to the addresses it is about to connect to,
  each time it resolves the name (`_resolver.PublicResolver`). A DNS server
  can answer a public address to the first look-up and 127.0.0.1 to the
  next (DNS rebinding); the second answer is the one connected to, so it is
  the one that must be refused.

Standard library only: the HTTP client (aiohttp, an optional extra) is
imported by `_resolver` alone.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from typing import Optional
from urllib.parse import urlsplit

#: Plain http:// is read only when this variable is set, and only from a
#: loopback address: the tests' own servers. Everything else must be https://.
PLAIN_HTTP_VARIABLE = "PLANLINT_TEST_PLAIN_HTTP"

#: What follows the reason of a refused address in a note.
PUBLIC_ONLY = "planlint reads https:// split paths only from public addresses"

#: IPv6 prefixes that carry an IPv4 address in their last 32 bits and reach it:
#: NAT64's well-known prefix (RFC 6052) and IPv4-compatible addresses.
_EMBEDDING = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("::/96"))


class AddressRefused(OSError):
    """The HTTP client was about to connect to a non-public address. Its text is safe to show.

    An OSError, as a resolver's failures are: aiohttp reports it as a
    connection error caused by this exception (see `_sources._refusal`).
    """


def loopback_allowed(host: str) -> bool:
    """The tests' switch: loopback addresses are open when PLANLINT_TEST_PLAIN_HTTP=1 and the
    URL writes its host as `localhost` or as a loopback address, never for another name."""
    if os.environ.get(PLAIN_HTTP_VARIABLE) != "1":
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def plain_http_allowed(value: str) -> bool:
    """Whether the http:// URL `value` may be read: the test switch, to a loopback host."""
    return loopback_allowed(urlsplit(value).hostname or "")


def _carried(ip) -> list:
    """`ip` and the IPv4 address an IPv6 address carries and reaches (mapped, 6to4, NAT64)."""
    out = [ip]
    if ip.version == 6:
        if ip.ipv4_mapped is not None:
            out.append(ip.ipv4_mapped)
        if ip.sixtofour is not None:
            out.append(ip.sixtofour)
        if any(ip in network for network in _EMBEDDING):
            out.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return out


def refused_address(host: str, address: str) -> Optional[str]:
    """Why `address` (one that `host` resolves to, or `host` itself) may not be connected to, or None."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if ip.is_loopback and loopback_allowed(host):
        return None
    for judged in _carried(ip):
        if not judged.is_global or judged.is_multicast:
            return f"the host {host} is at a non-public address ({ip}): {PUBLIC_ONLY}"
    return None


def non_public_host(value: str) -> Optional[str]:
    """Why the host of the http(s) URL `value` may not be read, or None: the check before any request."""
    host = urlsplit(value).hostname or ""
    if not host:
        return "the URL names no host"
    try:
        addresses = {str(info[4][0]) for info in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)}
    except (OSError, UnicodeError):
        return f"the host {host} does not resolve"
    for address in sorted(addresses):
        refused = refused_address(host, address)
        if refused:
            return refused
    return None
