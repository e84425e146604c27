"""The splits of several objects read object by object, each object's result cached on its own.

When a split is several objects (shards of a remote URI, a local glob's
matches, or one remote object), each object is read on its own and what it
gives is cached under a key made of the check's parameters and that
object's own id (version id, ETag, generation or SHA-256), sealed with this
machine's key (core.cache_seal) like the other caches. On a re-run an object
whose entry is cached is not opened, so a run reads again only the objects
that changed:

- The smaller split (pass 1 of _scan) is cached as one *index part* per
  object: its group values with first row and row count, and its inputs as
  64-bit digests with their rows, rows local to the object. The digests are
  keyed BLAKE2b (`_scan.keyed_digest`, the key derived from the seal key):
  the same in every run on this machine, unlike the per-process `hash`
  that a run without cached parts uses. A part does not depend on the other
  split, so after a shard of the larger split changes the smaller split is
  not read again.
- The larger split (pass 2) is cached as one *piece* per object: its leaks
  against the smaller split's index, rows local to the object. A piece's key
  also holds the content ids of every object of the smaller split, so after
  the smaller split changes every object of the larger one is read again
  (its new rows must be compared with all of them), while the smaller
  split's unchanged objects still come from their parts.

A piece holds no digest: a duplicate input is kept as its normalized text and
digested again (with the index's digest) when the piece is used. An entry
whose sampled values are not plain JSON values (a Parquet timestamp) is not
cached; neither is one that skipped an oversized record, nor the index parts
of a smaller split of more than PART_SPLIT_MAX_ROWS input rows.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import sys
from array import array
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Optional

from planlint.core.atomic import write_atomically
from planlint.core.cache_seal import read_sealed, read_sealed_bytes, seal, seal_bytes
from planlint.services.split_data import _scan
from planlint.services.split_data._prefetch import Prefetch
from planlint.services.split_data._base import FILE, KINDS, FileReport, Sample
from planlint.services.split_data._sources import RemoteObject, Source, _file_sha256

#: The seal's cache names of piece and index-part entries.
CACHE_NAME = "split-data-piece"
PART_CACHE_NAME = "split-data-index-part"

#: A smaller split of more rows than this is not cached per object: its parts
#: (16 bytes a row, plus group values) and their keyed digests (~0.5 s per
#: million rows) would cost about what reading it again does, and memory
#: while it is read. The whole check's result is still cached.
PART_SPLIT_MAX_ROWS = 1 << 18

_PLAIN = (str, int, float, bool, type(None))


_HF_REVISION = re.compile(r"^(hf://[^/]+/[^/]+/[^/@]+)@[^/]+")


def content_identity(identity: list) -> list:
    """An object's [uri, id, size] as a cache key part: an `hf://` URI without its revision, since
    the id (the Hub's blob id or LFS SHA-256) names the content, and a new commit of the dataset
    must not make its unchanged files miss."""
    uri = identity[0]
    if isinstance(uri, str) and uri.startswith("hf://"):
        return [_HF_REVISION.sub(r"\1", uri), *identity[1:]]
    return list(identity)


class _ObjectCache:
    """Sealed entries, one per object, under `directory`; `base` is the key material shared by all of them."""

    name = CACHE_NAME
    folder = "pieces"
    max_bytes = 16 << 20
    raw = False  # sealed as bytes (core.cache_seal.seal_bytes): one JSON encoding, not a canonical one as well

    def __init__(self, directory: Path, seal_key: bytes, version: int, base: dict, ids: Optional[list] = None) -> None:
        self.directory, self.seal_key, self.version = Path(directory) / "split-data" / self.folder, seal_key, version
        self.ids = ids  # each object's [name, id, size] (Source.identities()) when already known
        self.base = json.dumps(base, sort_keys=True)
        self.fresh: list[tuple[str, Any]] = []  # sealed entries to write once the whole check has finished

    def key(self, item, position: int) -> Optional[str]:
        """The key of the entry of the object at `position`, or None when its content has no name."""
        if self.ids is not None:
            identity = self.ids[position]
        elif isinstance(item, RemoteObject):
            if item.identity is None:
                return None
            identity = [item.uri, item.identity, item.size]
        else:
            try:
                identity = [str(item), "sha256:" + _file_sha256(item), None]
            except OSError:
                return None
        material = self.base + "\0" + json.dumps(content_identity(identity))
        return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()

    def entry(self, key: str) -> Optional[dict]:
        """The entry stored under `key` if this machine sealed it for this version."""
        path = self.directory / f"{key}.json"
        if self.raw:
            body = read_sealed_bytes(path, self.seal_key, self.name, key, self.max_bytes)
            data = None if body is None else json.loads(body)
        else:
            data = read_sealed(path, self.seal_key, self.name, key, self.max_bytes)
        if not isinstance(data, dict) or data.get("version") != self.version:
            return None
        return data

    def add(self, key: str, data: Optional[dict]) -> None:
        """Seal an entry now (the sealed text is all that is kept), to be written by write()."""
        if data is None:
            return
        data["version"] = self.version
        try:
            if self.raw:
                body = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
                self.fresh.append((key, seal_bytes(self.seal_key, self.name, key, body)))
            else:
                self.fresh.append((key, seal(self.seal_key, self.name, key, data)))
        except (ValueError, TypeError):
            pass  # not encodable: not cached

    def write(self) -> None:
        for key, sealed in self.fresh:
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                write_atomically(self.directory / f"{key}.json", sealed)
            except OSError:
                pass  # a cache that cannot be written is only a slower next run
        self.fresh = []


class PieceCache(_ObjectCache):
    """The pieces of the larger split: its leaks against one smaller split (whose ids are in `base`)."""

    def read(self, key: str, index: "_scan.SmallIndex") -> Optional[tuple["_scan.BigResult", int]]:
        """The cached piece (and the bytes its reading counted) if this machine sealed it and it fits the index."""
        try:
            data = self.entry(key)
            return None if data is None else (_decode(data, index), int(data["bytes"]))
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            return None

    def keep(self, key: str, piece: "_scan.BigResult", used: int) -> None:
        self.add(key, _encode(piece, used))


class IndexPartCache(_ObjectCache):
    """The index parts of the smaller split; `digest` is the keyed digest their inputs are in."""

    name = PART_CACHE_NAME
    folder = "index-parts"
    max_bytes = 64 << 20
    raw = True

    def __init__(self, directory: Path, seal_key: bytes, version: int, base: dict, ids: Optional[list] = None) -> None:
        super().__init__(directory, seal_key, version, base, ids)
        self.rows: Optional[int] = 0  # rows of the split so far; None once over PART_SPLIT_MAX_ROWS
        self.digest = _scan.keyed_digest(hmac.new(seal_key, b"planlint split-data input digest", "sha256").digest())

    def read(self, key: str) -> Optional[tuple["_scan.SmallPart", int]]:
        try:
            data = self.entry(key)
            return None if data is None else (_decode_part(data), int(data["bytes"]))
        except (OSError, ValueError, KeyError, TypeError, IndexError, base64.binascii.Error):
            return None

    @property
    def wanted(self) -> bool:
        """Whether parts are still made: not once the split has proved larger than PART_SPLIT_MAX_ROWS."""
        return self.rows is not None

    def rows_left(self) -> int:
        return -1 if self.rows is None else PART_SPLIT_MAX_ROWS - self.rows

    def count(self, part: "_scan.SmallPart") -> None:
        """Count a part's rows (cached or read) towards PART_SPLIT_MAX_ROWS (a part read without its
        own index, `stable` None, went over it)."""
        if self.rows is not None:
            self.rows = PART_SPLIT_MAX_ROWS + 1 if part.stable is None else self.rows + len(part.rows)
            if self.rows > PART_SPLIT_MAX_ROWS:
                self.rows, self.fresh = None, []  # too large to be worth caching: nothing of it is kept

    def keep(self, key: str, part: "_scan.SmallPart", used: int) -> None:
        if self.rows is not None:
            self.add(key, _encode_part(part, used))


def read_small_objects(spec: "_scan.SideSpec", source: Source, cache: IndexPartCache) -> tuple["_scan.SmallIndex", FileReport]:
    """Pass 1 over a split of objects, one index part per object, cached parts not read again.

    The index is the one `_scan.read_small` gives for the whole split (rows
    numbered on from object to object, `source.starts` filled), except that
    its digests are the cache's keyed ones when any part came from the cache
    (the larger split is then digested alike: `index.digest`)."""
    _scan.last_stats.clear()
    keys = [cache.key(item, position) for position, item in enumerate(source.objects)]
    cached = {}
    for position, key in enumerate(keys):
        found = cache.read(key) if key is not None else None
        if found is not None:
            cached[position] = found
    stable = bool(cached)  # the index is in keyed digests: those of the cached parts
    _scan.last_stats["cached_parts"] = len(cached)
    digest = cache.digest if stable else _scan.digest
    index, report, whole = _scan.SmallIndex(), FileReport(), _scan.SmallPart()
    whole.groups = index.packed_groups  # filled in place: a copy of a 1M-value mapping would cost ~50 MB
    source.starts = []
    absent: dict[str, int] = {}
    specs = {position: _scan.SideSpec(spec.split, item, spec.fmt, spec.gz, spec.fields, spec.cut)
             for position, item in enumerate(source.objects) if position not in cached}
    with _read_ahead(specs):
        for position, item in enumerate(source.objects):
            offset = report.lines
            source.starts.append(offset)
            counter = getattr(item, "counter", None)
            if position in cached:
                part, used = cached.pop(position)
                cache.count(part)
                if counter is not None:
                    counter.add(used)  # data.max_bytes counts what an uncached run reads
                _merge_groups(whole.groups, part.groups, offset)
                whole.codes.extend(part.codes)
                whole.rows.extend(map(offset.__add__, part.rows) if offset else part.rows)
            else:
                before = counter.used if counter is not None else 0
                wanted = keys[position] is not None and cache.wanted
                part = _scan.index_unit(specs.pop(position), FILE, digest, cache.digest if wanted else None, cache.rows_left(), into=whole, offset=offset)
                if wanted:
                    cache.count(part)
                    cache.keep(keys[position], part, (counter.used - before) if counter is not None else 0)
            report.merge(part.report, offset)
            for name in part.report.absent_columns:
                absent[name] = absent.get(name, 0) + 1
            if report.input_field is None:
                report.input_field = part.report.input_field
    report.absent_columns = [name for name, count in absent.items() if count == len(source.objects)]
    index.digest = digest
    index.set_inputs(whole.codes, whole.rows)
    return index, report


@contextmanager
def _read_ahead(specs: dict):
    """Have the remote objects among `specs` (position -> SideSpec, in order) read ahead in a thread
    (_prefetch): each spec's `prefetched` is set to its report and batches. Local files are read in place."""
    remote = [spec for spec in specs.values() if isinstance(spec.path, RemoteObject)]
    if len(remote) < 1:
        yield None
        return
    ahead = Prefetch(remote)
    for number, spec in enumerate(remote):
        spec.prefetched = (ahead.reports[number], ahead.batches(number))
    try:
        yield ahead
    finally:
        ahead.close()


