"""Near-duplicate inputs across two splits (PL212): the measure, and an index that finds them fast.

The measure is the *containment* of an eval input's word n-grams in a train
input's, |E & T| / |E|, over the sets of word n-grams (default 3) of the two
normalized inputs; a word is a run of letters, marks and digits (punctuation,
symbols and case do not count), and the smaller split's boilerplate n-grams
(a template many of its rows share) are left out. An eval input is compared
only when it has at least MIN_GRAMS n-grams of its own: shorter inputs are
PL209's alone.

Finding the pairs to measure: every input is cut into *chunks* of a few
words, after each word that ends in one of the smaller split's most common
word endings (content-defined, so an edit changes only the chunks around
it). Each input of the smaller split gets up to ANCHORS anchors, its rarest
chunks (by how rarely their words occur in a sample of the smaller split); a
row of the larger split is a candidate when one of its chunks is an anchor
(one hash probe per chunk, at C speed), and only candidates are measured.

Deterministic: Python's per-process hash only decides how quickly a dict
answers. The sample, the word endings, the rarities, the anchors and the
measure are computed from the texts alone, in integers, so the same inputs
give the same matches in every process and on every machine.
"""

from __future__ import annotations

import unicodedata
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain, compress, count, repeat
from operator import not_, sub

#: The measure's defaults (`data.near_duplicates`) and the n-gram sizes allowed.
DEFAULT_THRESHOLD = 0.5
DEFAULT_NGRAM = 3
MIN_NGRAM, MAX_NGRAM = 1, 13

#: An eval input is compared only with at least this many distinct n-grams
#: outside the boilerplate (for 3-grams: 10 words); shorter inputs are
#: compared exactly (PL209), since one edit changes most of a short input.
MIN_GRAMS = 8

#: Anchors per input of the smaller split, at most.
ANCHORS = 4

#: Rows of the smaller split sampled (evenly spaced) for word, chunk and n-gram frequencies.
SAMPLE_ROWS = 4096
#: An n-gram or chunk in at least this share of the sampled rows (and at least
#: BOILERPLATE_MIN_ROWS of them) is boilerplate: a shared template, not content.
BOILERPLATE_SHARE = 0.005
BOILERPLATE_MIN_ROWS = 5
#: Chunks end after words whose last byte is one of the fewest most common
#: last bytes that end at least this share of the sampled words.
CHUNK_END_SHARE = 0.25
#: An anchor's rarity, in bits (the sum over its words of log2(sampled words /
#: that word's count), rounded down), at least this much: about two words each
#: seen at most once in the sample, so that chance matches in a large split
#: stay rare. A small sample asks for less (see `finish`).
MIN_RARITY = 34

#: An input whose chunks are too common for MIN_RARITY still gets MIN_ANCHORS anchors,
#: its rarest chunks down to MIN_RARITY - RARITY_SLACK bits.
MIN_ANCHORS = 3
RARITY_SLACK = 10

#: Rows of the larger split probed together (one translation, one cut, one probe)
#: and of the smaller split anchored together.
PROBE_ROWS = 64
ANCHOR_ROWS = 1024

#: ASCII bytes for the measure's words: everything but letters and digits is a space
#: (NFKC and case-folding come first; A-Z stay letters either way).
_WORD_TABLE = bytes(
    byte if (48 <= byte <= 57 or 65 <= byte <= 90 or 97 <= byte <= 122 or byte >= 128) else 32 for byte in range(256)
)
#: ASCII bytes for chunks: control characters become spaces, punctuation and symbols go.
_CHUNK_TABLE = bytes(32 if byte < 32 or byte == 127 else byte for byte in range(256))
_CHUNK_DELETE = bytes(byte for byte in range(33, 127) if not (48 <= byte <= 57 or 65 <= byte <= 90 or 97 <= byte <= 122))
#: What a chunk-ending byte becomes, wherever it is (a chunk is only ever
#: compared whole), so that `split(_CUT)` cuts after each such word in one pass.
_END = b"\x01"
_CUT = b"\x01 "
#: Joins rows cut together: a piece of its own between two cuts.
_ROW = b"\x01 \x02\x01 "
_ROW_PIECE = b"\x02"
#: A cut as a word of its own, to add up each chunk's words at C speed.
_MARK = b" \x03 "
_MARK_WORD = b"\x03"


class _UnicodeFold(dict):
    """str.translate table for non-ASCII text: a character that is no letter, mark or digit
    becomes a space, or, `for_chunks`, goes when it is punctuation or a symbol."""

    def __init__(self, for_chunks: bool) -> None:
        super().__init__()
        self.for_chunks = for_chunks

    def __missing__(self, code: int) -> int | None:
        kind = unicodedata.category(chr(code))[0]
        value: int | None = code
        if kind not in "LMN":
            value = None if self.for_chunks and kind in "PS" else 32
        self[code] = value
        return value


