"""Cache entries this machine wrote, and no others: an HMAC under a key kept outside the repository.

The cache directory lives in the checkout (`.planlint_cache/` by default), and
a pull request can commit files there: a split-data entry saying "no leak", a
registry answer saying "published", a result segment saying "no findings".
So every cache (results, split-data checks, registry answers) seals what it
writes and trusts only what it can unseal:

* the key is 32 random bytes in the user's cache directory
  (`$XDG_CACHE_HOME/planlint/key`, else `~/.cache/planlint/key`; on Windows
  `%LOCALAPPDATA%\\planlint\\key`), created once with mode 0600, never inside
  the project and never read through a symbolic link;
* an entry is a JSON object whose `"mac"` is HMAC-SHA256 over the cache's
  name, the entry's identity (the lookup key it is stored under) and the
  canonical JSON of the rest, so an entry cannot be forged, edited, or
  replayed under another identity or into another cache;
* with no usable key (no home directory, read-only, a key file that is a
  link or readable by others) nothing is read from or written to the caches:
  the run is slower, never wrong.

`PLANLINT_CACHE_KEY` names another key file (tests, unusual set-ups); like
every environment variable it is the caller's choice, not the repository's.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

KEY_BYTES = 32
_KEYS: dict[str, bytes | None] = {}  # key file -> key (None: unusable), once per process


def key_file() -> Path | None:
    """Where the key is kept: $PLANLINT_CACHE_KEY, else the user's cache directory."""
    explicit = os.environ.get("PLANLINT_CACHE_KEY")
    if explicit:
        return Path(explicit)
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "planlint" / "key"
    base = os.environ.get("XDG_CACHE_HOME")
    if not base or not os.path.isabs(base):
        home = os.path.expanduser("~")
        if home == "~" or not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "planlint" / "key"


def machine_key(project_root: str | os.PathLike | None = None) -> bytes | None:
    """This machine's key (created on first use), or None when there is no safe one.

    A key file inside `project_root` is refused: files there may have come
    with the checkout.
    """
    path = key_file()
    if path is None:
        return None
    if project_root is not None and _inside(path, project_root):
        return None
    name = str(path)
    if name not in _KEYS:
        _KEYS[name] = _read_or_create(path)
    return _KEYS[name]


def _inside(path: Path, root: str | os.PathLike) -> bool:
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    try:
        return os.path.commonpath([real, real_root]) == real_root
    except ValueError:
        return False


def _read_or_create(path: Path, create: bool = True) -> bytes | None:
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, os.O_RDONLY | nofollow)
    except FileNotFoundError:
        return _create(path) if create else None
    except OSError:
        return None  # a link (O_NOFOLLOW), unreadable: no key
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode) or status.st_size != KEY_BYTES:
            return None
        if os.name == "posix" and (status.st_mode & 0o077 or status.st_uid != os.getuid()):
            return None  # others could read (or replace) it
        data = os.read(fd, KEY_BYTES + 1)
        return data if len(data) == KEY_BYTES else None
    finally:
        os.close(fd)


def _create(path: Path) -> bytes | None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        return _read_or_create(path, create=False)  # another run created it meanwhile: use theirs
    except OSError:
        return None
    key = os.urandom(KEY_BYTES)
    try:
        written = os.write(fd, key)
    except OSError:
        written = 0
    finally:
        os.close(fd)
    return key if written == KEY_BYTES else None


# --------------------------------------------------------------------------- sealing


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")


def _mac(key: bytes, cache: str, identity: str, body: dict) -> str:
    message = cache.encode() + b"\0" + identity.encode("utf-8", "surrogatepass") + b"\0" + _canonical(body)
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def seal(key: bytes, cache: str, identity: str, body: dict) -> str:
    """`body` as the JSON text of a sealed entry (body plus its "mac")."""
    return json.dumps({**body, "mac": _mac(key, cache, identity, body)}, ensure_ascii=False, separators=(",", ":"))