def _merge_groups(groups: dict[str, int], more: dict[str, int], offset: int) -> None:
    """Add an object's groups (first row + rows * ROWS_UNIT, rows local to it) to the split's, the object starting after `offset` rows."""
    common = groups.keys() & more.keys() if groups else ()
    earlier = {value: groups[value] for value in common}
    groups.update(more if not offset else {value: packed + offset for value, packed in more.items()})
    shift = _scan.ROWS_SHIFT
    for value, packed in earlier.items():
        groups[value] = packed + (more[value] >> shift << shift)  # its rows added; the first row stays the earlier object's


def read_big_objects(spec: "_scan.SideSpec", index: "_scan.SmallIndex", source: Source, cache: PieceCache) -> "_scan.BigResult":
    """Pass 2 over a split of several objects, one piece per object, cached pieces not read again.

    The merged result is the one `_scan.read_big` gives for the whole split
    (rows numbered on from object to object, `source.starts` filled)."""
    _scan.last_stats.update(mode="pieces", workers=1, worker_peak_kb=[], fallback=None, cached_pieces=0)
    total = _scan.BigResult()
    source.starts = []
    absent: dict[str, int] = {}
    keys = [cache.key(item, position) for position, item in enumerate(source.objects)]
    cached = {}
    for position, key in enumerate(keys):
        found = cache.read(key, index) if key is not None else None
        if found is not None:
            cached[position] = found
    specs = {position: _scan.SideSpec(spec.split, item, spec.fmt, spec.gz, spec.fields, spec.cut)
             for position, item in enumerate(source.objects) if position not in cached}
    with _read_ahead(specs):
        for position, item in enumerate(source.objects):
            offset = total.report.lines
            source.starts.append(offset)
            key = keys[position]
            counter = getattr(item, "counter", None)
            if position in cached:
                piece, used = cached.pop(position)
                if counter is not None:
                    counter.add(used)  # data.max_bytes counts what an uncached run reads
                _scan.last_stats["cached_pieces"] += 1
            else:
                before = counter.used if counter is not None else 0
                piece = _scan.scan_unit(specs.pop(position), index, FILE)
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