_UNICODE_WORDS = _UnicodeFold(for_chunks=False)
_UNICODE_CHUNKS = _UnicodeFold(for_chunks=True)


@dataclass(frozen=True)
class NearDuplicateSettings:
    """`data.near_duplicates`: whether PL212 runs, its threshold and n-gram size."""

    enabled: bool = True
    threshold: float = DEFAULT_THRESHOLD
    ngram: int = DEFAULT_NGRAM


def words(text: str) -> list[bytes]:
    """The words the measure compares: runs of letters, marks and digits of a normalized input (UTF-8)."""
    if text.isascii():
        return text.encode("ascii").translate(_WORD_TABLE).split()
    return text.translate(_UNICODE_WORDS).encode("utf-8", "surrogatepass").split()


def ngrams(tokens: Sequence[bytes], n: int) -> Iterator[tuple[bytes, ...]]:
    """The word n-grams of `tokens`, in order (none when there are fewer than n)."""
    return zip(*[tokens[start:] for start in range(n)])


def similarity(eval_text: str, train_text: str, ngram: int = DEFAULT_NGRAM,
               boilerplate: frozenset[tuple[bytes, ...]] = frozenset()) -> float | None:
    """The measure for one pair of normalized inputs: the share of the eval input's
    n-grams (outside `boilerplate`) that the train input holds; None when the eval
    input has fewer than MIN_GRAMS of them (too short to compare)."""
    own = set(ngrams(words(eval_text), ngram)) - boilerplate
    if len(own) < MIN_GRAMS:
        return None
    return len(own.intersection(ngrams(words(train_text), ngram))) / len(own)


def _chunk_text(text: str) -> bytes:
    """A normalized input for chunking: UTF-8, punctuation and symbols gone, controls as spaces."""
    if text.isascii():
        return text.encode("ascii").translate(_CHUNK_TABLE, _CHUNK_DELETE)
    return text.translate(_UNICODE_CHUNKS).encode("utf-8", "surrogatepass")


@dataclass(frozen=True)
class Match:
    """An input of the smaller split (its `position` in the index) that a probed input near-duplicates."""

    position: int
    similarity: float


