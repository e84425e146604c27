"""Where a split's rows come from: one local file, the matches of a local glob,
or objects behind a URI (`s3://`, `gs://`, `hf://`, `https://`, with globs).

This module only finds and opens objects (through fsspec and the filesystem
each scheme needs); the rows are read by the format readers (_formats), which
see an object as something with `open_binary()` instead of a local path. A
split of several objects (a glob's sorted matches, "shards") is read as one
split: rows are numbered on, shard after shard, and `Source.locate` turns a
row number back into (shard name, row in that shard) for the messages.

Nothing here reads more than it must: every object is opened through a
`_Counted` file that counts the bytes the readers take (the split's
`data.max_bytes`) and checks the time budget at each read; Parquet is read by
pyarrow over that file (range requests for the footer and the needed column
chunks only), JSON Lines and CSV are streamed in blocks.

Credentials are never handled here: each filesystem takes them from its
library's own chain (environment, profiles, instance roles). Text that comes
back from a client library (an error) is shown only through `safe_text`,
which masks URLs' secrets and the values of credential variables.
"""

from __future__ import annotations

import copy
import io
import logging
import os
import re
import threading
import time
import warnings
from bisect import bisect_right
from pathlib import Path
from typing import Any, Iterator, Optional

from planlint.core.urls import mask_uris, scheme, show_uri
from planlint.services.split_data._addresses import AddressRefused
from planlint.services.split_data._base import FORMATS_READ, FileReport, detect_format, rows_from
from planlint.services.split_data._formats import iter_batches  # _formats knows no Source: it reads one object
from planlint.services.split_data.budget import Budget
from planlint.services.split_data.errors import DataError, Denied, MissingExtra, OverBudget, OverBytes, OverCap, Unreadable
from planlint.services.split_data.resolve import MAX_OBJECTS, has_magic
from planlint.services.split_data.schemes import LOCAL_FILES, Scheme, listed_size, scheme_of, schemes_read

#: `data.max_bytes`: what one split may read from storage, by default (2 GiB).
DEFAULT_MAX_BYTES = 2 << 30

#: Read block of a streamed object (JSON Lines, CSV): one block is held at a time.
STREAM_BLOCK = 4 << 20

# --------------------------------------------------------------------------
# secrets


_CREDENTIAL_NAME = re.compile(r"SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|ACCESS_KEY|API_KEY|PRIVATE_KEY|SESSION", re.IGNORECASE)


def safe_text(text: str) -> str:
    """`text` (an error from a client library) with URL secrets and credential values masked."""
    text = mask_uris(text)
    for name, value in os.environ.items():
        if len(value) >= 6 and _CREDENTIAL_NAME.search(name) and value in text:
            text = text.replace(value, "***")
    return text[:300]


def _error_text(store: Scheme, error: BaseException) -> tuple[bool, str]:
    """(whether `error`, a client's, is a refusal, what it says)."""
    refused = store.refused(error)
    if refused is not None:
        return True, str(refused)
    if isinstance(error, FileNotFoundError):
        return False, "no such object"
    denied = store.denied_text(error)
    if denied is not None:
        return True, denied
    if isinstance(error, PermissionError) or store.http_status(error) in (401, 403):
        return True, "access denied"
    if isinstance(error, OSError) and error.strerror:
        return False, safe_text(error.strerror)
    return False, safe_text(str(error) or type(error).__name__)


def _client_failed(store: Scheme, shown: str, failed: str, error: BaseException, budget: Budget, deadline: Optional[float],
                   listing: bool = False) -> DataError:
    """What a client's `error`, met when `shown` `failed` ("could not be listed", opened, read),
    means: the time budget when it ran out (a client's timeout is set to it: met there, it is the
    budget), else the store's reading of the error. A missing object met while `listing` says why
    it is missing; a non-public address is said as the check before any request says it
    (`shown: the host H is at a non-public address ...`)."""
    budget.check()
    _check_past(deadline)
    refused = store.refused(error)
    if isinstance(refused, AddressRefused):
        return Denied(f"{shown}: {refused}")
    if listing and isinstance(error, FileNotFoundError) and refused is None:
        return Unreadable(f"{shown}: {store.missing_reason(error)}")
    denied, text = _error_text(store, error)
    return (Denied if denied else Unreadable)(f"{shown}: {failed} ({text})")


