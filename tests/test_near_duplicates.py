"""The near-duplicate measure and index (PL212): planlint.services.near_duplicates."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import unicodedata

import pytest

from planlint.services import near_duplicates as nd
from planlint.services.near_duplicates import NearDuplicateSettings, NearIndex, similarity, words

SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "pe", "du", "fa", "go", "hi", "ju", "be", "zo", "qui", "tra", "spe", "lin"]
COMMON = ["the", "a", "of", "and", "to", "in", "is", "it", "for", "on"]


def normalized(text: str) -> str:
    """What PL209 compares and PL212 is given: NFKC, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def vocabulary(rnd: random.Random, size: int = 3000) -> list[str]:
    seen: set[str] = set()
    while len(seen) < size:
        seen.add("".join(rnd.choices(SYLLABLES, k=rnd.randint(2, 4))))
    return sorted(seen)


def sentence_rows(count: int, seed: int, length: tuple[int, int] = (22, 40)) -> list[str]:
    """Distinct inputs: sentences of rare words with common ones in between."""
    rnd = random.Random(seed)
    words_ = vocabulary(rnd)
    rows = []
    for _ in range(count):
        picked = [rnd.choice(COMMON) if rnd.random() < 0.3 else rnd.choice(words_) for _ in range(rnd.randint(*length))]
        text = " ".join(picked)
        rows.append(text[0].upper() + text[1:] + ".")
    return rows


def build(eval_texts: list[str], **settings) -> NearIndex:
    index = NearIndex(NearDuplicateSettings(**settings))
    index.add(range(1, len(eval_texts) + 1), map(normalized, eval_texts))
    index.finish()
    return index


def near_pairs(index: NearIndex, train_texts: list[str]) -> dict[int, tuple[int, float]]:
    """Eval row id -> (the first train row that near-duplicates it, the similarity)."""
    texts = list(map(normalized, train_texts))
    found: dict[int, tuple[int, float]] = {}
    for position in index.candidates(texts):
        for match in index.matches(texts[position]):
            found.setdefault(index.rows[match.position], (position, match.similarity))
    return found


BASE = ("Marvin filed the claim for order 48213 after the courier left the parcel in the rain, "
        "and the printer inside no longer turns on; he asks whether the warranty covers water damage "
        "or whether he must pay for the repair himself.")


def edited(kind: str) -> str:
    tokens = BASE.split(" ")
    if kind == "substitution":
        tokens[12] = "storm"  # rain -> storm
    elif kind == "insertion":
        tokens.insert(20, "really")
    elif kind == "deletion":
        del tokens[7]
    elif kind == "clause":  # a clause added, numbers kept
        tokens[20:20] = ["which", "he", "bought", "last", "spring", "from", "the", "outlet", "store"]
    elif kind == "punctuation":
        return BASE.replace(",", ";").replace(" or whether", ", or whether").replace(".", "!")
    elif kind == "casing":
        return BASE.upper()
    elif kind == "three words":
        tokens[3], tokens[15], tokens[30] = "complaint", "box", "asked"
    return " ".join(tokens)


# --------------------------------------------------------------------------
# the measure


def test_words_fold_punctuation_symbols_and_keep_letters_marks_digits():
    assert words("refund, please! order #48213 (item 7-b)") == [b"refund", b"please", b"order", b"48213", b"item", b"7", b"b"]
    assert words("caf\u00e9 \u201cdon\u2019t\u201d \u2014 na\u00efve\u2026") == [w.encode() for w in ("caf\u00e9", "don", "t", "na\u00efve")]
    assert words("\u0939\u093f\u0902\u0926\u0940 \u092d\u093e\u0937\u093e") == ["\u0939\u093f\u0902\u0926\u0940".encode(), "\u092d\u093e\u0937\u093e".encode()]  # vowel signs are marks


