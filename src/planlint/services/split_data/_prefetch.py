"""The remote objects of a split read in a thread, a few batches ahead of the check.

Reading a remote object is mostly waiting: each range request or stream block
is a round trip to the store, and the checks (pass 1 and pass 2 of _scan) wait
with it. A `Prefetch` reads the objects it is given one after another in a
thread of its own, at most AHEAD batches ahead of the thread that uses them,
so that the next batch (and the next object's footer and first column chunks)
is on its way while this one is checked. Results do not depend on it: the
batches, row numbers and reports are those of reading in order in one thread,
and an error (a missing object, the time budget, the byte cap) is raised in the
using thread where reading in order would have raised it.

The reading thread fills each object's FileReport with what the readers count
(rows, lines, invalid records, absent columns, the input field); the checks
fill the same report's other samples (missing keys, time leaks) as they use
the batches. It stops when the using side closes it, at the latest at the next
batch; a call it is waiting on ends at the time budget (_sources.bounded).
"""

from __future__ import annotations

import queue
import threading
from typing import Iterator

from planlint.services.split_data._base import Batch, FileReport
from planlint.services.split_data._formats import iter_batches

#: Batches read ahead of the using thread (each ~8192 rows as Python values:
#: about 1-3 MB for typical rows).
AHEAD = 2

_END = object()  # an object's last batch was handed over


class Prefetch:
    """Reads the objects of `specs` (SideSpec, `path` one object each) in order, in a thread.

    `batches(n)` hands over the batches of the n-th object (objects are taken
    in order, each wholly before the next), `reports[n]` is its FileReport.
    Use as a context manager, or call close()."""

    def __init__(self, specs: list) -> None:
        self.specs = specs
        self.reports = [FileReport() for _ in specs]
        self._queue: queue.Queue = queue.Queue(maxsize=AHEAD)
        self._stop = threading.Event()
        self._next = 0
        self._thread = threading.Thread(target=self._read, name="planlint-prefetch", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for number, spec in enumerate(self.specs):
                for batch in iter_batches(spec.path, spec.fmt, spec.gz, spec.fields, self.reports[number], spec.budget):
                    if not self._put((number, batch)):
                        return
                if not self._put((number, _END)):
                    return
        except BaseException as error:  # handed to the using thread, raised where reading in order raises it
            self._put((None, error))

    def _put(self, item) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def batches(self, number: int) -> Iterator[Batch]:
        if number != self._next:
            raise ValueError("prefetched objects are used in order")
        self._next += 1
        while True:
            got, item = self._queue.get()
            if got is None:
                raise item
            if item is _END:
                return
            yield item

    def close(self) -> None:
        """Stop reading (the thread ends at its next batch, or when the call it waits on ends)."""
        self._stop.set()

    def __enter__(self) -> "Prefetch":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