# --------------------------------------------------------------------------
# objects


class RemoteObject:
    """One object of a remote split; the readers open it with `open_binary()`."""

    def __init__(self, scheme: Scheme, fs: Any, fs_path: str, name: str, uri: str, size: Optional[int], identity: Optional[str],
                 counter: "ByteCounter", open_options: dict, budget: Budget, deadline: Optional[float] = None,
                 origin: Optional[tuple[str, str]] = None) -> None:
        self.scheme = scheme  # its store
        self.fs, self.fs_path = fs, fs_path
        self.budget = budget  # the check's, checked at each read
        # (scheme, the split path as given): what a worker process builds its own client from (_workers)
        self.origin = origin
        self.deadline = deadline  # time.monotonic() past which a call to a client without timeouts is given up
        self.name = name  # shown in messages: the part after the glob's fixed prefix
        self.uri = uri  # shown: show_uri'd
        self.size, self.identity = size, identity
        self.counter = counter
        self.bytes_read = 0  # what reading this object took (counter counts the whole split's, from any thread)
        self.open_options = open_options

    def open_binary(self, *, random_access: bool = False):
        options = dict(self.open_options)
        # Parquet seeks (footer, then column chunks): each read is exactly one
        # range request. Streams read ahead one block at a time.
        options.update(block_size=1 << 20, cache_type="none") if random_access else options.update(block_size=STREAM_BLOCK, cache_type="readahead")
        try:
            handle = bounded(lambda: self.fs.open(self.fs_path, "rb", **options), self.deadline)
        except DataError:
            raise
        except Exception as error:  # FileNotFoundError, PermissionError, the client's own errors
            raise _client_failed(self.scheme, self.uri, "could not be opened", error, self.budget, self.deadline) from None
        try:
            self._opened(handle)
        except BaseException:
            handle.close()
            raise
        return _Counted(handle, self.counter, self.uri, self.budget, self.deadline, self, self.scheme)

    def _opened(self, handle) -> None:
        """Called with each file opened, before it is read (a worker's objects check their identity here)."""

    def __str__(self) -> str:
        return self.uri

    def __fspath__(self) -> str:  # for messages that format a path; never opened as a local file
        raise TypeError("a remote object is not a local path")


class ByteCounter:
    """The bytes a split's reading took, against data.max_bytes (added to by the read-ahead thread too)."""

    def __init__(self, limit: Optional[int], split: str) -> None:
        self.limit, self.split, self.used = limit, split, 0
        self._lock = threading.Lock()

    def add(self, count: int) -> None:
        with self._lock:
            self.used += count
        if self.limit is not None and self.used > self.limit:
            raise OverBytes(f"the {self.split} split read more than {limit_text(self.limit)} (limit data.max_bytes)")