@pytest.mark.parametrize("kind, expected", [
    ("substitution", 36 / 39),  # one word: the three n-grams holding it
    ("insertion", 37 / 39),  # two n-grams span the gap
    ("deletion", 36 / 39),
    ("clause", 37 / 39),
    ("punctuation", 1.0),  # punctuation and case are not words
    ("casing", 1.0),
    ("three words", 30 / 39),
])
def test_each_kind_of_light_edit_keeps_most_n_grams(kind, expected):
    assert similarity(normalized(BASE), normalized(edited(kind))) == pytest.approx(expected)


def test_a_short_input_is_not_measured():
    assert similarity("the order arrived broken and late today", "the order arrived broken and late today") is None
    assert similarity(normalized(BASE), "") == 0.0


# --------------------------------------------------------------------------
# the index: each kind of edit found, nothing else


@pytest.fixture(scope="module")
def distinct_eval():
    return sentence_rows(400, seed=1) + [BASE]


@pytest.mark.parametrize("kind", ["substitution", "insertion", "deletion", "clause", "punctuation", "casing", "three words"])
def test_index_finds_each_kind_of_light_edit(distinct_eval, kind):
    index = build(distinct_eval)
    train = sentence_rows(300, seed=2)
    train.insert(137, edited(kind))
    found = near_pairs(index, train)
    assert set(found) == {len(distinct_eval)}  # the row id of BASE, and nothing else
    assert found[len(distinct_eval)][0] == 137
    assert found[len(distinct_eval)][1] == pytest.approx(similarity(normalized(BASE), normalized(edited(kind))))


def test_distinct_rows_are_never_candidates_of_each_other(distinct_eval):
    index = build(distinct_eval)
    assert near_pairs(index, sentence_rows(2000, seed=3)) == {}


def test_light_edits_planted_among_many_rows_are_found():
    rnd = random.Random(7)
    eval_texts = sentence_rows(2000, seed=11, length=(20, 60))
    train = sentence_rows(6000, seed=12, length=(20, 60))
    planted = {}
    for number, source in enumerate(rnd.sample(range(len(eval_texts)), 60)):
        tokens = eval_texts[source].split(" ")
        for _ in range(rnd.randint(1, 3)):
            at = rnd.randrange(len(tokens))
            kind = rnd.choice(["substitution", "insertion", "deletion", "punctuation"])
            if kind == "substitution":
                tokens[at] = "zzwordzz"
            elif kind == "insertion":
                tokens.insert(at, "zzextrazz")
            elif kind == "deletion":
                del tokens[at]
            else:
                tokens[at] += ","
        target = 100 * number + 17
        train[target] = " ".join(tokens)
        planted[source + 1] = target
    found = near_pairs(build(eval_texts), train)
    assert {row: pair[0] for row, pair in found.items()} == planted


def test_rows_sharing_a_template_are_not_near_duplicates():
    template = ("You are a careful support agent for our store. Read the customer's message below, think about "
                "the refund policy step by step and answer it in full, politely and briefly:")
    questions = sentence_rows(60, seed=5, length=(10, 14))
    eval_texts = [f"{template} {question}" for question in questions[:30]]
    train = [f"{template} {question}" for question in questions[30:]]
    index = build(eval_texts)
    assert index.boilerplate  # the template's n-grams
    assert similarity(normalized(eval_texts[0]), normalized(train[0])) >= 0.5  # what the template alone would do
    assert near_pairs(index, train) == {}
    # a near-duplicate of one templated row is still found, on its own words
    tokens = eval_texts[4].split(" ")
    tokens[-3] = "zzwordzz"
    found = near_pairs(index, train + [" ".join(tokens)])
    assert list(found) == [5] and found[5][0] == len(train)


def test_short_inputs_are_left_to_the_exact_check():
    short = "Is the store open on sunday morning for returns"  # 9 words: 7 n-grams
    index = build(sentence_rows(50, seed=8) + [short])
    assert near_pairs(index, [short.replace("sunday", "monday"), short + " please"]) == {}


