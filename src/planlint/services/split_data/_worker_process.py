"""A worker process reading remote objects of the larger split for the planlint process (_workers).

Forked by `_workers.Pool.start`, it waits on its pipe for the client to build,
the smaller split's index, then one task (an object) at a time; it builds its
own client from the split path (_sources.filesystem), opens the object with
the options the listing gave, checks that it is the object listed (its
identity, `_ListedObject`), compares it against the index (_scan.scan_unit)
and sends back the piece, its index part as bytes for the cache, and what it
read. It ends with the planlint process (`_end_with_parent`).
"""

from __future__ import annotations

import os
import pickle
import sys
import threading
import time
from typing import Optional

from planlint.services.split_data import _file_workers, _index, _index_parts, _scan, _sources
from planlint.services.split_data._base import FILE
from planlint.services.split_data._index_parts import _read_ahead
from planlint.services.split_data._sources import ByteCounter, RemoteObject
from planlint.services.split_data.budget import Budget
from planlint.services.split_data.errors import DataError
from planlint.services.split_data.schemes import LOCAL_FILES, Scheme, scheme_of

#: Text digested by the index's digest and by each worker's: the same code, or no workers.
_PROBE = "planlint worker digest probe \u00e9\u4e2d"


class ObjectChanged(Exception):
    """In a worker: the object opened is not the one the planlint process listed."""


def _rebuild_digest(key: Optional[bytes]):
    return _index.digest if key is None else _index.keyed_digest(key)


class _ListedObject(RemoteObject):
    """An object as the planlint process listed it: opening something else is ObjectChanged."""

    version: Optional[str] = None  # the S3 version id or GCS generation the split path names

    def _opened(self, handle) -> None:
        details = None
        try:
            details = _sources.bounded(lambda: getattr(handle, "details", None), self.deadline)
        except DataError:
            raise
        except Exception:
            details = None
        if not isinstance(details, dict):
            details = _sources.bounded(lambda: self.fs.info(self.fs_path), self.deadline)
        if self.identity not in self.scheme.identities(details, self.version):
            raise ObjectChanged(f"{self.uri}: not the object listed")


def _peak_kb() -> Optional[int]:
    return _file_workers._own_peak_kb()


class _Worker:
    def __init__(self) -> None:
        self.setup: Optional[dict] = None
        self.index: Optional[_index.SmallIndex] = None
        self.clients: dict = {}

    def take_index(self, setup: dict) -> None:
        index = _index.SmallIndex()
        index.packed_groups = setup["groups"]
        index.groups = _index.PackedGroups(index.packed_groups)
        index.hashes = setup["hashes"]
        index.digest_key = setup["digest_key"]
        index.digest = _rebuild_digest(index.digest_key)
        if index.digest(_PROBE) != setup["probe"]:
            raise ObjectChanged("the index's digest differs in the worker")
        self.setup, self.index = setup, index

    @staticmethod
    def _scheme(origin: tuple) -> Scheme:
        """The store of the split path `origin` names (a remote one: the planlint process listed it)."""
        store = scheme_of(origin[1])
        if store is None or store is LOCAL_FILES:
            raise ObjectChanged(f"{origin[0]}:// is no store")
        return store

    def _client(self, origin: tuple, deadline: Optional[float], listing: Optional[dict] = None):
        if origin not in self.clients:
            store = self._scheme(origin)
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            made = _sources.bounded(lambda: _sources.filesystem(store, origin[1], timeout), deadline)
            if listing:
                made[0].dircache.update(listing)
            connect = store.connect(made[0])
            if connect is not None:
                _sources.bounded(connect, deadline)
            self.clients[origin] = made
        return self.clients[origin]

    def read(self, position: int, task: dict) -> tuple:
        setup, index = self.setup, self.index
        if setup is None or index is None:
            return ("fallback", position, "a worker was given a task before the index", 0)
        budget = Budget.until(task["budget"])  # on time.monotonic (Pool.start), the same clock in every process
        counter = ByteCounter(task["limit"], setup["split"])
        counter.used = start = task["used"]
        try:
            counter.add(0)  # OverBytes: the split has read all it may already, this object is not opened
            fs, _, version = self._client(task["origin"], task["deadline"])
        except DataError as error:
            return ("error", position, error, 0)
        except Exception as error:  # this process reads it, and says what went wrong if it does too
            return ("fallback", position, f"a worker could not build its client ({type(error).__name__})", 0)
        item = _ListedObject(self._scheme(task["origin"]), fs, task["fs_path"], task["name"], task["uri"], task["size"], task["identity"], counter,
                             task["options"], budget, task["deadline"], origin=task["origin"])
        item.version = version
        spec = _scan.SideSpec(setup["split"], item, setup["fmt"], setup["gz"], setup["fields"], setup["cut"], budget)
        try:
            with _read_ahead({position: spec}):  # the next batches on their way while this one is checked
                piece = _scan.scan_unit(spec, index, FILE, keep_own=task["own"])
        except ObjectChanged as changed:
            return ("fallback", position, str(changed), counter.used - start)
        except Exception as error:  # raised by the planlint process in this object's turn
            try:
                pickle.loads(pickle.dumps(error))
            except Exception:
                return ("fallback", position, f"a worker's error does not pickle ({type(error).__name__})", counter.used - start)
            return ("error", position, error, counter.used - start)
        used = counter.used - start
        own, piece.own, body = piece.own, None, None
        if own is not None and setup["version"] is not None:
            try:
                body = _index_parts.part_body(own, used, setup["version"])  # what the cache writes, smaller than the part
            except Exception:
                body = None
        return ("ok", position, (piece, body), used)


