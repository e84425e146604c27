"""One large local file (JSON Lines or CSV) of the larger split, read by worker processes.

The file is cut into pieces that start on a row boundary and read by forked
worker processes (Linux only, when this process runs no other thread); each
returns the leaks of its piece with row numbers local to the piece, and the
pieces are merged in file order. Any trouble with the workers (a CSV piece
cut inside a quoted field, a dead worker) and the file is simply read again
in this process: the result never depends on how the file was cut.
"""

from __future__ import annotations

import os
import sys
import threading
from functools import partial
from pathlib import Path
from typing import Any, Callable

from planlint.services.split_data._base import FILE, Unsplittable
from planlint.services.split_data._formats import plan_units
from planlint.services.split_data._index import BigResult, SmallIndex
from planlint.services.split_data._scan import SideSpec, scan_unit

#: Below this size (on disk) the larger split is read in this process.
PARALLEL_MIN_BYTES = 32 << 20
#: Size of one piece handed to a worker (plain files; gzip pieces follow
#: the reader's chunks).
UNIT_BYTES = 16 << 20
#: Upper bound on worker processes.
MAX_WORKERS = 4


def worker_count() -> int:
    """PLANLINT_DATA_WORKERS if set (1 turns workers off), else the usable
    CPUs, at most MAX_WORKERS."""
    configured = os.environ.get("PLANLINT_DATA_WORKERS", "").strip()
    if configured:
        try:
            return max(1, int(configured))
        except ValueError:
            return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cpus))


def _can_fork() -> bool:
    if not sys.platform.startswith("linux"):
        return False  # fork is unsafe on macOS, absent on Windows
    if threading.active_count() > 1:
        return False  # forking a process that runs other threads can deadlock
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def _size(spec: SideSpec) -> int:
    try:
        return spec.path.stat().st_size
    except OSError:
        return 0


def _use_workers(spec: SideSpec, min_bytes: int) -> bool:
    if spec.fmt not in ("jsonl", "csv") or not isinstance(spec.path, Path) or worker_count() < 2:
        return False
    return _size(spec) >= (min_bytes // 4 if spec.gz else min_bytes) and _can_fork()


def read_big(spec: SideSpec, index: SmallIndex) -> BigResult:
    workers = worker_count()
    spec.trace.update(mode="sequential", workers=1, worker_peak_kb=[], fallback=None)
    if _use_workers(spec, PARALLEL_MIN_BYTES):
        total = BigResult()
        try:
            _read_parallel(spec, partial(scan_unit, spec, index), total, workers, UNIT_BYTES)
            return total
        except (Unsplittable, _WorkersFailed) as reason:
            spec.trace.update(mode="sequential", workers=1, worker_peak_kb=[], fallback=str(reason))
    spec.layout = None
    return scan_unit(spec, index, FILE)


class _WorkersFailed(Exception):
    pass


def _own_peak_kb() -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def _worker(conn, task: Callable[[tuple], Any]) -> None:  # runs in a forked child
    try:
        while True:
            message = conn.recv()
            if message is None:
                break
            number, unit = message
            try:
                part = task(unit)
            except BaseException as error:  # reported to the parent, which reads the file itself
                conn.send(("error", number, f"{type(error).__name__}: {error}"[:300], None))
                break
            conn.send(("ok", number, part, _own_peak_kb()))
    except (EOFError, OSError, KeyboardInterrupt):
        pass
    finally:
        conn.close()


def _read_parallel(spec: SideSpec, task: Callable[[tuple], Any], total: Any, workers: int, unit_bytes: int) -> None:
    """Cut the file into units, have `workers` forked processes run `task` on
    them, and `total.merge` the parts in file order (row numbers shifted)."""
    import multiprocessing
    from multiprocessing.connection import wait

    layout, units = plan_units(spec.path, spec.fmt, spec.gz, spec.fields, unit_bytes, spec.budget)
    spec.layout = layout
    context = multiprocessing.get_context("fork")
    processes: list = []
    connections: list = []
    peaks: dict[int, int] = {}
    if layout is not None:
        total.report.absent_columns = list(layout.absent)
        total.report.input_field = layout.input_field
    try:
        for _ in range(workers):
            parent_end, child_end = context.Pipe()
            process = context.Process(target=_worker, args=(child_end, task), daemon=True)
            process.start()
            child_end.close()
            processes.append(process)
            connections.append(parent_end)
        busy: dict[Any, bool] = {conn: False for conn in connections}
        finished: dict[int, BigResult] = {}
        sent = merged = offset = 0
        exhausted = False
        last_ended_in_quotes = False

        def feed(conn) -> None:
            nonlocal sent, exhausted
            if exhausted:
                return
            unit = next(units, None)  # may raise Unsplittable (CSV)
            if unit is None:
                exhausted = True
                return
            conn.send((sent, unit))
            sent += 1
            busy[conn] = True

        conn: Any  # a Connection (multiprocessing.connection.wait types it wider)
        for conn in connections:
            feed(conn)
        while True:
            waiting = [conn for conn in connections if busy[conn]]
            if not waiting:
                break
            for conn in wait(waiting):
                try:
                    status, number, part, peak = conn.recv()
                except (EOFError, OSError):
                    raise _WorkersFailed("a worker process ended unexpectedly") from None
                busy[conn] = False
                if status != "ok":
                    raise _WorkersFailed(f"a worker failed: {part}")
                if peak is not None:
                    peaks[id(conn)] = peak
                finished[number] = part
                while merged in finished:
                    piece = finished.pop(merged)
                    if last_ended_in_quotes:  # the previous piece was cut inside a quoted field
                        raise Unsplittable("a CSV piece ended inside a quoted field")
                    last_ended_in_quotes = piece.report.ended_in_quotes
                    total.merge(piece, offset)
                    offset += piece.report.lines
                    merged += 1
                feed(conn)
        spec.trace.update(mode="parallel", workers=workers, worker_peak_kb=sorted(peaks.values()))
    finally:
        close = getattr(units, "close", None)
        if close is not None:
            close()
        for conn in connections:
            try:
                conn.send(None)
            except (OSError, ValueError):
                pass
        for process in processes:
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
                process.join()
        for conn in connections:
            conn.close()
