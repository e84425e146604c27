"""Rows for the near-duplicate benchmark (PL212): inputs of 20-60 words, light edits planted.

`NearDuplicateRows` makes, with a fixed seed, the inputs of a train and an eval
split: sentences of words drawn from a Zipfian vocabulary (the most frequent
words short, as in natural language), capitalised, with commas and full stops;
a share of the rows of both splits begins with the same instruction (a
template shared by distinct rows, which must not make them near-duplicates).
Then `planted` eval inputs are copied into train, each with 1-3 light edits of
these kinds:

* substitution: a word replaced by another word of the vocabulary;
* insertion: a word inserted;
* deletion: a word removed;
* punctuation: a comma or full stop added, removed or changed to `;`, `?`, `!`;
* casing: one word, or the whole input, in other case.

Every planted copy has at least one edit that is not casing, so none is an
exact duplicate after PL209's normalisation (case, spacing, Unicode): each is
a near-duplicate only, and the recall figure counts PL212's findings alone.
Everything else is distinct, so any other finding is a false one.

Standard library only: the benchmark's files are written by data_leakage.py.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

#: The kinds of edit planted, in the order the benchmark reports them.
EDIT_KINDS = ("substitution", "insertion", "deletion", "punctuation", "casing")

#: The instruction a share of the rows of both splits starts with (`template_share`).
TEMPLATE = "You are a careful support agent. Read the customer's message below and answer it in full:"

_TEMPLATE_WORDS = len(TEMPLATE.split())
_LETTERS = "etaoinshrdlcumwfgypbvkjxqz"
_PUNCTUATION_SWAPS = (";", "?", "!", ":")


@dataclass
class PlantedEdit:
    """One eval input copied into train with edits: which rows, which kinds."""

    eval_index: int  # 0-based row of the eval split
    train_index: int  # 0-based row of the train split
    kinds: tuple[str, ...]


@dataclass
class NearDuplicateRows:
    """The inputs of both splits, generated on construction (see the module docstring)."""

    train_rows: int
    eval_rows: int
    planted: int = 100
    seed: int = 20261201
    template_share: float = 0.3
    vocabulary_size: int = 500_000
    min_words: int = 20
    max_words: int = 60
    train: list[str] = field(init=False, repr=False)
    eval: list[str] = field(init=False, repr=False)
    edits: list[PlantedEdit] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.planted > min(self.train_rows, self.eval_rows):
            raise ValueError(f"cannot plant {self.planted} rows in {self.train_rows} train / {self.eval_rows} eval rows")
        self._rnd = random.Random(self.seed)
        self._words = self._vocabulary()
        weights = [1.0 / (rank + 1) ** 1.05 for rank in range(len(self._words))]
        self._cumulative = list(_running_sum(weights))
        self.eval = [self._row() for _ in range(self.eval_rows)]
        self.train = [self._row() for _ in range(self.train_rows)]
        eval_picks = _spread(self.planted, self.eval_rows, 11)
        train_picks = _spread(self.planted, self.train_rows, 17)
        self.edits = []
        for eval_index, train_index in zip(eval_picks, train_picks):
            text, kinds = self._edited(self.eval[eval_index])
            self.train[train_index] = text
            self.edits.append(PlantedEdit(eval_index, train_index, kinds))

    # ----------------------------------------------------------------------

    def _vocabulary(self) -> list[str]:
        """Distinct lower-case words, in rank order: frequent words are short."""
        rnd, seen, words = self._rnd, set(), []
        while len(words) < self.vocabulary_size:
            rank = len(words) + 1
            length = max(1, min(14, int(rnd.gauss(1.5 + rank.bit_length() * 0.5, 1.2))))
            word = "".join(rnd.choices(_LETTERS, weights=range(len(_LETTERS), 0, -1), k=length))
            if word not in seen:
                seen.add(word)
                words.append(word)
        return words

    def _draw(self, count: int) -> list[str]:
        return self._rnd.choices(self._words, cum_weights=self._cumulative, k=count)

    def _row(self) -> str:
        rnd = self._rnd
        templated = rnd.random() < self.template_share
        longest = self.max_words - (_TEMPLATE_WORDS if templated else 0)
        words = self._draw(rnd.randint(min(self.min_words, longest), longest))
        sentences, start = [], 0
        while start < len(words):
            end = min(len(words), start + rnd.randint(6, 16))
            sentence = words[start:end]
            if len(sentence) > 5 and rnd.random() < 0.5:
                comma = rnd.randrange(2, len(sentence) - 2)
                sentence[comma] += ","
            sentences.append(" ".join(sentence).capitalize() + rnd.choice(".....?"))
            start = end
        text = " ".join(sentences)
        if templated:
            text = TEMPLATE + " " + text
        return text

    def _edited(self, text: str) -> tuple[str, tuple[str, ...]]:
        """`text` with 1-3 edits, at least one of them not casing."""
        rnd = self._rnd
        kinds = [rnd.choice(EDIT_KINDS) for _ in range(rnd.randint(1, 3))]
        if all(kind == "casing" for kind in kinds):
            kinds[0] = rnd.choice(EDIT_KINDS[:4])
        words = text.split(" ")
        for kind in kinds:
            position = rnd.randrange(len(words))
            if kind == "substitution":
                words[position] = self._draw(1)[0]
            elif kind == "insertion":
                words.insert(position, self._draw(1)[0])
            elif kind == "deletion" and len(words) > 1:
                del words[position]
            elif kind == "punctuation":
                word = words[position]
                if word[-1:] in ",.?!;:":
                    words[position] = word[:-1] + rnd.choice(("",) + _PUNCTUATION_SWAPS)
                else:
                    words[position] = word + rnd.choice((",", "."))
            elif kind == "casing":
                if rnd.random() < 0.2:
                    words = [word.upper() for word in words]
                else:
                    words[position] = words[position].swapcase()
        return " ".join(words), tuple(kinds)


def _running_sum(values: list[float]):
    total = 0.0
    for value in values:
        total += value
        yield total


def _spread(count: int, total: int, salt: int) -> list[int]:
    """`count` distinct indexes spread over range(total)."""
    picked: list[int] = []
    taken: set[int] = set()
    for j in range(count):
        index = ((j + 1) * total // (count + 1) + salt) % total
        while index in taken:
            index = (index + 1) % total
        taken.add(index)
        picked.append(index)
    return picked