def _system_allocator() -> None:
    """Have pyarrow allocate with malloc in a worker: its default (mimalloc) keeps ~50 MB of
    segments after the first Parquet object, in each process, which malloc does not."""
    os.environ["ARROW_DEFAULT_MEMORY_POOL"] = "system"  # if pyarrow is first imported here
    pyarrow = sys.modules.get("pyarrow")
    if pyarrow is not None:
        try:
            pyarrow.set_memory_pool(pyarrow.system_memory_pool())
        except Exception:
            pass


def _end_with_parent() -> None:
    """Have the kernel kill this worker when the planlint process dies (SIGTERM, SIGKILL: no chance
    to end its workers), so that no orphan goes on downloading with the run's credentials and holding
    the planlint process's output open. Linux's PR_SET_PDEATHSIG; elsewhere a thread that watches
    the parent."""
    import signal

    parent = os.getppid()
    try:
        import ctypes

        if ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0) != 0:  # PR_SET_PDEATHSIG
            raise OSError
    except (OSError, AttributeError, TypeError):
        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(0.2)
            os._exit(0)

        threading.Thread(target=watch, name="planlint-worker-watch", daemon=True).start()
    if os.getppid() != parent:  # it died before the kernel was told
        os._exit(0)


def _serve(conn, parent_ends: list) -> None:  # runs in a forked child
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the planlint process's to handle
    _end_with_parent()
    for end in parent_ends:
        end.close()
    _system_allocator()
    worker = _Worker()
    try:
        while True:
            message = pickle.loads(conn.recv_bytes())
            if message[0] == "client":
                try:
                    worker._client(message[1], message[2], message[3])
                except Exception:
                    pass  # said by the task that needs it
                continue
            if message[0] == "index":
                worker.take_index(message[1])
                continue
            _, position, task = message
            reply = worker.read(position, task)
            try:
                data = pickle.dumps((*reply, (os.getpid(), _peak_kb())), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:
                data = pickle.dumps(("fallback", position, "a worker's result does not pickle", reply[3], (os.getpid(), _peak_kb())))
            conn.send_bytes(data)
    except BaseException:  # the pipe closed (EOFError), or anything else: the planlint process reads the rest
        pass
    finally:
        try:
            conn.close()
        except OSError:
            pass
        os._exit(0)