class NearIndex:
    """The smaller split's inputs, anchored for the probe.

    `add` the inputs (normalized texts, as PL209 compares them, with the
    caller's row ids), `finish`, then for each batch of the larger split's
    inputs `candidates` gives those that share an anchor and `matches` the
    indexed inputs each one near-duplicates. `indexed_is_eval` says which
    side is the measure's E (eval): the indexed inputs, or the probed ones.
    The texts are kept as one UTF-8 buffer (about their length in bytes
    each, plus 8), the anchors in one dict."""

    def __init__(self, settings: NearDuplicateSettings = NearDuplicateSettings(), indexed_is_eval: bool = True) -> None:
        if not MIN_NGRAM <= settings.ngram <= MAX_NGRAM:
            raise ValueError(f"ngram must be from {MIN_NGRAM} to {MAX_NGRAM}")
        if not 0.0 < settings.threshold <= 1.0:
            raise ValueError("threshold must be above 0 and at most 1")
        self.settings = settings
        self.indexed_is_eval = indexed_is_eval
        self.rows = array("q")  # the caller's row id of each indexed input
        self._texts = bytearray()  # the normalized texts, UTF-8, one after another
        self._ends = array("q")  # where each ends in _texts
        self.boilerplate: frozenset[tuple[bytes, ...]] = frozenset()  # n-grams the measure leaves out
        self.chunk_ends: tuple[bytes, ...] = ()  # the last bytes of words after which chunks end
        self._cut_table = self._ascii_cut_table = bytes(range(256))
        # anchor -> the position of the input it anchors, or ~k: the inputs self._shared[k]
        self._anchors: dict[bytes, int] = {}
        self._shared: list[list[int]] = []

    # ------------------------------------------------------------------
    # building

    def add(self, rows: Iterable[int], texts: Iterable[str]) -> None:
        """Index these inputs (normalized texts; '' for none) with the caller's row ids."""
        buffer, ends = self._texts, self._ends
        for row, text in zip(rows, texts):
            if text:
                self.rows.append(row)
                buffer += text.encode("utf-8", "surrogatepass")
                ends.append(len(buffer))

    def __len__(self) -> int:
        return len(self._ends)

    def text(self, position: int) -> str:
        """The normalized text of the indexed input at `position`."""
        start = self._ends[position - 1] if position else 0
        return self._texts[start:self._ends[position]].decode("utf-8", "surrogatepass")

    def _all_texts(self, step: int = 1) -> Iterator[str]:
        return map(self.text, range(0, len(self), step))

    def finish(self) -> None:
        """Sample the inputs for word, chunk and n-gram frequencies, then anchor each input."""
        sample = list(self._all_texts(max(1, -(-len(self) // SAMPLE_ROWS))))
        boilerplate_rows = max(BOILERPLATE_MIN_ROWS, -(-len(sample) * BOILERPLATE_SHARE // 1))
        word_counts: Counter[bytes] = Counter()
        gram_rows: Counter[tuple[bytes, ...]] = Counter()
        n = self.settings.ngram
        for text in sample:
            word_counts.update(_chunk_text(text).split())
            gram_rows.update(set(ngrams(words(text), n)))
        self.boilerplate = frozenset(gram for gram, rows in gram_rows.items() if rows >= boilerplate_rows)
        del gram_rows
        self.chunk_ends = _common_endings(word_counts)
        self._cut_table = bytes(_END[0] if bytes((byte,)) in self.chunk_ends else byte for byte in range(256))
        # for ASCII text, chunking and the cuts in one translation
        self._ascii_cut_table = bytes(_END[0] if bytes((byte,)) in self.chunk_ends else _CHUNK_TABLE[byte] for byte in range(256))
        # rarities are looked up by a cut chunk's words without their ending bytes (split(_CUT)
        # drops the last word's): the same for a word wherever it is
        ending_bytes = b"".join(self.chunk_ends)
        cut_counts: Counter[bytes] = Counter()
        for word, seen in word_counts.items():
            cut_counts[word.translate(None, ending_bytes)] += seen
        del word_counts
        total = max(1, sum(cut_counts.values()))
        # a word's rarity in bits, in integers (the same on every machine); unseen words are rarest
        rarity = {word: (total // seen).bit_length() - 1 for word, seen in cut_counts.items()}
        del cut_counts
        unseen = (total * 2).bit_length() - 1
        rarity[_ROW_PIECE] = -(1 << 30)  # a row's break is no chunk
        rarity[_MARK_WORD] = 0
        chunk_rows: Counter[bytes] = Counter()
        for text in sample:
            chunk_rows.update(set(self._cut(text).split(_CUT)))
        boilerplate_chunks = frozenset(chunk for chunk, rows in chunk_rows.items() if rows >= boilerplate_rows)
        del chunk_rows, sample
        self._anchor_all(rarity, unseen, max(1, min(MIN_RARITY, 2 * unseen - 2)), boilerplate_chunks)

    def _cut(self, text: str) -> bytes:
        """A normalized input for chunking, a cut (`_CUT`) after every word that ends a chunk."""
        if text.isascii():
            return text.encode("ascii").translate(self._ascii_cut_table, _CHUNK_DELETE)
        return _chunk_text(text).translate(self._cut_table)

    def _cut_rows_text(self, texts: Sequence[str]) -> bytes:
        """Several inputs cut for chunking, one after another, each followed by a `_ROW`
        (so a `_ROW_PIECE` after its chunks, then an empty piece at the very end)."""
        if all(map(str.isascii, texts)):
            cut = _ROW.join(map(bytes.translate, map(str.encode, texts), repeat(self._ascii_cut_table), repeat(_CHUNK_DELETE)))
        else:
            cut = _ROW.join(map(self._cut, texts))
        return cut + _ROW

    def _cut_rows(self, texts: Sequence[str]) -> list[bytes]:
        """The chunks of several inputs, in order, each input's followed by a `_ROW_PIECE`."""
        return self._cut_rows_text(texts).split(_CUT)

    def _anchor_all(self, rarity: dict[bytes, int], unseen: int, least: int, boilerplate_chunks: frozenset[bytes]) -> None:
        """Give each input up to ANCHORS of its chunks: the rarest, none boilerplate, none under
        `least` bits but for its first MIN_ANCHORS (down to RARITY_SLACK bits less); equal ones
        in the order they come (stable sorts), so the same everywhere."""
        floor = max(1, least - RARITY_SLACK)
        anchor_chunks: list[bytes] = []
        anchor_positions: list[int] = []
        for start in range(0, len(self), ANCHOR_ROWS):
            cut = self._cut_rows_text(list(map(self.text, range(start, min(start + ANCHOR_ROWS, len(self))))))
            pieces = cut.split(_CUT)
            # each chunk's rarity, the sum of its words', at C speed: running sums over all
            # the words (ending bytes dropped, as in `rarity`), read at the cuts
            tokens = cut.replace(_CUT, _MARK).translate(None, _END).split()
            running = list(accumulate(map(rarity.get, tokens, repeat(unseen))))
            at_cuts = list(map(running.__getitem__, compress(count(), map(_MARK_WORD.__eq__, tokens))))
            scores = list(map(sub, at_cuts, chain((0,), at_cuts)))
            eligible = list(compress(count(), map(floor.__le__, scores)))
            if boilerplate_chunks:
                eligible = list(compress(eligible, map(not_, map(boilerplate_chunks.__contains__, map(pieces.__getitem__, eligible)))))
            breaks = compress(count(), map(_ROW_PIECE.__eq__, pieces))
            first = 0
            for position, row_end in zip(count(start), breaks):
                last = bisect_left(eligible, row_end, first)
                chosen = eligible[first:last]
                first = last
                if len(chosen) > 1:
                    chosen = sorted(chosen, key=scores.__getitem__, reverse=True)[:ANCHORS]
                    # chunks under `least` only as an input's first two anchors (an input of common words)
                    while len(chosen) > MIN_ANCHORS and scores[chosen[-1]] < least:
                        chosen.pop()
                anchor_chunks.extend(map(pieces.__getitem__, chosen))
                anchor_positions.extend(repeat(position, len(chosen)))
        anchors = self._anchors = dict(zip(anchor_chunks, anchor_positions))
        if len(anchors) == len(anchor_chunks):
            return
        # an anchor of several inputs: all of them, in order
        repeated = {chunk for chunk, times in Counter(anchor_chunks).items() if times > 1}
        owners: dict[bytes, list[int]] = {}
        for chunk, position in compress(zip(anchor_chunks, anchor_positions), map(repeated.__contains__, anchor_chunks)):
            known = owners.setdefault(chunk, [])
            if not known or known[-1] != position:
                known.append(position)
        for chunk, positions in owners.items():
            if len(positions) == 1:
                anchors[chunk] = positions[0]
            else:
                anchors[chunk] = ~len(self._shared)
                self._shared.append(positions)

    # ------------------------------------------------------------------
    # probing

    @property
    def anchors(self) -> int:
        """How many distinct anchors the index holds."""
        return len(self._anchors)

    def candidates(self, texts: Sequence[str]) -> list[int]:
        """The positions in `texts` (normalized inputs of the larger split) that share an anchor."""
        anchors = self._anchors.keys()
        if not anchors:
            return []
        found: list[int] = []
        for start in range(0, len(texts), PROBE_ROWS):
            pieces = self._cut_rows(texts[start:start + PROBE_ROWS])
            if anchors.isdisjoint(pieces):
                continue
            breaks = list(compress(count(), map(_ROW_PIECE.__eq__, pieces)))
            for at in compress(count(), map(anchors.__contains__, pieces)):
                row = start + bisect_left(breaks, at)
                if not found or found[-1] != row:
                    found.append(row)
        return found

    def matches(self, text: str) -> list[Match]:
        """The indexed inputs that `text` (a normalized input of the larger split) near-duplicates,
        by position, each with its similarity (at or above the threshold)."""
        positions: set[int] = set()
        anchors, shared = self._anchors, self._shared
        for chunk in self._cut(text).split(_CUT):
            known = anchors.get(chunk)
            if known is None:
                continue
            if known >= 0:
                positions.add(known)
            else:
                positions.update(shared[~known])
        if not positions:
            return []
        n, threshold, boilerplate = self.settings.ngram, self.settings.threshold, self.boilerplate
        probed = set(ngrams(words(text), n))
        if not self.indexed_is_eval:
            probed -= boilerplate
            if len(probed) < MIN_GRAMS:
                return []
        found = []
        for position in sorted(positions):
            indexed = set(ngrams(words(self.text(position)), n))
            if self.indexed_is_eval:
                indexed -= boilerplate
                if len(indexed) < MIN_GRAMS:
                    continue
                value = len(indexed & probed) / len(indexed)
            else:
                value = len(probed & indexed) / len(probed)
            if value >= threshold:
                found.append(Match(position, value))
        return found


def _common_endings(word_counts: Counter[bytes]) -> tuple[bytes, ...]:
    """The fewest most common last bytes of words that end at least CHUNK_END_SHARE of them
    (ties to the lower byte, so the choice is the same everywhere)."""
    endings: Counter[bytes] = Counter()
    for word, seen in word_counts.items():
        endings[word[-1:]] += seen
    total, covered, chosen = sum(endings.values()), 0, []
    for ending, seen in sorted(endings.items(), key=lambda item: (-item[1], item[0])):
        if covered >= total * CHUNK_END_SHARE:
            break
        chosen.append(ending)
        covered += seen
    return tuple(chosen)
