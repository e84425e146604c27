"""Write a file so that readers see the old content or the new, never a torn one."""

from __future__ import annotations

import os
from pathlib import Path


def write_atomically(target: str | Path, data: bytes | str | list[bytes], *, mode: int | None = None, prefix: str = ".tmp-", suffix: str = ".json") -> None:
    """Write `data` (or its chunks, one after the other) to a temporary file beside `target`, then move it into place.

    Concurrent runs may write the same target: the last `os.replace` wins and
    every reader sees a complete file. On any failure the temporary file is
    removed and the error propagates (OSError for a read-only or full disk).
    """
    target = Path(target)
    fd, temporary = _create_temporary(str(target.parent), prefix, suffix)
    try:
        text = isinstance(data, str)
        with os.fdopen(fd, "w" if text else "wb", **({"encoding": "utf-8"} if text else {})) as fh:
            if isinstance(data, list):
                fh.writelines(data)
            else:
                fh.write(data)
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


_CREATE_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


def _create_temporary(directory: str, prefix: str, suffix: str) -> tuple[int, str]:
    """A new file of mode 0600 under a random name, as tempfile.mkstemp makes one.

    Without importing tempfile, which brings random and shutil (and with it bz2,
    lzma, zlib): the cache writes a file on most runs, a pre-commit hook's included.
    """
    for _ in range(100):
        name = os.path.join(directory, f"{prefix}{os.urandom(8).hex()}{suffix}")
        try:
            return os.open(name, _CREATE_FLAGS, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {directory}")
