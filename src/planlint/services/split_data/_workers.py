"""The remote objects of the larger split read by worker processes.

Pass 2 of the checks (the larger split against the smaller split's index,
`_index_parts.read_big_objects`) is CPU-bound in one process: fetching the objects
costs little, decoding and comparing their rows is the work. For a split of
several remote objects that work is shared out: forked worker processes take
objects from the front of the split, one at a time, while this process reads
from the back; each object's result (`_index.BigResult`, rows local to the
object, and its index part for the cache) is merged in object order as if
read here.

- **When.** A process that runs other threads is never forked (_file_workers._can_fork),
  and by pass 2 the clients' IO thread, the bounded calls and the prefetch
  reader run. So the workers are forked at the start of a check of a remote
  split (`Pool.start`), before the objects are listed, after the client
  modules are imported here (their pages are then shared). They wait on a
  pipe. They are used only for a larger split of two or more remote objects
  to read, when the smaller split's index is small (at most
  MAX_INDEX_ENTRIES distinct inputs and group values: it is pickled once and
  sent once to each worker), and when the time budget is on the real clock;
  otherwise they are ended unused. `PLANLINT_DATA_WORKERS=1` turns them off.
- **The same objects.** A worker cannot use this process's clients (their
  event loop is in a thread it does not have): it builds its own from the
  split path as given, by the same code (`_sources.filesystem`: timeouts from
  the budget, no retries, the public-address resolver for https), is given
  what the listing told this process's client (its listing cache: s3fs then
  reads a listed object without a HEAD, with `If-Match` on the listed ETag,
  exactly as here), opens the object by the same path and options, and checks
  that what it opened has the identity the listing gave (version id,
  generation, blob id or ETag). An object that changed is read here instead.
- **Memory.** pyarrow is imported here with `ARROW_DEFAULT_MEMORY_POOL=system`
  (unless set): its default allocator (mimalloc) keeps ~50 MB of segments per
  process after the first Parquet object, malloc ~10 MB.
- **The same result.** Digests are made by the index's own digest (the
  per-process `hash`, the same in a forked child, or a keyed digest rebuilt
  from `SmallIndex.digest_key`), checked on a probe before any worker is
  used. A worker's error (a missing object, access denied, the time budget,
  the byte cap, a record too large, a broken file) is raised here when its
  object's turn comes, as if read here. Any trouble with the workers
  themselves (one dies, a reply cannot be unpickled, an identity differs, a
  client cannot be built) and the objects it concerns are read here: the
  result never depends on whether workers were used.
- **Limits.** Each task carries the time budget's deadline (a stalled object
  ends in the worker at the budget, and this process stops waiting there) and
  what the split has read so far: a worker stops its object once the split's
  total would pass `data.max_bytes`, and this process counts each object's
  bytes as it merges it, in object order. Objects read at the same time (one
  per process) do not see each other's bytes, so the split may fetch up to
  that many objects' reads past the cap before the check stops; an object cut
  short only by objects after it is read again here in its turn (`take`), so
  the note is the one reading in order gives. The time budget met by this
  process's own object from the back is that object's error, raised in its
  turn too. A worker is ended by the kernel when the planlint process dies
  (`_end_with_parent`).
"""

from __future__ import annotations

import gc
import os
import pickle
import sys
import threading
import time
from collections import deque
from typing import Any, Optional

from planlint.services.split_data import _file_workers, _index, _scan, _sources
from planlint.services.split_data.errors import OverBudget, OverBytes
from planlint.services.split_data.budget import Budget
from planlint.services.split_data.schemes import LOCAL_FILES, scheme_of
from planlint.services.split_data._worker_process import _PROBE, _rebuild_digest, _serve
from planlint.services.split_data._sources import ByteCounter, RemoteObject, Source, is_remote

#: The workers are used only when the smaller split's index holds at most this many distinct
#: inputs and group values: it is pickled and sent to each of them (~100 bytes an entry in
#: every worker); a larger one is read against in this process alone.
MAX_INDEX_ENTRIES = 1 << 18

#: A smaller split of more bytes than this is taken for one whose index is larger than
#: MAX_INDEX_ENTRIES (~50 bytes a row of Parquet, ~30 of gzip JSON Lines; the index itself
#: decides, after pass 1): the workers are ended before it is read.
SMALL_SPLIT_MAX_BYTES = 32 << 20

def _remote(value) -> bool:
    return isinstance(value, str) and "://" in value