def _encode_report(report: FileReport, used: int) -> Optional[dict]:
    """What a part or piece records of its object's FileReport (None: not to be cached)."""
    if report.oversized.count:
        return None  # a limit cut this object short: not the answer
    samples = {}
    for kind in KINDS:
        sample = getattr(report, kind)
        if not all(type(value) in _PLAIN for value in sample.values):
            return None
        samples[kind] = [sample.count, list(sample.rows), list(sample.values)]
    return {
        "bytes": used,
        "lines": report.lines,
        "rows": report.rows,
        "samples": samples,
        "input_field": report.input_field,
        "absent_columns": list(report.absent_columns),
    }


def _decode_report(data: dict, report: FileReport) -> None:
    report.lines, report.rows = int(data["lines"]), int(data["rows"])
    for kind in KINDS:
        count, rows, values = data["samples"][kind]
        sample = Sample()
        sample.count, sample.rows, sample.values = int(count), [int(row) for row in rows], list(values)
        setattr(report, kind, sample)
    field = data["input_field"]
    report.input_field = None if field is None else str(field)
    report.absent_columns = [str(name) for name in data["absent_columns"]]


def _encode(piece: "_scan.BigResult", used: int) -> Optional[dict]:
    data = _encode_report(piece.report, used)
    texts = piece.dup_texts
    if data is None or any(code not in texts for code in piece.dups):
        return None
    data["leaked"] = [[key, first, count] for key, (first, count) in piece.leaked.items()]
    data["dups"] = [[texts[code], first, count, shown] for code, (first, count, shown) in piece.dups.items()]
    return data


