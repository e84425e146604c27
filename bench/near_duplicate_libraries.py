"""PL212's job done by a MinHash-LSH library, for bench/data_leakage.py --near-duplicates.

Each side reads both JSON Lines files the way a team would script it: every
row's `prompt`, normalized as PL209 and PL212 do (NFKC, case-folded,
whitespace collapsed), its word 3-grams (words as PL212 cuts them) as the
shingles, a MinHash signature of NUM_PERM permutations, the eval rows in an
LSH index (BANDS bands), every train row queried. An eval row is found when a
train row's estimated Jaccard similarity with it is at least `threshold` and
its input is not an exact duplicate of that train row's (PL209's job). The
result has the planlint side's shape: the found eval rows (1-based) with the
first train row of each.

* rensa (Rust): RMinHash signatures computed a batch of rows at a time
  (`RMinHash.from_token_sets`), RMinHashLSH.
* datasketch (Python and NumPy): MinHash.update_batch per row, MinHashLSH.
  About 250 us a row here, so it is left out unless asked for.
"""

from __future__ import annotations

import json
import sys
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NUM_PERM = 128
BANDS = 32  # 4 rows a band: the S-curve's midpoint near Jaccard 0.42
BATCH = 4096


def _normalized(text: Any) -> str:
    if not isinstance(text, str):
        return ""
    if text.isascii():
        return " ".join(text.lower().split())
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _rows(path: str, field: str):
    """(row number, normalized input) of every JSON Lines row, in batches."""
    batch: list[tuple[int, str]] = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            try:
                text = _normalized(json.loads(line).get(field))
            except (ValueError, AttributeError):
                continue
            if text:
                batch.append((number, text))
            if len(batch) >= BATCH:
                yield batch
                batch = []
    if batch:
        yield batch


def _shingles(text: str) -> list[bytes]:
    from planlint.services.near_duplicates import ngrams, words

    return list(map(b" ".join, ngrams(words(text), 3)))


def run(library: str, train: str, eval_: str, field: str, threshold: float) -> dict:
    """Find the eval rows with a near-duplicate in train; time it (reading and parsing included)."""
    if str(ROOT / "src") not in sys.path:
        sys.path.insert(0, str(ROOT / "src"))
    start = time.perf_counter()
    side = {"rensa": _Rensa, "datasketch": _Datasketch}[library](threshold)
    eval_texts: dict[int, str] = {}
    for batch in _rows(eval_, field):
        side.index([number for number, _ in batch], [_shingles(text) for _, text in batch])
        eval_texts.update(batch)
    found: dict[int, int] = {}
    for batch in _rows(train, field):
        for (number, text), similar in zip(batch, side.query([_shingles(text) for _, text in batch])):
            for eval_row in similar:
                if eval_row not in found and eval_texts[eval_row] != text:
                    found[eval_row] = number
    return {"seconds": time.perf_counter() - start, "found": sorted(found.items()), "library": side.version}


class _Rensa:
    def __init__(self, threshold: float) -> None:
        import rensa
        from rensa import RMinHash, RMinHashLSH

        self.version = f"rensa {getattr(rensa, '__version__', '') or _version('rensa')}"
        self.minhashes: Callable[[list[list[bytes]]], list[Any]] = lambda sets: RMinHash.from_token_sets(sets, NUM_PERM, 42)
        self.lsh = RMinHashLSH(threshold, NUM_PERM, BANDS)
        self.threshold = threshold
        self.signatures: dict[int, Any] = {}

    def index(self, numbers: list[int], shingles: list[list[bytes]]) -> None:
        for number, minhash in zip(numbers, self.minhashes(shingles)):
            self.lsh.insert(number, minhash)
            self.signatures[number] = minhash

    def query(self, shingles: list[list[bytes]]) -> list[list[int]]:
        out = []
        for minhash in self.minhashes(shingles):
            keys = self.lsh.query(minhash)
            out.append(sorted(key for key in keys if minhash.jaccard(self.signatures[key]) >= self.threshold) if keys else [])
        return out


class _Datasketch:
    def __init__(self, threshold: float) -> None:
        from datasketch import MinHash, MinHashLSH

        self.version = f"datasketch {_version('datasketch')}"
        self.MinHash = MinHash
        self.lsh = MinHashLSH(threshold=threshold, num_perm=NUM_PERM)
        self.threshold = threshold
        self.signatures: dict[int, Any] = {}

    def _minhash(self, shingles: list[bytes]):
        minhash = self.MinHash(num_perm=NUM_PERM, seed=42)
        minhash.update_batch(shingles)
        return minhash

    def index(self, numbers: list[int], shingles: list[list[bytes]]) -> None:
        for number, row in zip(numbers, shingles):
            minhash = self._minhash(row)
            self.lsh.insert(number, minhash)
            self.signatures[number] = minhash

    def query(self, shingles: list[list[bytes]]) -> list[list[int]]:
        out = []
        for row in shingles:
            minhash = self._minhash(row)
            keys = self.lsh.query(minhash)
            out.append(sorted(key for key in keys if minhash.jaccard(self.signatures[key]) >= self.threshold))
        return out


def _version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "?"
