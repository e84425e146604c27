"""The splits of several objects read object by object, each object's index part cached on its own.

When a split is several objects (shards of a remote URI, a local glob's
matches, or one remote object), each object is read on its own and what it
gives is cached as its *index part*, under a key made of the check's
parameters, the split's name and format, and that object's own id (version
id, ETag, generation or SHA-256), sealed with this machine's key
(core.cache_seal) like the other caches. A part is what reading the object
gives whichever pass reads it: its report (rows, skipped rows, rows without
a key, time leaks), its group values and every input's digest with their
rows, rows local to the object. It does not depend on the other split, so:

- in pass 1 (the smaller split, _scan) a cached part is the object's share of
  the index;
- in pass 2 (the larger split) a cached part is compared with the index
  (`match`) instead of reading the object again.

On a re-run an object whose part is cached is not opened, so a run reads
only the objects that changed, in either split. The digests are keyed
BLAKE2b (`_index.keyed_digest`, the key derived from the seal key): the same
in every run on this machine, so a split's objects are digested with it on
both sides (Python's per-process `hash` is used only when no object is
involved).

A part holds no text, so a duplicate input found from a part has none to
show: the text comes from the larger split's object when it is read, else
from the smaller split's object read in this run (`capture`), else from the
texts kept beside either object's part in the run that read it (the inputs
that were findings then: `_TextsCache`), else it has none (None: the rule
says "an input").

A part whose sampled values are not plain JSON values (a Parquet timestamp)
is not cached; neither is one that skipped an oversized record. Parts are
written as soon as their object is read: nothing of them is held until the
check ends.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
import sys
from array import array
from bisect import bisect_right
from contextlib import contextmanager
from itertools import accumulate, compress
from functools import partial
from pathlib import Path
from typing import Any, Optional

from planlint.core.atomic import write_atomically
from planlint.core.cache_seal import read_sealed_bytes, seal_chunks
from planlint.services.split_data import _index, _scan
from planlint.services.split_data._prefetch import Prefetch
from planlint.services.split_data._base import FILE, KINDS, FileReport, Sample, rows_from
from planlint.services.split_data._formats import iter_batches
from planlint.services.split_data._sources import Source, bytes_read, is_remote, object_identity, uncounted
from planlint.services.split_data._values import input_excerpt
from planlint.services.split_data.schemes import scheme_of

#: The seal's cache names of the entries.
PART_CACHE_NAME = "split-data-index-part"
TEXTS_CACHE_NAME = "split-data-index-texts"

#: At most this many finding texts are kept beside one object's part.
TEXTS_PER_OBJECT = 4096

_PLAIN = (str, int, float, bool, type(None))


def content_identity(identity: list) -> list:
    """An object's [uri or local path, id, size] as a cache key part: what its store says must not
    change for the part to still be the object's (schemes.Scheme.content_key)."""
    store = scheme_of(identity[0]) if isinstance(identity[0], str) else None
    return list(identity) if store is None else store.content_key(identity)


class _ObjectCache:
    """Sealed entries, one per object, under `directory`; `base` is the key material shared by all of them."""

    name: str  # the seal's cache name
    folder: str  # under <cache>/split-data/
    max_bytes: int  # an entry larger than this is not read

    def __init__(self, directory: Path, seal_key: bytes, version: int, base: dict, ids: Optional[list] = None) -> None:
        self.directory, self.seal_key, self.version = Path(directory) / "split-data" / self.folder, seal_key, version
        self.ids = ids  # each object's [name, id, size] (Source.identities()) when already known
        self.base = json.dumps(base, sort_keys=True)
        self.fresh: list[tuple[str, Any]] = []  # sealed entries to write once the whole check has finished

    def key(self, item, position: int) -> Optional[str]:
        """The key of the entry of the object at `position`, or None when its content has no name."""
        if self.ids is not None:
            identity = self.ids[position]
        else:
            try:
                identity = object_identity(item)
            except OSError:
                return None
            if identity is None:
                return None
        material = self.base + "\0" + json.dumps(content_identity(identity))
        return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()

    def body(self, key: str) -> Optional[bytes]:
        """The body stored under `key` if this machine sealed it."""
        return read_sealed_bytes(self.directory / f"{key}.json", self.seal_key, self.name, key, self.max_bytes)

    def entry(self, key: str) -> Optional[dict]:
        """The JSON entry stored under `key` if this machine sealed it for this version."""
        body = self.body(key)
        data = None if body is None else json.loads(body)
        if not isinstance(data, dict) or data.get("version") != self.version:
            return None
        return data

    def add(self, key: str, data: Optional[dict]) -> None:
        """Seal a JSON entry now (the sealed bytes are all that is kept), to be written by write()."""
        if data is None:
            return
        data["version"] = self.version
        try:
            body = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
        except (ValueError, TypeError):
            return  # not encodable: not cached
        self.add_body(key, body)

    def add_body(self, key: str, body: bytes | list[bytes]) -> None:
        """Seal a body (or its chunks) now, to be written by write()."""
        self.fresh.append((key, seal_chunks(self.seal_key, self.name, key, body if isinstance(body, list) else [body])))

    def write(self) -> None:
        for key, sealed in self.fresh:
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                write_atomically(self.directory / f"{key}.json", sealed)
            except OSError:
                pass  # a cache that cannot be written is only a slower next run
        self.fresh = []


