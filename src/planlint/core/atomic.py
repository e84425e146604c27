"""Write a file so that readers see the old content or the new, never a torn one."""

from __future__ import annotations

import os
from pathlib import Path


def write_atomically(target: str | Path, data: bytes | str, *, mode: int | None = None, prefix: str = ".tmp-", suffix: str = ".json") -> None:
    """Write `data` to a temporary file beside `target`, then move it into place.

    Concurrent runs may write the same target: the last `os.replace` wins and
    every reader sees a complete file. On any failure the temporary file is
    removed and the error propagates (OSError for a read-only or full disk).
    """
    import tempfile

    target = Path(target)
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=prefix, suffix=suffix)
    try:
        with os.fdopen(fd, "wb" if isinstance(data, bytes) else "w", **({} if isinstance(data, bytes) else {"encoding": "utf-8"})) as fh:
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
