"""The larger split read object by object, each object's result cached on its own.

When the larger split is several objects (shards of a remote URI, or a local
glob's matches), pass 2 of _scan reads each object as one piece: its leaks
with row numbers local to the object, like a worker's piece, merged in
object order. The piece of an object is cached under a key made of the check's
parameters, the content ids of every object of the smaller split and that
object's own id (version id, ETag or SHA-256), sealed with this machine's key
(core.cache_seal) like the other caches. On a re-run an object whose piece is
cached is not opened: after one shard of the larger split changes, only that
shard of it is read again (and the smaller split, whose index pass 2 needs).

A piece holds no 64-bit digest (they differ between runs): a duplicate input
is kept as its normalized text and digested again when the piece is used.
A piece whose sampled values are not plain JSON values (a Parquet timestamp)
is not cached; neither is one that skipped an oversized record.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Optional

from planlint.core.atomic import write_atomically
from planlint.core.cache_seal import read_sealed, seal
from planlint.services.split_data import _scan
from planlint.services.split_data._base import FILE, KINDS, Sample
from planlint.services.split_data._sources import RemoteObject, Source, _file_sha256

#: The seal's cache name for piece entries.
CACHE_NAME = "split-data-piece"

_PLAIN = (str, int, float, bool, type(None))


class PieceCache:
    """Where the pieces of one check are kept: `base` is the key material shared by all its objects."""

    def __init__(self, directory: Path, seal_key: bytes, version: int, base: dict, big_ids: Optional[list] = None) -> None:
        self.directory, self.seal_key, self.version = Path(directory) / "split-data" / "pieces", seal_key, version
        self.big_ids = big_ids  # each object's [name, id, size] (Source.identities()) when already known
        self.base = json.dumps(base, sort_keys=True)
        self.fresh: list[tuple[str, dict]] = []  # entries to write once the whole check has finished

    def key(self, item, position: int) -> Optional[str]:
        """The key of the piece of the larger split's object at `position`, or None when its content has no name."""
        if self.big_ids is not None:
            identity = self.big_ids[position]
        elif isinstance(item, RemoteObject):
            if item.identity is None:
                return None
            identity = [item.uri, item.identity, item.size]
        else:
            try:
                identity = [str(item), "sha256:" + _file_sha256(item), None]
            except OSError:
                return None
        material = self.base + "\0" + json.dumps(identity)
        return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()

    def read(self, key: str, index: "_scan.SmallIndex") -> Optional[tuple["_scan.BigResult", int]]:
        """The cached piece (and the bytes its reading counted) if this machine sealed it and it fits the index."""
        data = read_sealed(self.directory / f"{key}.json", self.seal_key, CACHE_NAME, key, 16 << 20)
        try:
            if not isinstance(data, dict) or data.get("version") != self.version:
                return None
            return _decode(data, index), int(data["bytes"])
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            return None

    def keep(self, key: str, piece: "_scan.BigResult", used: int) -> None:
        data = _encode(piece, used)
        if data is not None:
            data["version"] = self.version
            self.fresh.append((key, data))

    def write(self) -> None:
        for key, data in self.fresh:
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                write_atomically(self.directory / f"{key}.json", seal(self.seal_key, CACHE_NAME, key, data))
            except (OSError, ValueError, TypeError):
                pass  # a cache that cannot be written is only a slower next run
        self.fresh = []


def read_big_objects(spec: "_scan.SideSpec", index: "_scan.SmallIndex", source: Source, cache: PieceCache) -> "_scan.BigResult":
    """Pass 2 over a split of several objects, one piece per object, cached pieces not read again.

    The merged result is the one `_scan.read_big` gives for the whole split
    (rows numbered on from object to object, `source.starts` filled)."""
    _scan.last_stats.update(mode="pieces", workers=1, worker_peak_kb=[], fallback=None, cached_pieces=0)
    total = _scan.BigResult()
    source.starts = []
    absent: dict[str, int] = {}
    for position, item in enumerate(source.objects):
        offset = total.report.lines
        source.starts.append(offset)
        key = cache.key(item, position)
        cached = cache.read(key, index) if key is not None else None
        counter = getattr(item, "counter", None)
        if cached is not None:
            piece, used = cached
            if counter is not None:
                counter.add(used)  # data.max_bytes counts what an uncached run reads
            _scan.last_stats["cached_pieces"] += 1
        else:
            before = counter.used if counter is not None else 0
            piece = _scan.scan_unit(_scan.SideSpec(spec.split, item, spec.fmt, spec.gz, spec.fields, spec.cut), index, FILE)
            used = (counter.used - before) if counter is not None else 0
            if key is not None:
                cache.keep(key, piece, used)
        total.merge(piece, offset)
        for name in piece.report.absent_columns:
            absent[name] = absent.get(name, 0) + 1
        if total.report.input_field is None:
            total.report.input_field = piece.report.input_field
    total.report.absent_columns = [name for name, count in absent.items() if count == len(source.objects)]
    return total


# --------------------------------------------------------------------------
# a piece as JSON


def _encode(piece: "_scan.BigResult", used: int) -> Optional[dict]:
    report = piece.report
    if report.oversized.count:
        return None  # a limit cut this piece short: not the answer
    samples = {}
    for kind in KINDS:
        sample = getattr(report, kind)
        if not all(type(value) in _PLAIN for value in sample.values):
            return None
        samples[kind] = [sample.count, list(sample.rows), list(sample.values)]
    texts = piece.dup_texts
    if any(code not in texts for code in piece.dups):
        return None
    return {
        "bytes": used,
        "lines": report.lines,
        "rows": report.rows,
        "samples": samples,
        "input_field": report.input_field,
        "absent_columns": list(report.absent_columns),
        "leaked": [[key, first, count] for key, (first, count) in piece.leaked.items()],
        "dups": [[texts[code], first, count, shown] for code, (first, count, shown) in piece.dups.items()],
    }


def _decode(data: dict, index: "_scan.SmallIndex") -> "_scan.BigResult":
    piece = _scan.BigResult()
    report = piece.report
    report.lines, report.rows = int(data["lines"]), int(data["rows"])
    for kind in KINDS:
        count, rows, values = data["samples"][kind]
        sample = Sample()
        sample.count, sample.rows, sample.values = int(count), [int(row) for row in rows], list(values)
        setattr(report, kind, sample)
    field = data["input_field"]
    report.input_field = None if field is None else str(field)
    report.absent_columns = [str(name) for name in data["absent_columns"]]
    groups = index.packed_groups
    for key, first, count in data["leaked"]:
        if key not in groups:
            raise ValueError("a cached piece does not fit the index")
        piece.leaked[str(key)] = [int(first), int(count)]
    for text, first, count, shown in data["dups"]:
        code = _scan.digest(str(text))
        if code not in index.hashes:
            raise ValueError("a cached piece does not fit the index")
        piece.dups[code] = [int(first), int(count), str(shown)]
        piece.dup_texts[code] = str(text)
    return piece