class IndexPartCache(_ObjectCache):
    """The index parts of the objects of one split; `digest` is the keyed digest their inputs are in.

    A part is what reading the object gives, whichever pass reads it: its
    report, its group values with first row and count, every input's digest
    with its row (rows local to the object). It does not depend on the other
    split, so it serves pass 1 (the object's part of the index) and pass 2
    (compared with the index without reading the object: `match`) alike."""

    name = PART_CACHE_NAME
    folder = "index-parts"
    max_bytes = 1 << 30

    def __init__(self, directory: Path, seal_key: bytes, version: int, base: dict, ids: Optional[list] = None) -> None:
        super().__init__(directory, seal_key, version, base, ids)
        self.digest_key = hmac.new(seal_key, b"planlint split-data input digest", "sha256").digest()
        self.digest = _index.keyed_digest(self.digest_key)
        self.texts = _TextsCache(directory, seal_key, version, base, ids)
        self.keys: list[Optional[str]] = []  # each object's key (filled by the read_* functions)
        self.read_now: set[int] = set()  # the positions of the objects read in this run (not taken from their parts)

    def read(self, key: Optional[str]) -> Optional[tuple["_index.SmallPart", int]]:
        if key is None:
            return None
        try:
            body = self.body(key)
            return None if body is None else part_from_body(body, self.version)
        except (OSError, ValueError, KeyError, TypeError, IndexError, UnicodeError):
            return None

    def cached(self, keys: list[Optional[str]]) -> set[int]:
        """The positions that have a part to read (a regular file within the size limit): each part is
        read, and its seal checked, when its turn comes, so no more than one is held at a time; one that
        does not verify then is as if absent (its object is read in place)."""
        present = set()
        for position, key in enumerate(keys):
            try:
                info = os.lstat(self.directory / f"{key}.json") if key is not None else None
            except OSError:
                continue
            if info is not None and stat.S_ISREG(info.st_mode) and info.st_size <= self.max_bytes:
                present.add(position)
        return present

    def keep(self, key: Optional[str], part: "_index.SmallPart", used: int) -> None:
        """Seal and write the part now (nothing of it is held until the check ends); None: no key, not kept."""
        body = part_body(part, used, self.version) if key is not None else None
        if key is not None and body is not None:
            self.add_body(key, body)
            self.write()