def limit_text(size: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and not size & ((1 << shift) - 1):
            return f"{size >> shift} {unit}"
    return f"{size} bytes"


def bounded(call, deadline: Optional[float]):
    """`call()`, given up at `deadline` (time.monotonic()) with OverBudget; None: no bound.

    The clients' timeouts bound one request, not a call: huggingface_hub takes
    none from planlint (its listings wait on a stalled Hub without end, its reads
    retry a 10 s timeout five times), gcsfs's `timeout` bounds few of its calls,
    a server that trickles a byte now and then never meets a read timeout, and a
    credential chain has timeouts of its own.
    The call runs in a daemon thread that is left behind if it outlives the
    deadline (its result is dropped); the data checks end there. The clients are
    built to retry nothing and to time out at the budget (filesystem), so what
    is left behind ends about then too, without another request.
    """
    if deadline is None:
        return call()
    outcome: dict = {}
    done = threading.Event()

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as error:  # handed to the caller below
            outcome["error"] = error
        finally:
            done.set()

    threading.Thread(target=run, name="planlint-bounded-call", daemon=True).start()
    if not done.wait(max(0.0, deadline - time.monotonic())):
        raise OverBudget()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _cancel_at(fs, deadline: Optional[float]) -> dict:
    """The `timeout` that makes an fsspec async filesystem's call cancel its work at `deadline`
    (fsspec's sync() runs the call under asyncio.wait_for): given up by `bounded` alone, a call
    goes on in the background, and fsspec's HTTP info asks a server that did not answer its HEAD
    again with a GET. {} for a filesystem that is not async (HfFileSystem) or without a deadline."""
    from fsspec.asyn import AsyncFileSystem

    if deadline is None or not isinstance(fs, AsyncFileSystem):
        return {}
    return {"timeout": max(0.01, deadline - time.monotonic())}


def _check_past(deadline: Optional[float]) -> None:
    """OverBudget when `deadline` has passed: a client's timeout (one set to the budget) met there is the budget."""
    if deadline is not None and time.monotonic() >= deadline:
        raise OverBudget()


class _Counted(io.RawIOBase):
    """A remote file that counts what is read (data.max_bytes) and checks the time budget at each read."""

    def __init__(self, handle, counter: ByteCounter, uri: str, budget: Budget, deadline: Optional[float] = None,
                 tally: Optional[RemoteObject] = None, scheme: Scheme = LOCAL_FILES) -> None:
        super().__init__()
        self._handle, self._counter, self._uri, self._deadline, self._tally = handle, counter, uri, deadline, tally
        self._budget, self._scheme = budget, scheme
        self.size = getattr(handle, "size", None)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._handle.seek(offset, whence)

    def tell(self) -> int:
        return self._handle.tell()

    def read(self, size: int = -1) -> bytes:
        self._budget.check()
        try:
            data = bounded(lambda: self._handle.read(size), self._deadline)
        except DataError:
            raise
        except Exception as error:  # the client's own errors
            raise _client_failed(self._scheme, self._uri, "could not be read", error, self._budget, self._deadline) from None
        if self._tally is not None:
            self._tally.bytes_read += len(data)
        self._counter.add(len(data))
        return data

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def readall(self) -> bytes:
        raise OSError("a split object is never read whole")

    def close(self) -> None:
        try:
            self._handle.close()
        except Exception:
            pass
        super().close()


class Source:
    """A split as the checks read it: one local file (`of_file`), or objects (remote, or the matches
    of a local glob) read one after another as one split."""

    def __init__(self, shown: str, objects: list, names: list[str], *, sharded: bool) -> None:
        self.shown = shown  # the split path as given, secrets masked
        self.objects = objects  # RemoteObject, or Path for a local glob's matches
        self.names = names  # what messages call each object (shard)
        self.sharded = sharded
        self.starts: list[int] = []  # row offset at which each object starts (filled while reading)
        self.file: Optional[Path] = None  # the local file, when the split is one (of_file)
        if not objects:
            return
        formats = set()
        for item, name in zip(objects, names):
            found = detect_format(Path(item.name))
            if found is None:
                raise Unreadable(f"{shown}: {name} is not a supported split format ({FORMATS_READ})")
            formats.add(found)
        if len(formats) > 1:
            raise Unreadable(f"{shown}: the matched objects are of different formats; a split is one format")
        self.fmt, self.gz = formats.pop()

    @classmethod
    def of_file(cls, path: Path) -> "Source":
        """One local file as a split: read whole, by byte ranges in worker processes when it is large
        (_file_workers), and named by the SHA-256 of its content, not object by object."""
        found = detect_format(path)
        if found is None:
            raise Unreadable(f"{path}: not a supported split format ({FORMATS_READ})")
        source = cls(str(path), [], [], sharded=False)
        source.objects, source.names, source.file, source.starts = [path], [path.name], path, [0]
        source.fmt, source.gz = found
        return source

    @property
    def readable(self) -> Any:
        """What the readers are handed: the file of a one-file split, else this Source (whose
        `batches` reads its objects one after another)."""
        return self if self.file is None else self.file

    def __str__(self) -> str:
        return self.shown

    def size(self) -> int:
        """The split's size: of its file on disk (OSError when it cannot be read), or of its objects."""
        if self.file is not None:
            return self.file.stat().st_size
        return sum((item.size or 0) if isinstance(item, RemoteObject) else local_size(item) for item in self.objects)

    def identities(self) -> Optional[list]:
        """What identifies each object's content for the cache, or None if one has nothing."""
        out = []
        for item in self.objects:
            identity = object_identity(item)
            if identity is None:
                return None
            out.append(identity)
        return out

    def locate(self, row: int) -> tuple[str, int]:
        """(shard name, row in that shard) of a row number of the whole split."""
        if not self.sharded or not self.starts:
            return self.shown, row
        index = max(0, bisect_right(self.starts, row - 1) - 1)
        return self.names[index], row - self.starts[index]

    def batches(self, fields, report: FileReport, budget: Budget) -> Iterator:
        """The batches of every object in order, row numbers continuing from one object to the next."""
        self.starts = []
        absent: dict[str, int] = {}
        for item in self.objects:
            part = FileReport()
            offset = report.lines
            self.starts.append(offset)
            with rows_from(offset):
                for rows, groups, times, inputs in iter_batches(item, self.fmt, self.gz, fields, part, budget):
                    if offset:
                        rows = [row + offset for row in rows]
                    yield rows, groups, times, inputs
            report.merge(part, offset)
            for name in part.absent_columns:
                absent[name] = absent.get(name, 0) + 1
            if report.input_field is None:
                report.input_field = part.input_field
        report.absent_columns = [name for name, count in absent.items() if count == len(self.objects)]


def object_identity(item: Any) -> Optional[list]:
    """[uri or local path, what names its content, size] of an object of a split (None: a remote
    object whose listing named nothing); a local file's is its SHA-256 (OSError when unreadable)."""
    if isinstance(item, RemoteObject):
        return None if item.identity is None else [item.uri, item.identity, item.size]
    return [str(item), LOCAL_FILES.identity_of(item), None]


def is_remote(item: Any) -> bool:
    """Is this object of a split remote (read through its store's client), not a local file?"""
    return isinstance(item, RemoteObject)


def bytes_read(item: Any) -> int:
    """What reading the object took from storage (a local file: nothing, it is counted on disk)."""
    return item.bytes_read if isinstance(item, RemoteObject) else 0


def uncounted(item: Any, split: str) -> Any:
    """The object, to be read again without counting against data.max_bytes (it was counted when read)."""
    if not isinstance(item, RemoteObject):
        return item
    again = copy.copy(item)
    again.counter = ByteCounter(None, split)
    return again


def local_size(path) -> int:
    """A local file's size on disk, 0 when it cannot be read."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


# --------------------------------------------------------------------------
# local globs


def local_source(pattern: str, matches: list[tuple[str, Path]]) -> Source:
    """A local glob's matches ((path as the pattern spells it, file)) as one split."""
    prefix = _fixed_prefix(pattern)
    names = [shown[len(prefix):] if prefix and shown.startswith(prefix) else shown for shown, _ in matches]
    return Source(pattern, [path for _, path in matches], names, sharded=True)


def _fixed_prefix(pattern: str) -> str:
    """The directories of `pattern` before its first component with a wildcard, with the final '/'."""
    parts = pattern.replace("\\", "/").split("/")
    fixed = []
    for part in parts[:-1]:
        if has_magic(part):
            break
        fixed.append(part)
    return "/".join(fixed) + "/" if fixed else ""


# --------------------------------------------------------------------------
# remote objects


def remote_source(value: str, split: str, *, max_bytes: Optional[int], budget: Budget) -> Source:
    """List the objects `value` names (one, or a glob's sorted matches) without reading them, within `budget`."""
    shown = show_uri(value)
    kind = scheme(value)
    store = scheme_of(value)
    if store is None or store is LOCAL_FILES or kind is None:
        raise Unreadable(f"{shown}: the scheme {kind}:// is not read (use {schemes_read()} or a path in the repository)")
    refused = store.refusal(value)
    if refused:
        raise Denied(f"{shown}: {refused}")
    lacking = store.missing_extra()
    if lacking is not None:
        extra, package = lacking
        raise MissingExtra(f"{shown}: reading {kind}:// paths needs the optional extra: pip install 'planlint[{extra}]' ({package})")
    counter = ByteCounter(max_bytes, split)
    # Every call into a client (building it, listing, opening, each read) is bounded by the
    # budget's deadline: the clients' own timeouts are per request and their retries multiply
    # them (see filesystem), and huggingface_hub takes no timeout from planlint at all.
    timeout = budget.remaining()
    deadline = time.monotonic() + timeout if timeout is not None else None
    try:
        fs, fs_path, version = bounded(lambda: filesystem(store, value, timeout), deadline)
    except DataError:
        raise
    except Exception as error:  # a credential chain that fails, a bad endpoint variable
        raise _client_failed(store, shown, "could not be listed", error, budget, deadline) from None
    glob = has_magic(fs_path) and store.globs
    try:
        if glob:
            if version is not None:
                raise Unreadable(f"{shown}: a glob cannot name a version")
            listing = bounded(lambda: fs.glob(fs_path, detail=True, **_cancel_at(fs, deadline)), deadline)
            budget.check()
            entries = sorted((path, info) for path, info in listing.items() if info.get("type", "file") == "file")
            if not entries:
                raise Unreadable(f"{shown}: matches no object")
            if len(entries) > MAX_OBJECTS:
                raise OverCap(f"{shown}: matches more than {MAX_OBJECTS:,} objects")
        else:
            info = bounded(lambda: fs.info(fs_path, **store.info_options(version), **_cancel_at(fs, deadline)), deadline)
            budget.check()
            if info.get("type", "file") != "file":
                raise Unreadable(f"{shown}: is not an object (a prefix or directory; use a glob such as {shown.rstrip('/')}/*.parquet)")
            entries = [(fs_path, info)]
    except DataError:
        raise
    except Exception as error:  # the client's own errors
        raise _client_failed(store, shown, "could not be listed", error, budget, deadline, listing=True) from None
    prefix = _fixed_prefix(fs_path) if glob else ""
    objects, names = [], []
    for path, info in entries:
        name = store.object_name(path, prefix, version)
        uri = show_uri(store.object_uri(value, path, version))
        objects.append(RemoteObject(store, fs, path, name, uri, listed_size(info), store.identity(info, version), counter,
                                    store.open_options(info, version), budget, deadline, origin=(kind, value)))
        names.append(safe_name(name))
    return Source(shown, objects, names, sharded=glob)


def safe_name(name: str) -> str:
    """An object name for a message: control and format characters escaped, at most 120 characters."""
    out = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in name)
    return out if len(out) <= 120 else out[:119] + "…"