def unseal(key: bytes | None, cache: str, identity: str, text: str | bytes) -> dict | None:
    """The entry's body when its MAC is this machine's for (`cache`, `identity`); else None."""
    if key is None:
        return None
    try:
        entry = json.loads(text)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(entry, dict):
        return None
    mac = entry.pop("mac", None)
    if not isinstance(mac, str):
        return None
    try:
        expected = _mac(key, cache, identity, entry)
    except (TypeError, ValueError):
        return None
    return entry if hmac.compare_digest(mac, expected) else None


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def read_entry(path, limit: int = -1) -> bytes | None:
    """The bytes of the cache file `path` (at most `limit`), or None when it is absent, unreadable,
    a symbolic link or not a regular file.

    Entry names are predictable (a hash of what the entry is about), and the
    cache directory is in the checkout: a pull request can commit a link
    where an entry will be looked for, to a named pipe or a terminal (a read
    that never ends) or to /dev/zero. Such a file is not read: no link is
    followed (O_NOFOLLOW), the open does not wait for a pipe's writer
    (O_NONBLOCK), and only a regular file is read."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, left = [], limit
        while left != 0:
            chunk = os.read(fd, 1 << 20 if left < 0 else min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            if left > 0:
                left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_sealed(path, key: bytes | None, cache: str, identity: str, limit: int = -1) -> dict | None:
    """The body of the entry in file `path` (at most `limit` bytes read) when this machine sealed it
    for (`cache`, `identity`); None when it is absent, unreadable, not a regular file (read_entry),
    too long to be whole or not sealed here."""
    if key is None:
        return None
    text = read_entry(path, limit)
    return None if text is None else unseal(key, cache, identity, text)


#: An entry sealed as bytes larger than this is verified while streamed, before its body is kept.
STREAM_VERIFY_FROM = 1 << 20


def read_sealed_bytes(path, key: bytes | None, cache: str, identity: str, limit: int = -1) -> bytes | None:
    """read_sealed for an entry sealed as bytes (seal_bytes): its body, or None as read_sealed.

    A large entry is first read through its MAC without being kept, and kept
    only when it verifies: a file the size of the limit committed where an
    entry will be looked for (names are predictable) costs a pass over it,
    not its size in memory."""
    if key is None or not _verified_streaming(path, key, cache, identity, limit):
        return None
    data = read_entry(path, limit)
    return None if data is None else unseal_bytes(key, cache, identity, data)


def _verified_streaming(path, key: bytes, cache: str, identity: str, limit: int) -> bool:
    """Whether the file `path` may be an entry sealed as bytes by this machine for (`cache`,
    `identity`) of at most `limit` bytes: a regular file (no link followed: read_entry) whose MAC,
    when it is over STREAM_VERIFY_FROM bytes, is checked by reading it in chunks, not kept (a smaller
    one is checked when read)."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or (limit >= 0 and info.st_size > limit):
            return False
        if info.st_size <= STREAM_VERIFY_FROM:
            return True
        mac = _read_line(fd, 128)
        if mac is None:
            return False
        check = _mac_state(key, cache, identity)
        while chunk := os.read(fd, 1 << 20):
            check.update(chunk)
        return hmac.compare_digest(mac, check.hexdigest().encode())
    except OSError:
        return False
    finally:
        os.close(fd)


def _read_line(fd: int, most: int) -> bytes | None:
    """The first line of `fd` (without its newline), read byte by byte up to `most` bytes; None without one."""
    line = b""
    while len(line) <= most:
        byte = os.read(fd, 1)
        if not byte:
            return None
        if byte == b"\n":
            return line
        line += byte
    return None


def seal_bytes(key: bytes, cache: str, identity: str, body: bytes) -> bytes:
    """`body` sealed as raw bytes: a line with its MAC, then the body (for large entries: no re-serialising to check it)."""
    return _mac_bytes(key, cache, identity, body).encode() + b"\n" + body


def seal_chunks(key: bytes, cache: str, identity: str, chunks: list[bytes]) -> list[bytes]:
    """seal_bytes of the chunks' concatenation, as chunks (the MAC line first): a large entry is
    sealed and written without ever being copied into one object."""
    return [_mac_bytes(key, cache, identity, *chunks).encode() + b"\n", *chunks]


def unseal_bytes(key: bytes | None, cache: str, identity: str, data: bytes) -> bytes | None:
    """The body of `data` when its MAC is this machine's for (`cache`, `identity`); else None."""
    if key is None:
        return None
    mac, sep, body = data.partition(b"\n")
    if not sep:
        return None
    expected = _mac_bytes(key, cache, identity, body).encode()
    return body if hmac.compare_digest(mac, expected) else None


def _mac_bytes(key: bytes, cache: str, identity: str, *body: bytes) -> str:
    """The MAC of the body (given as one or more chunks), fed to HMAC piece by piece: no copy of it."""
    mac = _mac_state(key, cache, identity)
    for chunk in body:
        mac.update(chunk)
    return mac.hexdigest()


def _mac_state(key: bytes, cache: str, identity: str):
    return hmac.new(key, b"bytes\0" + cache.encode() + b"\0" + identity.encode("utf-8", "surrogatepass") + b"\0", hashlib.sha256)