def _decode(data: dict, index: "_scan.SmallIndex") -> "_scan.BigResult":
    piece = _scan.BigResult()
    _decode_report(data, piece.report)
    groups = index.packed_groups
    for key, first, count in data["leaked"]:
        if key not in groups:
            raise ValueError("a cached piece does not fit the index")
        piece.leaked[str(key)] = [int(first), int(count)]
    for text, first, count, shown in data["dups"]:
        code = index.digest(str(text))
        if code not in index.hashes:
            raise ValueError("a cached piece does not fit the index")
        piece.dups[code] = [int(first), int(count), str(shown)]
        piece.dup_texts[code] = str(text)
    return piece


def _encode_part(part: "_scan.SmallPart", used: int) -> Optional[dict]:
    data = _encode_report(part.report, used)
    if data is None or part.stable is None or len(part.stable) != len(part.rows):
        return None
    data["groups"] = part.groups
    data["codes"] = base64.b64encode(_little_endian(part.stable)).decode("ascii")
    data["code_rows"] = base64.b64encode(_little_endian(part.rows)).decode("ascii")
    return data


def _decode_part(data: dict) -> "_scan.SmallPart":
    part = _scan.SmallPart()
    _decode_report(data, part.report)
    groups = data["groups"]
    if not isinstance(groups, dict) or not all(type(key) is str and type(value) is int and value > 0 for key, value in groups.items()):
        raise ValueError("a cached part's groups are not text -> packed rows")
    part.groups = groups
    part.codes = _from_little_endian(base64.b64decode(data["codes"], validate=True))
    part.rows = _from_little_endian(base64.b64decode(data["code_rows"], validate=True))
    if len(part.codes) != len(part.rows):
        raise ValueError("a cached part's digests and rows differ in number")
    part.stable = part.codes
    return part


def _little_endian(values: array) -> bytes:
    if sys.byteorder == "little":
        return values.tobytes()
    swapped = array("q", values)
    swapped.byteswap()
    return swapped.tobytes()


def _from_little_endian(data: bytes) -> array:
    values = array("q")
    values.frombytes(data)  # ValueError: not a whole number of 64-bit values
    if sys.byteorder != "little":
        values.byteswap()
    return values