class _TextsCache(_ObjectCache):
    """Beside each part: the excerpts of its inputs that were findings in the run that read the object."""

    name = TEXTS_CACHE_NAME
    folder = "index-texts"
    max_bytes = 16 << 20

    def read_texts(self, key: Optional[str]) -> dict[int, str]:
        if key is None:
            return {}
        try:
            data = self.entry(key)
            if data is None:
                return {}
            return {int(code): str(text) for code, text in data["texts"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return {}

    def keep_texts(self, key: Optional[str], texts: dict[int, str]) -> None:
        if key is None or not texts:
            return
        kept = dict(list(texts.items())[:TEXTS_PER_OBJECT])
        self.add(key, {"texts": {str(code): text for code, text in kept.items()}})
        self.write()


def read_small_objects(spec: "_scan.SideSpec", source: Source, cache: IndexPartCache,
                       keyed: bool = True) -> tuple["_index.SmallIndex", FileReport]:
    """Pass 1 over a split of objects, one index part per object, cached parts not read again.

    The index is the one `_scan.read_small` gives for the whole split (rows
    numbered on from object to object, `source.starts` filled), its digests
    the cache's keyed ones (`index.digest`: the larger split is digested
    alike). Without `keyed` (the larger split is a file, not cached object
    by object) and with no part cached, the index is in Python's faster
    per-process hash, and the keyed digests are computed for the parts only."""
    keys = cache.keys = [cache.key(item, position) for position, item in enumerate(source.objects)]
    cached = cache.cached(keys)
    digest = cache.digest if keyed or cached else _index.digest
    index, report, whole = _index.SmallIndex(), FileReport(), _index.SmallPart()
    whole.groups = index.packed_groups  # filled in place: a copy of a 1M-value mapping would cost ~50 MB
    source.starts = []
    absent: dict[str, int] = {}
    used_parts = 0
    specs = {position: spec.of(item) for position, item in enumerate(source.objects)}
    with _read_ahead({position: item for position, item in specs.items() if position not in cached}):
        for position, item in enumerate(source.objects):
            one = specs.pop(position)  # dropped once read
            offset = report.lines
            source.starts.append(offset)
            counter = getattr(item, "counter", None)
            found = cache.read(keys[position]) if position in cached else None
            if found is not None:
                part, used = found
                used_parts += 1
                if counter is not None:
                    counter.add(used)  # data.max_bytes counts what an uncached run reads
                _merge_groups(whole.groups, part.packed_groups(), offset)
                whole.codes.extend(part.codes)
                whole.rows.extend(map(offset.__add__, part.rows) if offset else part.rows)
            else:  # (or a part that could not be read after all: the object is read in place)
                cache.read_now.add(position)
                wanted = keys[position] is not None
                with rows_from(offset):
                    part = _scan.index_unit(one, FILE, digest, wanted, into=whole, offset=offset, own_digest=cache.digest)
                if wanted:
                    cache.keep(keys[position], part, bytes_read(item))
            del one
            report.merge(part.report, offset)
            for name in part.report.absent_columns:
                absent[name] = absent.get(name, 0) + 1
            if report.input_field is None:
                report.input_field = part.report.input_field
            del part, found
    spec.trace["cached_parts"] = used_parts
    report.absent_columns = [name for name, count in absent.items() if count == len(source.objects)]
    index.digest = digest
    index.digest_key = cache.digest_key if digest is cache.digest else None
    index.set_inputs(whole.codes, whole.rows)
    return index, report


@contextmanager
def _read_ahead(specs: dict):
    """Have the remote objects among `specs` (position -> SideSpec, in order) read ahead in a thread
    (_prefetch): each spec's `prefetched` is set to its report and batches. Local files are read in place."""
    remote = [spec for spec in specs.values() if is_remote(spec.path)]
    if not remote:
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
    shift = _index.ROWS_SHIFT
    for value, packed in earlier.items():
        groups[value] = packed + (more[value] >> shift << shift)  # its rows added; the first row stays the earlier object's


def read_big_objects(spec: "_scan.SideSpec", index: "_index.SmallIndex", source: Source, cache: Optional[IndexPartCache],
                     pool=None) -> "_index.BigResult":
    """Pass 2 over a split of several objects, one index part per object, cached parts not read again
    (`cache` None: nothing cached); the others are read by the worker processes of `pool` (a
    _workers.Pool) and this one when the pool can, else here.

    An object whose part is cached is compared with the index from its part
    (`match`); one that is read is compared as it is read, and its part is
    kept. The merged result is the one `_file_workers.read_big` gives for the whole
    split (rows numbered on from object to object, `source.starts` filled),
    except that an input found from a part has no text to show yet (None):
    `fill_texts` looks for one."""
    spec.trace.update(mode="pieces", workers=1, worker_peak_kb=[], fallback=None, cached_pieces=0)
    total = _index.BigResult()
    source.starts = []
    absent: dict[str, int] = {}
    keys: list[Optional[str]] = [cache.key(item, position) for position, item in enumerate(source.objects)] \
        if cache is not None else [None] * len(source.objects)
    if cache is not None:
        cache.keys = keys
    cached = cache.cached(keys) if cache is not None else set()
    specs = {position: spec.of(item) for position, item in enumerate(source.objects)}
    workers = pool.reader(spec, index, source, {position: keys[position] is not None for position in specs if position not in cached},
                          partial(_read_one, specs, index, keys), partial(_keep, cache, keys),
                          cache.version if cache is not None else None) if pool is not None else None
    with _read_ahead({position: item for position, item in specs.items() if position not in cached} if workers is None else {}):
        for position, item in enumerate(source.objects):
            offset = total.report.lines
            source.starts.append(offset)
            key = keys[position]
            counter = getattr(item, "counter", None)
            found = cache.read(key) if cache is not None and position in cached else None
            piece: Optional[_index.BigResult]
            if found is not None:
                part, used = found
                if counter is not None:
                    counter.add(used)  # data.max_bytes counts what an uncached run reads
                piece = match(part, index)
                del part, found
                spec.trace["cached_pieces"] += 1
            else:  # (or a part that could not be read after all: the object is read in place)
                if cache is not None:
                    cache.read_now.add(position)
                with rows_from(offset):
                    piece = workers.take(position) if workers is not None else None  # None: read here
                    if piece is None:  # (else its part was kept when it came)
                        if workers is not None:
                            piece = _read_one(specs, index, keys, position)
                        else:
                            piece = _scan.scan_unit(specs[position], index, FILE, keep_own=key is not None)
                        _keep(cache, keys, position, piece, bytes_read(item))
            specs.pop(position, None)  # dropped once read (_read_one has taken it already)
            total.merge(piece, offset)
            for name in piece.report.absent_columns:
                absent[name] = absent.get(name, 0) + 1
            if total.report.input_field is None:
                total.report.input_field = piece.report.input_field
    total.report.absent_columns = [name for name, count in absent.items() if count == len(source.objects)]
    return total


def match(part: "_index.SmallPart", index: "_index.SmallIndex") -> "_index.BigResult":
    """What scanning the object of `part` against `index` gives, without reading it (rows local to the
    object; no input has a text to show: None)."""
    piece = _index.BigResult()
    piece.report = part.report
    groups, keys = index.packed_groups, part.group_keys
    if keys and groups:
        _index.count_hits(piece.leaked, compress(range(len(keys)), map(groups.__contains__, keys)), keys, part.group_rows)
    if index.hashes and part.codes:
        _index.count_hits(piece.dups, index.input_hits(part.codes), part.codes, part.rows, None)
    return piece


def fill_texts(result: "_index.BigResult", index: "_index.SmallIndex", small_spec: "_scan.SideSpec", small: Source,
               small_cache: Optional[IndexPartCache], big: Source, big_cache: IndexPartCache) -> None:
    """Give each duplicate input found from a cached part (no text yet) the text a message shows,
    and keep the texts found so beside the parts of the smaller split's objects read in this run.

    The text is the input as the larger split's row has it when that object
    is read; else the one kept beside the larger object's or the smaller
    object's part in a run that read it (the inputs that were findings
    then); else the smaller split's row's, read again when its object (or
    its plain file) was read in this run anyway; failing all of these (an
    object whose findings were never met while it was read), it stays None."""
    missing = [code for code, entry in result.dups.items() if entry[2] is None]
    if not missing:
        return
    kept: dict[tuple[int, int], dict[int, str]] = {}

    def texts_of(which: int, cache: IndexPartCache, position: int) -> dict[int, str]:
        found = kept.get((which, position))
        if found is None:
            key = cache.keys[position] if position < len(cache.keys) else None
            found = kept[(which, position)] = cache.texts.read_texts(key)
        return found

    wanted: dict[int, dict[int, int]] = {}  # object position (0: a plain file) -> its row -> the digest whose text it holds
    for code in missing:
        small_spec.budget.check()
        small_row = index.hashes[code]
        small_at = _position(small, small_row)
        text = texts_of(1, big_cache, _position(big, result.dups[code][0])).get(code)
        if text is None and small_cache is not None:
            text = texts_of(0, small_cache, small_at).get(code)
        if text is not None:
            result.dups[code][2] = text
        elif small.file is not None or (small_cache is not None and small_at in small_cache.read_now):  # read in this run
            wanted.setdefault(small_at, {})[small_row - small.starts[small_at]] = code
    for position, rows in wanted.items():
        found = _read_rows(small_spec, small, position, rows)
        for code, text in found.items():
            result.dups[code][2] = text
        if small_cache is not None and found:
            small_cache.texts.keep_texts(small_cache.keys[position], found)


def _read_rows(spec: "_scan.SideSpec", source: Source, position: int, rows: dict[int, int]) -> dict[int, str]:
    """The inputs at `rows` (row -> digest) of the `position`-th object of `source` (the smaller
    split; of a one-file split, its file), as excerpts: the object is read again, its bytes not
    counted against data.max_bytes (they were when it was read), within the time budget; {} when
    it cannot be."""
    item = uncounted(source.objects[position], spec.split)
    found: dict[int, str] = {}
    try:
        for batch_rows, _, _, values in iter_batches(item, spec.fmt, spec.gz, spec.fields, FileReport(), spec.budget):
            for row, value in zip(batch_rows, values):
                code = rows.get(row)
                if code is not None:
                    found[code] = input_excerpt(value)
            if len(found) == len(rows):
                break
    except Exception:  # a text is not worth a failed check: what was not read has none
        pass
    return found


def _position(source: Source, row: int) -> int:
    """The position of the object that holds `row` of the whole split."""
    starts = source.starts
    return max(0, bisect_right(starts, row - 1) - 1) if starts else 0


def _keep(cache: Optional[IndexPartCache], keys: list, position: int, piece: "_index.BigResult", used: int,
          body: Optional[bytes] = None) -> None:
    """Keep the index part of the object at `position`: `piece.own`, or `body`, the part as bytes
    (part_body) made by a worker process; and the texts of its findings. `piece.own` is dropped."""
    own, piece.own = piece.own, None
    key = keys[position]
    if cache is None or key is None:
        return
    if body is not None:
        cache.add_body(key, body)
        cache.write()
    elif own is not None:
        cache.keep(key, own, used)
    else:
        return
    cache.texts.keep_texts(key, {code: entry[2] for code, entry in piece.dups.items()})


def _read_one(specs: dict, index: "_index.SmallIndex", keys: list, position: int) -> "_index.BigResult":
    """Read the object at `position` of `specs` here, its batches read ahead in a thread (the
    objects are not read in order when worker processes read some of them); its own index part
    is kept as `own` when it has a cache key."""
    one = specs.pop(position)
    with _read_ahead({position: one}):
        return _scan.scan_unit(one, index, FILE, keep_own=keys[position] is not None)


# --------------------------------------------------------------------------
# a part as JSON


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


#: The arrays of a part, after its JSON header line: (name, typecode), each little-endian.
_SECTIONS = (("group_rows", "q"), ("codes", "q"), ("code_rows", "q"), ("key_lengths", "I"))


def part_body(part: "_index.SmallPart", used: int, version: int) -> Optional[list[bytes]]:
    """A part as bytes, in chunks: one line of JSON (its report, and the size of each section), then
    its arrays and its group values (UTF-8, one after the other; their lengths are a section)."""
    data = _encode_report(part.report, used)
    keys, rows = part.group_keys, part.group_rows
    if data is None or keys is None or rows is None or len(part.codes) != len(part.rows) or len(keys) != len(rows):
        return None
    group_rows = rows if isinstance(rows, array) else array("q", rows)
    arrays = {"group_rows": group_rows, "codes": part.codes, "code_rows": part.rows,
              "key_lengths": array("I", map(len, keys))}
    sections = [_little_endian(arrays[name]) for name, _ in _SECTIONS]
    try:
        sections.append("".join(keys).encode("utf-8", "surrogatepass"))
    except UnicodeError:
        return None
    data["version"] = version
    data["sections"] = [len(section) for section in sections]
    try:
        header = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
    except (ValueError, TypeError):
        return None
    return [header + b"\n", *sections]


def part_from_body(body: bytes, version: int) -> Optional[tuple["_index.SmallPart", int]]:
    """The part (and the bytes its reading counted) in `body`; None for another version.
    ValueError (and the like) when the body is not a part."""
    header, newline, rest = body.partition(b"\n")
    data = json.loads(header)
    if not newline or not isinstance(data, dict) or data.get("version") != version:
        return None
    sizes = data["sections"]
    if not isinstance(sizes, list) or len(sizes) != len(_SECTIONS) + 1 or not all(type(size) is int and size >= 0 for size in sizes) or sum(sizes) != len(rest):
        raise ValueError("a cached part's sections do not add up")
    part = _index.SmallPart()
    _decode_report(data, part.report)
    start, arrays = 0, {}
    for (name, typecode), size in zip(_SECTIONS, sizes):
        arrays[name] = _from_little_endian(rest[start:start + size], typecode)
        start += size
    text = rest[start:].decode("utf-8", "surrogatepass")
    lengths = arrays["key_lengths"]
    if sum(lengths) != len(text) or (lengths and min(lengths) == 0):
        raise ValueError("a cached part's group values do not add up")
    ends = list(accumulate(lengths))
    part.group_keys = list(map(text.__getitem__, map(slice, [0, *ends[:-1]], ends)))
    part.group_rows = arrays["group_rows"]
    part.codes, part.rows = arrays["codes"], arrays["code_rows"]
    if len(part.codes) != len(part.rows) or len(part.group_keys) != len(part.group_rows):
        raise ValueError("a cached part's values and rows differ in number")
    return part, int(data["bytes"])


def _little_endian(values: array) -> bytes:
    if sys.byteorder == "little":
        return values.tobytes()
    swapped = array(values.typecode, values)
    swapped.byteswap()
    return swapped.tobytes()


def _from_little_endian(data: bytes, typecode: str = "q") -> array:
    values = array(typecode)
    values.frombytes(data)  # ValueError: not a whole number of values
    if sys.byteorder != "little":
        values.byteswap()
    return values