def _preload(given) -> None:
    """Import here what reading the remote splits `given` will import, so that forked workers share it."""
    _sources._quiet_clients()
    for value in given:
        if not _remote(value):
            continue
        store = scheme_of(value)
        if store is None or store is LOCAL_FILES or store.missing_extra() is not None:
            continue
        try:
            store.preload()  # its client's modules: s3fs, gcsfs, huggingface_hub, aiohttp
            path = value.split("?", 1)[0].split("#", 1)[0].lower()
            if path.endswith((".parquet", ".pq")):
                if "pyarrow" not in sys.modules:
                    # malloc rather than mimalloc, whose segments (~50 MB after the first object
                    # read) would be kept by every process: read before pyarrow's first import
                    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
                import pyarrow.parquet  # noqa: F401
        except Exception:  # ImportError and the like: the check says it when it gets there
            continue
    _sources._quiet_clients()


class Pool:
    """Worker processes forked at the start of a check, waiting for objects to read."""

    def __init__(self, processes: list, connections: list, trace: dict[str, Any]) -> None:
        self.processes, self.connections = processes, connections
        self.trace = trace  # how the check went: see check_split_data's `trace`
        self.prepared = False  # the workers were told the client and listing of the split they will read
        self.reader_in_use: Optional[Reader] = None

    @classmethod
    def start(cls, given, budget: Budget, trace: dict[str, Any]) -> Optional["Pool"]:
        """Fork the workers when one of the split paths `given` is remote and forking is safe, else None."""
        if not any(_remote(value) for value in given) or not budget.on_real_clock:
            return None
        count = _file_workers.worker_count() - 1  # this process reads objects too
        if count < 1:
            return None
        _preload(given)
        if not _file_workers._can_fork():
            return None
        import multiprocessing

        context = multiprocessing.get_context("fork")
        processes: list = []
        connections: list = []
        # Objects that exist now are left out of the workers' garbage collections: a collection
        # writes to every object it visits, and each page written is a page a worker copies.
        gc.freeze()
        try:
            for _ in range(count):
                parent_end, child_end = context.Pipe()
                # the child closes its copies of the planlint process's ends (its own and its elder
                # siblings'): a worker whose pipe the planlint process closes must see it closed
                process = context.Process(target=_serve, args=(child_end, [*connections, parent_end]), daemon=True,
                                          name="planlint-data-worker")
                process.start()
                child_end.close()
                processes.append(process)
                connections.append(parent_end)
        except Exception:  # no more processes, a daemonic parent, ...
            cls(processes, connections, trace).close()
            return None
        finally:
            gc.unfreeze()
        return cls(processes, connections, trace)

    def usable(self, source: Source) -> bool:
        """Whether `source` is remote objects the workers could read (two or more, each with an identity)."""
        return (self.processes != [] and len(source.objects) >= 2
                and all(is_remote(item) and item.origin is not None and item.identity is not None for item in source.objects))

    def prepare(self, source: Source, small_bytes: int = 0) -> None:
        """Have the workers build the client that `source`'s objects will be read with, while this
        process reads the smaller split (of `small_bytes`); or end them now when that split is
        likely to give an index too large for them (they would hold copies of the pages this
        process writes to meanwhile)."""
        if small_bytes > SMALL_SPLIT_MAX_BYTES:
            self.trace["object_workers"] = "not used: the smaller split is large"
            self.close()
            return
        if not self.usable(source) or self.prepared:
            return
        self.prepared = True
        item = source.objects[0]
        try:
            # what the listing told this process's client: opening an object then asks the store what
            # it asks here (s3fs reads a listed object without a HEAD, if its ETag still matches)
            listing = dict(item.fs.dircache.items())
            message = pickle.dumps(("client", item.origin, item.deadline, listing), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            message = pickle.dumps(("client", item.origin, item.deadline, {}), protocol=pickle.HIGHEST_PROTOCOL)
        for conn in self.connections:
            try:
                conn.send_bytes(message)
            except OSError:
                pass  # a worker that is gone shows when it is given a task

    def reader(self, spec: "_scan.SideSpec", index: "_index.SmallIndex", source: Source, positions: dict, read_here, keep,
               version: Optional[int]) -> Optional["Reader"]:
        """A Reader of the objects at `positions` of `source` (position -> whether its own index part
        is wanted, for the cache), or None (the pool is then ended) when the workers are not worth
        or not safe to use for them. `read_here(position)` reads one in this process, giving its
        piece (its part as `piece.own`); `keep(position, piece, bytes read, body)` is called for
        each object read but the one `take` asks for, when it comes (a worker's part as `body`,
        `_index_parts.part_body` of cache `version`), so that no part is held longer."""
        reason = None
        if len(positions) < 2 or not self.usable(source) or not self.processes:
            reason = "fewer than two remote objects to read"
        elif len(index.hashes) > MAX_INDEX_ENTRIES or len(index.packed_groups) > MAX_INDEX_ENTRIES:
            reason = "the smaller split's index is large"
        elif not spec.budget.on_real_clock:
            reason = "the time budget is on another clock"
        else:
            try:
                if _rebuild_digest(index.digest_key)(_PROBE) != index.digest(_PROBE):
                    reason = "the index's digest cannot be rebuilt in a worker"
            except Exception:
                reason = "the index's digest cannot be rebuilt in a worker"
        if reason is not None:
            self.trace["object_workers"] = f"not used: {reason}"
            self.close()
            return None
        self.prepare(source)
        try:
            payload = pickle.dumps(("index", {
                "split": spec.split, "fmt": spec.fmt, "gz": spec.gz, "fields": spec.fields, "cut": spec.cut,
                "groups": index.packed_groups, "hashes": index.hashes, "digest_key": index.digest_key,
                "probe": index.digest(_PROBE), "version": version,
            }), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as error:
            self.trace["object_workers"] = f"not used: the index cannot be sent ({type(error).__name__})"
            self.close()
            return None
        return Reader(self, source, positions, payload, read_here, keep, spec.budget)

    def close(self) -> None:
        """End the workers: those waiting for a task leave at the closed pipe, the others are terminated."""
        if self.reader_in_use is not None:
            self.reader_in_use.stop()
        connections, processes = self.connections, self.processes
        self.connections, self.processes = [], []
        for conn in connections:
            try:
                conn.close()
            except OSError:
                pass
        deadline = time.monotonic() + 1.0
        for process in processes:
            process.join(timeout=max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.terminate()
                process.join()

    def kill(self) -> None:
        """End the workers now (a task under way is abandoned)."""
        if self.reader_in_use is not None:
            self.reader_in_use.stop()
        for process in self.processes:
            if process.is_alive():
                process.terminate()
        self.close()


class Reader:
    """Reads the objects at `positions` of `source`: the workers from the front, this process
    (`read_here`) from the back while it waits; `take` gives each object's piece in order.

    A thread of this process hands each worker its next object as soon as it sends one back (the
    planlint process may be reading an object of its own then): no worker waits, and no object
    is promised to a worker before one is free to read it."""

    def __init__(self, pool: Pool, source: Source, positions: dict, payload: bytes, read_here, keep, budget: Budget) -> None:
        self.pool, self.source, self.payload, self.read_here, self.keep = pool, source, payload, read_here, keep
        self.budget = budget
        self.own = positions  # position -> whether its own index part is wanted
        self.todo = deque(positions)  # not handed to anyone yet
        self.counter: ByteCounter = source.objects[self.todo[0]].counter
        self.lock = threading.Condition()
        self.busy: dict[Any, Optional[int]] = {conn: None for conn in pool.connections}  # connection -> position it reads
        self.arrived: deque = deque()  # workers' replies not yet seen by the planlint process's thread
        # position -> (status "ok", "error" or "fallback": to be read here, piece or error, bytes read
        # and not counted yet), from a worker or read here from the back
        self.done: dict[int, tuple[str, Any, int]] = {}
        self.finished: dict[int, int] = {}  # bytes of the objects finished and not yet counted, by position
        self.here: set = set()  # positions read in this process
        self.peaks: dict[int, int] = {}
        self.by_workers = 0
        self.broken: Optional[str] = None
        self.trace = pool.trace
        self.trace.update(mode="object-workers", workers=len(pool.processes) + 1, worker_peak_kb=[], fallback=None,
                          objects_by_workers=0, objects_here=0)
        self._wake_r, self._wake_w = os.pipe()
        self._stopping = False
        pool.reader_in_use = self
        for conn in list(self.busy):
            self._hand_out(conn, first=True)
        self._thread = threading.Thread(target=self._dispatch, name="planlint-data-workers", daemon=True)
        self._thread.start()

    # -- the dispatching thread

    def _hand_out(self, conn, first: bool = False) -> None:
        with self.lock:
            if not self.todo or self.broken is not None:
                self.busy[conn] = None
                return
            position = self.todo.popleft()
            self.busy[conn] = position
            used = self._before(position)
        item: RemoteObject = self.source.objects[position]
        task = ("task", position, {
            "origin": item.origin, "fs_path": item.fs_path, "name": item.name, "uri": item.uri, "size": item.size,
            "identity": item.identity, "options": item.open_options, "deadline": item.deadline,
            "budget": self.budget.deadline, "limit": self.counter.limit, "used": used, "own": self.own[position],
        })
        try:
            if first:
                conn.send_bytes(self.payload)
            conn.send_bytes(pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL))
        except Exception:  # the worker is gone (EPIPE), or the task does not pickle
            self._fail("a task could not be sent to a worker process")

    def _fail(self, reason: str) -> None:
        with self.lock:
            if self.broken is None:
                self.broken = reason
            self.lock.notify_all()

    def _dispatch(self) -> None:
        from multiprocessing.connection import wait

        try:
            while not self._stopping:
                waiting = [conn for conn, position in self.busy.items() if position is not None]
                if not waiting:
                    return
                ready: Any
                for ready in wait([*waiting, self._wake_r]):
                    conn = ready  # a Connection, or the wake-up pipe's end
                    if conn == self._wake_r or self._stopping:
                        return
                    try:
                        reply = pickle.loads(conn.recv_bytes())
                    except Exception:  # EOFError: the worker died; a reply that does not unpickle
                        self._fail("a worker process ended unexpectedly")
                        return
                    with self.lock:
                        self.arrived.append(reply)
                        self.finished[reply[1]] = reply[3]
                        self.lock.notify_all()
                    self._hand_out(conn)
        except Exception:  # a connection closed under it: the planlint process is ending the workers
            self._fail("the worker processes were ended")

    def stop(self) -> None:
        """End the dispatching thread (before the workers' connections are closed)."""
        if self._stopping:
            return
        self._stopping = True
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass
        self._thread.join(5)
        for end in (self._wake_r, self._wake_w):
            try:
                os.close(end)
            except OSError:
                pass
        self.pool.reader_in_use = None

    # -- the planlint process's thread

    def _settle(self) -> None:
        """Take in the workers' replies: each part is kept now (none is held until its turn)."""
        while True:
            with self.lock:
                if not self.arrived:
                    return
                status, position, payload, used, (pid, peak) = self.arrived.popleft()
            if peak is not None:
                self.peaks[pid] = peak
            if status == "ok":
                piece, body = payload
                self.keep(position, piece, used, body)
                payload = piece
            self.done[position] = (status, payload, used)

    def _read_last(self, position: int) -> None:
        """Read here an object from the back, as a worker would: its bytes counted, and its error
        raised, in its turn (the time budget ends the check at once)."""
        item: RemoteObject = self.source.objects[position]
        real = item.counter
        counter = item.counter = ByteCounter(real.limit, real.split)
        with self.lock:
            counter.used = start = self._before(position)
        try:
            counter.add(0)  # OverBytes: the split has read all it may already, this object is not opened
            piece = self.read_here(position)
            self.keep(position, piece, counter.used - start)
            self.done[position] = ("ok", piece, counter.used - start)
        except Exception as error:  # the time budget too: raised in this object's turn, after the errors of those before it
            self.done[position] = ("error", error, counter.used - start)
        finally:
            item.counter = real
        with self.lock:
            self.finished[position] = self.done[position][2]
        self.here.add(position)

    def _before(self, position: int) -> int:
        """What the split has read when an object is started: the objects counted and every one
        finished, those after it included (they bound what is fetched past data.max_bytes; an object
        cut short by them alone is read again in its turn, see take; call under the lock)."""
        return self.counter.used + sum(self.finished.values())

    def _give_up(self) -> None:
        self.trace["fallback"] = self.broken
        self.stop()
        self.pool.kill()

    def take(self, position: int) -> Optional["_index.BigResult"]:
        """The piece of the object at `position` (its bytes counted now, in object order; its part
        already kept), its error raised, or None: the caller reads it here."""
        while True:
            self._settle()
            if position in self.done:
                break
            with self.lock:
                broken = self.broken
                claim = None
                if broken is None and self.todo:
                    # nobody has it yet: the caller reads it; else meanwhile one from the back
                    claim = self.todo.popleft() if self.todo[0] == position else self.todo.pop()
                elif self.arrived:
                    continue  # a reply came in meanwhile: take it in first
                elif broken is None and position in self.busy.values():
                    left = self.budget.remaining()
                    if not self.arrived and self.broken is None and not self.lock.wait(left) and not self.arrived:
                        raise OverBudget()  # a worker's object stalled past the budget
                    continue
            if broken is not None:
                self._give_up()
                return None
            if claim is None:  # nobody has it and nobody will: read it here
                return None
            if claim == position:
                self.here.add(position)
                self.trace["objects_here"] = len(self.here)
                return None
            self._read_last(claim)
        status, payload, used = self.done.pop(position)
        with self.lock:
            self.finished.pop(position, None)
        if status == "fallback":
            self.trace["fallback"] = payload
            return None
        limit = self.counter.limit
        if status == "error" and isinstance(payload, OverBytes) and limit is not None and self.counter.used + used <= limit:
            # cut short by the cap only because objects after it were read meanwhile: reading in
            # order would have gone on, so it is read here, in its turn, against what came before it
            self.here.add(position)
            self.trace["objects_here"] = len(self.here)
            return None
        if position in self.here:
            self.trace["objects_here"] = len(self.here)
        else:
            self.by_workers += 1
            self.trace.update(worker_peak_kb=sorted(self.peaks.values()), objects_by_workers=self.by_workers)
        if used:
            self.counter.add(used)  # OverBytes here, in object order
        if status == "error":
            raise payload
        return payload
