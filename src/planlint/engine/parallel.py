"""Linting many files: the result cache in front, a process pool behind.

`lint_targets` returns exactly what calling `engine.lint_file` on each target
in order would return (less the plan data and positions, which nothing after
lint_file needs and which would cost memory and pickling). Cached results are
looked up in this process; only the misses are linted, serially or, when there
are enough of them, by worker processes, and the results come back in the
order of the targets, so the report is the same whichever path produced it.

On Linux the workers are forked children that start with planlint imported
and the schema compiled, each taking every n-th file and piping its results
back; elsewhere a pool of spawned processes takes chunks. Each worker writes
the cache entries it adds as one segment (atomic writes make that safe).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path
from typing import Any, Iterable

from planlint.core.config import Config
from planlint.core.loader import load_text
from planlint.core.model import FileResult
from planlint.engine.lint import lint_file
from planlint.rules import RULES, resolved
from planlint.rules.base import CATALOG, NEUTRAL, PlanContext, Services
from planlint.rules.grader_source import inputs as source_inputs
from planlint.rules.leakage import inputs, remote_or_glob
from planlint.rules.run import inputs as run_inputs
from planlint.rules.schema import _compiled

# Below this many files per worker a pool costs more than it saves: forking,
# shipping results back and waiting for the slowest chunk against ~1 ms a file.
MIN_FILES_PER_WORKER = 24
# Rules of these scopes decide from the plan text and the config alone, which is
# what the cache key holds, or (scope "data") also from the split files, or
# (scope "files") from other files of the repository the plan names (grader
# sources), which each cache entry lists with their state (rules.leakage.inputs,
# rules.grader_source.inputs). A rule that reads anything else (a registry,
# git) has another scope, and while one is enabled nothing is cached; or, as
# the run rules do for git's answer about a pinned commit, has its inputs say
# None when the result rests on it (not cached).
CACHE_SAFE_SCOPES = frozenset({"plan", "file", "repo", "data", "files"})
# ... except scopes whose rules never run here: diff rules (and PL705, scope policy) run in diff mode only.
NOT_RUN_BY_LINT_PATHS = frozenset({"diff", "policy"})
# A split file changed this close to (or after) the start of its plan's lint
# may have been read half old, half new; its result is not cached. Covers
# coarse file-system clocks.
RACY_SECONDS = 2

Target = tuple[str, Path, bool]


def available_cpus() -> int:
    """CPUs this process may run on (a container's or taskset's limit, not the machine's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def cache_safe(config: Config) -> bool:
    enabled = resolved(config).rules
    return all(rule.scope in CACHE_SAFE_SCOPES | NOT_RUN_BY_LINT_PATHS for code, rule in RULES.items() if code in enabled)


def services_fingerprint(services: Services | None) -> str | None:
    """What the rules can learn from the run's services, as text for the cache key; None when
    that cannot be said (registry answers, --fix's re-pins): then neither cache nor workers.

    Read from the fields of Services and their `cache` metadata, so a service
    added there is uncacheable until it says how it may be keyed.
    """
    services = services or Services()
    parts: list[str] = []
    for spec in dataclasses.fields(services):
        value = getattr(services, spec.name)
        if not value:
            continue
        how = spec.metadata.get("cache")
        if how == NEUTRAL:
            continue
        if how == CATALOG and value.registry is None and value.catalog is not None:
            # The catalog as the rules see it, display path included (messages name it).
            import hashlib  # only with a catalog: OpenSSL's start-up is not every run's

            parts.append("catalog " + hashlib.sha256(repr(value.catalog).encode()).hexdigest())
            continue
        return None
    return "\n".join(parts)


def worker_count(jobs: int | None, files: int) -> int:
    """Processes to lint `files` files with: at most `jobs` (None: the available CPUs), 1 for small inputs."""
    limit = available_cpus() if jobs is None else max(1, jobs)
    return max(1, min(limit, files // MIN_FILES_PER_WORKER))


def lint_targets(targets: list[Target], config: Config, *, services: Services | None = None, jobs: int | None = 1, cache: Any = None) -> list[FileResult | None]:
    """lint_file() for every target, in order; None where a discovered file is not a plan."""
    config = resolved(config)  # once, for every file and worker
    fingerprint = services_fingerprint(services)
    if fingerprint is None or (cache is not None and not cache_safe(config)):
        cache = None
    elif cache is not None:
        cache.add_to_key(fingerprint)
    results: list[FileResult | None] = [None] * len(targets)
    todo: list[int] = []
    keys: list[str | None] = []
    if cache is None:
        todo = list(range(len(targets)))
        keys = [None] * len(targets)
    else:
        # Deliberately lazy: the result cache's module (hashing, atomic writes) loads only when caching.
        from planlint.engine.result_cache import MISS

        for index, (display, path, explicit) in enumerate(targets):
            hit, key = cache.lookup(display, path, explicit)
            if hit is MISS:
                todo.append(index)
                keys.append(key)
            else:
                results[index] = hit
    if todo:
        work = [(targets[index], key) for index, key in zip(todo, keys)]
        workers = 1 if fingerprint is None else worker_count(jobs, len(work))
        if workers == 1:
            done: Iterable = [_lint(target, key, config, services, cache) for target, key in work]
            if cache is not None:
                cache.flush()
        else:
            done = _in_pool(work, config, services, cache, workers)
        for index, result in zip(todo, done):
            results[index] = result
    if cache is not None:
        cache.compact()
    return results


def _lint(target: Target, key: str | None, config: Config, services: Services | None, cache: Any) -> FileResult | None:
    display, path, explicit = target
    started = time.time_ns()
    result = lint_file(display, path, explicit, config, services)
    inputs = _inputs(result, display, path, config, services) if cache is not None and result is not None else []
    if result is not None:
        result.data = None
        result.positions = None
    if cache is not None:
        if result is None:
            # A skipped file leaves no text behind: cache the skip only if the
            # file is still the one that was looked up before linting.
            if key is not None and cache.current_key(display, path, explicit) == key:
                cache.store(key, None)
        elif result.text is not None and inputs is not None and not _racy(inputs, started):
            cache.store(cache.file_key(display, explicit, result.text), result, inputs)
    return result


def _inputs(result: FileResult, display: str, path: Path, config: Config, services: Services | None) -> list | None:
    """[(path, state)] of the other files the rules looked at for this plan: split files, run configs.

    None when the result depends on more than files can show: a split behind a
    URI or a glob (the data checks' own cache keys those by version or ETag), or
    what rules.run.inputs says it cannot list (git's answer on a pinned commit)."""
    if not isinstance(result.data, dict):
        return []
    ctx = PlanContext(data=result.data, path=display, config=config, services=services or Services(), file=path)
    looked = run_inputs(ctx)  # the run configs and their rollouts' files (PL801, PL008, PL901-PL903, PL614)
    if looked is None:  # an unconfirmed pinned commit, a missing workspace directory: more than files show
        return None
    if any(r.scope == "files" and c in config.rules for c, r in RULES.items()):
        looked += source_inputs(ctx)  # the graders' source files (PL311)
    if any(r.scope == "data" and c in config.rules for c, r in RULES.items()):
        if remote_or_glob(ctx):
            return None
        looked += inputs(ctx)
    from planlint.engine.cache_dir import file_state  # only when caching (see lint_targets)

    return [(str(p), file_state(p)) for p in looked]


def _racy(inputs: list, started_ns: int) -> bool:
    limit = started_ns - RACY_SECONDS * 1_000_000_000
    return any(state is not None and max(state[1], state[2]) >= limit for _, state in inputs)


# --------------------------------------------------------------------------- the pool

Work = list[tuple[Target, "str | None"]]


def _in_pool(work: Work, config: Config, services: Services | None, cache: Any, workers: int) -> list[FileResult | None]:
    """The results of `work`, in order, linted by `workers` processes."""
    _prepare(config)
    if _can_fork():
        return _in_forked_children(work, config, services, cache, workers)
    return _in_spawned_pool(work, config, services, cache, workers)


def _prepare(config: Config) -> None:
    """Do once, before the workers start, what each would otherwise do on its first plan."""
    load_text("warm: up\n")  # imports the parser
    if "PL003" in config.rules:
        _compiled()


def _can_fork() -> bool:
    # fork: the children start with everything imported and prepared, at the
    # cost of a page-table copy. Linux only: macOS's system libraries are not
    # fork-safe, and Windows has no fork.
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def _in_forked_children(work: Work, config: Config, services: Services | None, cache: Any, workers: int) -> list[FileResult | None]:
    """Fork `workers` children; child k lints items k, k + workers, ... and pipes back its results.

    Lighter than a pool (no queues, no manager thread, no per-task pickling),
    and round-robin shares plans of varied sizes evenly.
    """
    import gc
    import pickle
    import signal

    children: list[tuple[int, int]] = []
    gc.freeze()  # the children's collector leaves the inherited objects (and their pages) alone
    try:
        for k in range(workers):
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: lint, send, and leave without running the parent's cleanup
                code = 0
                try:
                    os.close(read_end)
                    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
                    try:
                        payload = pickle.dumps((True, [_lint(target, key, config, services, cache) for target, key in work[k::workers]]), pickle.HIGHEST_PROTOCOL)
                        if cache is not None:
                            cache.flush()
                    except BaseException as exc:  # noqa: BLE001 - reported by the parent
                        payload = _pickled_error(exc)
                    with os.fdopen(write_end, "wb") as pipe:
                        pipe.write(payload)
                except BaseException:  # noqa: BLE001 - the parent sees a short message and says so
                    code = 1
                finally:
                    os._exit(code)
            os.close(write_end)
            children.append((pid, read_end))
    finally:
        gc.unfreeze()
    parts: list[list] = []
    unread = [read_end for _, read_end in children]
    reaped: set[int] = set()
    finished = False
    try:
        for pid, read_end in children:
            unread.remove(read_end)
            with os.fdopen(read_end, "rb") as pipe:
                payload = pipe.read()
            try:
                ok, value = pickle.loads(payload)
            except Exception:  # noqa: BLE001 - a child that died before sending everything
                reaped.add(pid)
                raise RuntimeError(f"a lint worker process ended without its results ({_exit_status(pid)})") from None
            if not ok:
                raise value
            parts.append(value)
        finished = True
    finally:
        for read_end in unread:
            os.close(read_end)
        for pid, _ in children:
            if pid in reaped:
                continue
            if not finished:  # an error or Ctrl-C: the others' work is not wanted
                try:
                    os.kill(pid, signal.SIGTERM)
                except OSError:
                    pass
            try:
                os.waitpid(pid, 0)
            except OSError:
                pass
    return [parts[index % workers][index // workers] for index in range(len(work))]


def _pickled_error(exc: BaseException) -> bytes:
    import pickle

    try:
        return pickle.dumps((False, exc), pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - an exception that cannot be pickled: keep its words
        return pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")), pickle.HIGHEST_PROTOCOL)


def _exit_status(pid: int) -> str:
    try:
        _, status = os.waitpid(pid, 0)
    except OSError:
        return "status unknown"
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.WEXITSTATUS(status)}"


# Elsewhere: a pool of spawned processes, each importing planlint once.
_worker: dict[str, Any] = {}


def _start_worker(config: Config, services: Services | None, cache: Any) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _worker["config"] = config
    _worker["services"] = services
    _worker["cache"] = cache


def _lint_chunk(chunk: Work) -> list[FileResult | None]:
    cache = _worker["cache"]
    results = [_lint(target, key, _worker["config"], _worker["services"], cache) for target, key in chunk]
    if cache is not None:
        cache.flush()  # one cache segment per chunk
    return results


def _in_spawned_pool(work: Work, config: Config, services: Services | None, cache: Any, workers: int) -> list[FileResult | None]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # A few chunks per worker: the slowest one finishes soon after the others.
    size = max(1, -(-len(work) // (workers * 4)))
    chunks = [work[start:start + size] for start in range(0, len(work), size)]
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker, initargs=(config, services, cache)) as pool:
        return [result for chunk in pool.map(_lint_chunk, chunks) for result in chunk]