#: The client libraries' loggers (and their children): none of their lines reach planlint's output.
CLIENT_LOGGERS = ("fsspec", "s3fs", "aiobotocore", "botocore", "boto3", "gcsfs", "google", "aiohttp", "urllib3",
                  "requests", "huggingface_hub", "httpx", "httpcore", "filelock")

_NULL_HANDLER = logging.NullHandler()

_warnings_quieted = False


def _quiet_clients(fs=None) -> None:
    """Keep the client libraries' logging and warnings off stderr.

    gcsfs logs each request it gives up on with its traceback
    (logger.exception), ExtendedGcsFileSystem a warning per bucket whose layout
    it could not ask for, huggingface_hub gives its loggers a stderr handler of
    its own at import, and with nothing configured logging's last-resort
    handler prints any warning: their text (tracebacks, request URLs, error
    bodies) bypassed planlint's notes and safe_text. What planlint can say
    about a failure it says in its note. Called before a client is imported and
    again once it is (huggingface_hub's handler comes with its import); `fs`,
    an fsspec async filesystem, has its event loop's unhandled errors (a task
    left behind at the deadline) dropped too.
    """
    global _warnings_quieted
    for name in CLIENT_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers[:] = [_NULL_HANDLER]
        logger.propagate = False
    if not _warnings_quieted:
        _warnings_quieted = True
        warnings.filterwarnings("ignore", module=r"(%s)(\.|$)" % "|".join(name.replace(".", r"\.") for name in CLIENT_LOGGERS))
    if fs is not None:
        from fsspec.asyn import AsyncFileSystem

        if isinstance(fs, AsyncFileSystem) and fs.loop is not None:
            fs.loop.set_exception_handler(lambda loop, context: None)


def filesystem(store: Scheme, value: str, timeout: Optional[float]):
    """(fsspec filesystem, its path for `value`, the version `value` names or None), each request of
    the client timing out at the remaining budget and a second, so that planlint's deadline (which
    cancels a listing there, see _cancel_at) always comes first and a request given up at the
    timeout is never followed by another one (fsspec's HTTP info tries a GET after a failed HEAD)."""
    _quiet_clients()
    path, version = store.locate(value)
    wait = None if timeout is None else max(1.0, min(timeout, 300.0)) + 1.0
    fs = store.client(version, wait)
    _quiet_clients(fs)
    return fs, path, version
