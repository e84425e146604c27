"""A plan file's bytes as text, safely: never a link out of the repository, a directory, a pipe
or more than the size limit; UTF-8, or UTF-16/32 with a byte order mark."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from planlint.core.load_limits import LoadProblem, unreadable
from planlint.core.paths import leads_outside


#: O_NONBLOCK: opening a named pipe does not wait for a writer (it is then refused, see read_text).
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def read_text(path: Path, max_size: int) -> tuple[str | None, LoadProblem | None]:
    """The file's text, or the PL006 that says why it cannot be read.

    Unbuffered os-level reads of what fstat reports: every run reads every plan
    (the cache is keyed on the text), so a few microseconds a file count.
    """
    if leads_outside(path):  # a link a pull request committed: never read, so never quoted
        return None, unreadable("is a symbolic link that leads out of the repository: not read (planlint reads files only inside the checkout)")
    try:
        fd = os.open(path, _READ_FLAGS)
    except IsADirectoryError:
        return None, unreadable("is a directory, not a file")
    except OSError as exc:
        return None, unreadable(f"cannot be read: {exc.strerror or exc.__class__.__name__}")
    try:
        status = os.fstat(fd)
        if stat.S_ISDIR(status.st_mode):
            return None, unreadable("is a directory, not a file")
        if stat.S_ISFIFO(status.st_mode) or stat.S_ISSOCK(status.st_mode):
            return None, unreadable("is a named pipe or a socket, not a file: not read")
        size = status.st_size
        if size > max_size:
            return None, unreadable(f"file is {size:,} bytes, over the {max_size:,}-byte limit (max_file_size)")
        raw = os.read(fd, size + 1)
        if len(raw) != size:  # it grew or shrank while we read it, or a special file that reports 0
            parts, total = [raw], len(raw)
            while total <= max_size:
                chunk = os.read(fd, max_size + 1 - total)
                if not chunk:
                    break
                parts.append(chunk)
                total += len(chunk)
            raw = b"".join(parts)
    except IsADirectoryError:
        return None, unreadable("is a directory, not a file")
    except OSError as exc:
        return None, unreadable(f"cannot be read: {exc.strerror or exc.__class__.__name__}")
    finally:
        os.close(fd)
    if len(raw) > max_size:  # grew while we read it, or a special file
        return None, unreadable(f"file is over the {max_size:,}-byte limit (max_file_size)")
    return decode(raw)


# Byte order marks, longest first (UTF-32-LE's starts with UTF-16-LE's). A
# checkout can be UTF-16 without anyone seeing it: `.gitattributes`
# `working-tree-encoding=UTF-16` re-encodes the file on checkout while GitHub
# shows the UTF-8 blob. Such a file is read, not skipped as binary.
_BOMS = (
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\xfe\xff", "utf-16-be"),
    (b"\xff\xfe", "utf-16-le"),
)


def bom_encoding(raw: bytes) -> tuple[str, bytes] | None:
    """(codec, BOM) of a UTF-16/32 file that starts with a byte order mark, else None."""
    if raw[:1] not in (b"\x00", b"\xfe", b"\xff"):
        return None
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            return codec, bom
    return None


def decode(raw: bytes) -> tuple[str | None, LoadProblem | None]:
    wide = bom_encoding(raw)
    if wide is not None:
        codec, bom = wide
        try:
            text = raw[len(bom):].decode(codec)
        except UnicodeDecodeError as exc:
            return None, unreadable(f"is not valid {codec.upper()} (it starts with that byte order mark; bad bytes at offset {exc.start + len(bom)}); save it as UTF-8")
        if "\x00" in text:
            return None, unreadable(f"holds a NUL character ({codec.upper()}); plans are text")
        return text, None
    nul = raw.find(b"\x00")
    if nul != -1:
        return None, unreadable(f"looks binary (NUL byte at offset {nul}); plans are UTF-8 text (UTF-16 and UTF-32 are read only with a byte order mark)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        return None, unreadable(f"is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}, line {line}); save it as UTF-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, None