def test_identical_eval_inputs_share_their_anchors():
    eval_texts = sentence_rows(100, seed=9)
    eval_texts.insert(10, BASE)
    eval_texts.insert(60, BASE)
    found = near_pairs(build(eval_texts), [edited("substitution")])
    assert set(found) == {11, 61}


def test_the_indexed_split_may_be_train():
    index = NearIndex(NearDuplicateSettings(), indexed_is_eval=False)
    train = sentence_rows(300, seed=2) + [edited("clause")]
    index.add(range(1, len(train) + 1), map(normalized, train))
    index.finish()
    [match] = index.matches(normalized(BASE))
    assert index.rows[match.position] == len(train)
    assert match.similarity == pytest.approx(similarity(normalized(BASE), normalized(edited("clause"))))
    assert index.candidates([normalized(BASE), normalized(sentence_rows(1, seed=99)[0])]) == [0]


def test_non_ascii_inputs_are_chunked_and_measured_alike():
    base = ("La r\u00e9clamation n\u00b0 48213 concerne une imprimante ab\u00eem\u00e9e par la pluie apr\u00e8s la livraison ; "
            "le client demande si la garantie couvre les d\u00e9g\u00e2ts des eaux ou s\u2019il doit payer la r\u00e9paration.")
    variant = base.replace("pluie", "temp\u00eate").replace(" ; ", ", ").replace("\u2019", "'")
    index = build(sentence_rows(200, seed=4) + [base])
    found = near_pairs(index, sentence_rows(50, seed=6) + [variant])
    assert set(found) == {201} and found[201][0] == 50


@pytest.mark.parametrize("ngram", [1, 2, 5, 13])
def test_other_n_gram_sizes(distinct_eval, ngram):
    index = build(distinct_eval, ngram=ngram)
    found = near_pairs(index, sentence_rows(100, seed=2) + [edited("insertion")])
    assert set(found) == {len(distinct_eval)}


def test_the_threshold_decides(distinct_eval):
    strict = build(distinct_eval, threshold=0.95)
    assert near_pairs(strict, [edited("punctuation")])
    assert not near_pairs(strict, [edited("three words")])


@pytest.mark.parametrize("settings", [{"ngram": 0}, {"ngram": 14}, {"threshold": 0.0}, {"threshold": 1.5}])
def test_settings_out_of_range_are_refused(settings):
    with pytest.raises(ValueError):
        NearIndex(NearDuplicateSettings(**settings))


def test_an_empty_index_finds_nothing():
    index = build([])
    assert index.candidates([normalized(BASE)]) == [] and index.matches(normalized(BASE)) == []


# --------------------------------------------------------------------------
# deterministic: no result depends on Python's per-process hash

_RUN = """
import json, sys
sys.path[:0] = [{tests!r}]
from test_near_duplicates import build, near_pairs, sentence_rows, edited, BASE
import random
eval_texts = sentence_rows(300, seed=21) + [BASE]
index = build(eval_texts)
train = sentence_rows(200, seed=22) + [edited("three words"), edited("clause")]
print(json.dumps({{"found": sorted(near_pairs(index, train).items()), "anchors": sorted(a.hex() for a in index._anchors),
                  "ends": [e.hex() for e in index.chunk_ends], "boilerplate": sorted(map(repr, index.boilerplate))}}))
"""


def test_the_same_inputs_give_the_same_index_and_matches_in_every_process():
    tests = os.path.dirname(os.path.abspath(__file__))
    outputs = []
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", _RUN.format(tests=tests)], capture_output=True, text=True, env=env, check=True)
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1] == outputs[2]
    assert [pair[0] for pair in outputs[0]["found"]] == [301]


def test_constants_hold_their_promise():
    assert nd.ANCHORS >= 2 and nd.MIN_GRAMS >= 2
    assert nd.MIN_NGRAM <= nd.DEFAULT_NGRAM <= nd.MAX_NGRAM
