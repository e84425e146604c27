"""Per-file results, cached on disk and keyed on everything that decides them.

A cached result is served only for the same file text, linted under the same
display path and explicitness, from the same working directory, by the same
planlint (version and the installed package files), against the same schema,
with the same effective configuration (every Config field that can change a
finding, plus the content of a configured catalog) and the same per-run
services (the catalog as the rules see it; `parallel.services_fingerprint`),
and while the other files it was computed from (the split files the data
rules read) are as they were: size, modification and change time, inode.
Anything else is a miss, and so is every segment this machine did not write:
segments are sealed with the machine's key (`planlint.core.cache_seal`), so one
committed into the checkout's `.planlint_cache/` is ignored.

What is cached is `engine.lint_file`'s FileResult *before* `engine.finish`:
findings, suppressions with their use marks, and the plan name and its span,
which finish() needs for the cross-file rules (PL005, PL009, PL010). The plan
data and positions are not cached; the text is re-read (it is read anyway to
compute the key).

Layout: `<dir>/results/<run key>/<segment>.json` (the registry keeps its
answers in `<dir>/registry/`; the facts PL005 and PL507 read from plans a run
does not lint are in `<dir>/plan-facts/<run key>.json`: engine/plan_facts.py).
A run reads every segment of its run key once and writes the entries it adds as one new segment (one per
worker), so the cost is a few files per run, not one per plan. Segments
are written to a temporary file and moved into place with os.replace, and
never modified afterwards, so concurrent runs never see half a segment; a
segment that does not parse, or was written for another run key, is ignored.
When a run key holds more than MAX_SEGMENTS segments, the run that notices
merges them into one, dropping entries not used for MAX_AGE; a concurrent run
that misses a segment being merged only lints those files again. JSON rather
than pickle or marshal: a cache directory is data, never code. The directory
holds a `.gitignore` (`*`) and a CACHEDIR.TAG so it is neither committed nor
backed up, and deleting it is always safe.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from planlint import __version__
from planlint.core.atomic import write_atomically
from planlint.core.cache_seal import machine_key, read_sealed, seal
from planlint.core.config import Config
from planlint.core.loader import read_text
from planlint.core.model import Finding, FileResult
from planlint.core.positions import Span
from planlint.core.suppressions import Suppression
from planlint.engine.cache_dir import MARKERS, file_state
from planlint.engine.plan_facts import PlanFacts

FORMAT = 4  # 4: run configs the plan reports in (FileResult.attached)
MAX_SEGMENTS = 16
MAX_AGE = 30 * 24 * 3600  # seconds an entry is kept without being used
MISS: Any = object()  # lookup() found nothing usable (None means "cached: not a plan, skipped")

# Config fields that cannot change a file's findings (they decide where things are).
_CONFIG_NOT_IN_KEY = {"source", "root", "cache_dir", "exclude"}
# FileResult fields the entry does not carry: the key has the path, the text is re-read,
# data and positions are not needed after lint_file.
_RESULT_NOT_STORED = {"path", "text", "data", "positions"}
_FINDING_FIELDS = [f.name for f in dataclasses.fields(Finding) if f.name != "path"]


def _package_fingerprint() -> str:
    """Name, size and mtime of planlint's own files: an edited or reinstalled planlint misses."""
    root = Path(__file__).resolve().parent.parent  # the planlint package, every layer
    digest = hashlib.sha256()
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name == "__pycache__":
                continue
            if entry.is_dir():
                stack.append(Path(entry.path))
            elif entry.name.endswith((".py", ".json", ".yaml")):
                stat = entry.stat()
                digest.update(f"{os.path.relpath(entry.path, root)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _config_fingerprint(config: Config) -> dict:
    settings: dict[str, Any] = {}
    for field in dataclasses.fields(config):
        if field.name.startswith("_") or field.name in _CONFIG_NOT_IN_KEY:
            continue
        settings[field.name] = getattr(config, field.name)
    if config.catalog:
        try:
            settings["catalog content"] = hashlib.sha256(Path(config.catalog).read_bytes()).hexdigest()
        except OSError as exc:
            settings["catalog content"] = f"unreadable: {exc.__class__.__name__}"
    return settings


def run_key(config: Config) -> str:
    """What every entry of a run shares: planlint, its schema and the effective config."""
    schema = (Path(__file__).resolve().parent.parent / "data" / "plan.schema.json").read_bytes()
    parts = {
        "format": FORMAT,
        "cwd": os.getcwd(),  # relative paths (split files, messages) are resolved against it
        "planlint": __version__,
        "package": _package_fingerprint(),
        "schema": hashlib.sha256(schema).hexdigest(),
        "config": _config_fingerprint(config),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


class ResultCache:
    """Lookups and stores for one run (one config)."""

    def __init__(self, directory: str | os.PathLike, config: Config) -> None:
        self.root = Path(directory)
        self._bind(run_key(config))
        self.max_file_size = config.max_file_size
        self.seal_key = machine_key(config.root)
        self.writable = self.seal_key is not None  # no key: nothing is trusted, so nothing is kept
        self.hits = 0
        self.stores = 0
        self._entries: dict[str, Any] | None = None  # key -> {"t": time, "r": result}, read on first lookup
        self._segments: list[str] = []  # the segment files that were read
        self._pending: dict[str, Any] = {}
        self._used: set[str] = set()

    def _bind(self, key: str) -> None:
        self.key = key
        self.directory = self.root / "results" / key[:24]
        self._seed = hashlib.sha256(key.encode())

    def plan_facts(self) -> PlanFacts:
        """The facts of the plans this run reads but does not lint (PL005, PL507 on named files), kept beside the results."""
        return PlanFacts(self.root, self.key, self.seal_key)

    def add_to_key(self, services: str) -> None:
        """Make the run's services (e.g. the catalog the rules consult) part of every key; before any lookup."""
        if services:
            self._bind(hashlib.sha256(f"{self.key}\0{services}".encode()).hexdigest())

    def __getstate__(self) -> dict:  # a spawned worker gets the settings, not the entries
        state = dict(self.__dict__)
        state.update(_entries=None, _segments=[], _pending={}, _used=set())
        return state

    # ------------------------------------------------------------------ keys

    def file_key(self, display: str, explicit: bool, text: str) -> str:
        digest = self._seed.copy()
        digest.update(b"\0%d\0" % explicit)
        digest.update(display.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
        digest.update(text.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def current_key(self, display: str, path: Path, explicit: bool) -> str | None:
        """The key of the file as it is now; None when it cannot be read as text (never cached)."""
        text, problem = read_text(path, self.max_file_size)
        if problem is not None or text is None:
            return None
        return self.file_key(display, explicit, text)

    # ------------------------------------------------------------------ lookup

    def lookup(self, display: str, path: Path, explicit: bool) -> tuple[Any, str | None]:
        """(the cached FileResult, or None for "not a plan", or MISS; the file's key)."""
        text, problem = read_text(path, self.max_file_size)
        if problem is not None or text is None:
            return MISS, None
        key = self.file_key(display, explicit, text)
        if self._entries is None:
            self._load()
        entry = self._entries.get(key)  # type: ignore[union-attr]
        if entry is None:
            return MISS, key
        try:
            for name, state in entry.get("i", ()):
                if file_state(name) != state:
                    return MISS, key  # a file the result depends on (a split file) changed
            result = _decode(entry["r"], display, text)
        except (ValueError, KeyError, TypeError, IndexError, AttributeError):
            return MISS, key  # a damaged entry: ignore it
        self.hits += 1
        self._used.add(key)
        return result, key

    def _load(self) -> None:
        self._entries = {}
        if self.seal_key is None:
            return
        try:
            names = sorted(n for n in os.listdir(self.directory) if n.endswith(".json") and not n.startswith("."))
        except OSError:
            return
        for name in names:
            entries = self._read_segment(name)
            if entries is not None:
                self._entries.update(entries)
            self._segments.append(name)

    def _read_segment(self, name: str) -> dict | None:
        try:
            segment = read_sealed(os.path.join(self.directory, name), self.seal_key, "results", self.key)
            if segment is None or segment.get("run") != self.key or not isinstance(segment.get("entries"), dict):
                return None
            return segment["entries"]
        except (OSError, ValueError, AttributeError):
            return None  # gone (merged by another run), damaged, or not a segment

    # ------------------------------------------------------------------ store

    def store(self, key: str, result: FileResult | None, inputs: list | None = None) -> None:
        """Add `result` under `key`, the key of the exact text it was linted from; flush() writes it.

        `inputs`: [(path, file_state(path))] of the other files the result
        depends on, as they were while it was linted; a lookup checks them again.
        """
        if not self.writable:
            return
        if result is not None and any(f.code == "PL006" for f in result.findings):
            return  # a limit (time_budget) can depend on the machine's load: recompute
        try:
            encoded = _encode(result)
        except TypeError:
            return  # a field that JSON cannot hold: not cacheable
        entry: dict[str, Any] = {"t": int(time.time()), "r": encoded}
        if inputs:
            entry["i"] = [[name, state] for name, state in inputs]
        self._pending[key] = entry

    def flush(self) -> None:
        """Write the stored entries as one new segment."""
        if not self._pending or not self.writable:
            self._pending = {}
            return
        entries, self._pending = self._pending, {}
        if self._write_segment(entries) is not None:
            self.stores += len(entries)

    def _write_segment(self, entries: dict) -> str | None:
        try:
            payload = seal(self.seal_key, "results", self.key, {"format": FORMAT, "run": self.key, "entries": entries})
        except (TypeError, ValueError):
            return None
        final = os.path.join(self.directory, f"s-{time.time_ns()}-{os.getpid()}-{os.urandom(4).hex()}.json")
        try:
            self._ensure_directory()
            write_atomically(final, payload)
        except OSError:
            self.writable = False  # read-only checkout, full disk: lint on, uncached
            return None
        return os.path.basename(final)

    def _ensure_directory(self) -> None:
        if self.directory.is_dir():
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        # Out of git and backups, like the registry's answers beside us.
        for name, content in MARKERS:
            marker = self.root / name
            if not marker.exists():
                try:
                    marker.write_text(content, encoding="utf-8")
                except OSError:
                    pass

    # ------------------------------------------------------------------ housekeeping

    def compact(self) -> None:
        """Merge the segments into one when there are more than MAX_SEGMENTS."""
        if not self.writable:
            return
        try:
            names = sorted(n for n in os.listdir(self.directory) if n.endswith(".json") and not n.startswith("."))
        except OSError:
            return
        if len(names) <= MAX_SEGMENTS:
            return
        now = int(time.time())
        merged: dict[str, Any] = {}
        for name in names:
            for key, entry in (self._read_segment(name) or {}).items():
                if not isinstance(entry, dict) or "r" not in entry:
                    continue
                if key in self._used:
                    merged[key] = {"t": now, "r": entry["r"]}
                elif isinstance(entry.get("t"), int) and entry["t"] >= now - MAX_AGE:
                    merged[key] = entry
        if self._write_segment(merged) is None:
            return
        for name in names:  # segments written since the listing stay
            try:
                os.unlink(os.path.join(self.directory, name))
            except OSError:
                pass


# --------------------------------------------------------------------------- entry format


def _encode(result: FileResult | None) -> dict | None:
    if result is None:
        return None
    out: dict[str, Any] = {}
    for field in dataclasses.fields(result):
        name = field.name
        if name in _RESULT_NOT_STORED:
            continue
        value = getattr(result, name)
        if name == "findings":
            value = [[getattr(f, n) for n in _FINDING_FIELDS] for f in value]
        elif name == "suppressions":
            value = [[s.kind, s.codes, s.reason, list(s.span), list(s.targets), sorted(s.used), s.unknown] for s in value]
        elif name in ("name_span", "spend_span"):
            value = list(value) if value is not None else None
        elif name == "attached":  # run configs the plan names: their own path, text and findings
            value = [[other.path, other.text, _encode(other)] for other in value]
        elif isinstance(value, list) and all(isinstance(item, str) for item in value):
            value = list(value)  # notes, data_skipped
        elif not isinstance(value, (str, int, float, bool, type(None))):
            raise TypeError(f"FileResult.{name} is not cacheable")
        out[name] = value
    return out


def _decode(entry: dict | None, display: str, text: str) -> FileResult | None:
    if entry is None:
        return None
    values = dict(entry)
    values["findings"] = [Finding(path=display, **dict(zip(_FINDING_FIELDS, row, strict=True))) for row in entry["findings"]]
    values["suppressions"] = [
        Suppression(kind, list(codes), reason, Span(*span), tuple(targets), set(used), list(unknown))
        for kind, codes, reason, span, targets, used, unknown in entry["suppressions"]
    ]
    values["name_span"] = Span(*entry["name_span"]) if entry["name_span"] is not None else None
    values["spend_span"] = Span(*entry["spend_span"]) if entry.get("spend_span") is not None else None
    values["attached"] = [_decode(other, path, other_text) for path, other_text, other in entry.get("attached", ())]
    return FileResult(path=display, text=text, **values)
