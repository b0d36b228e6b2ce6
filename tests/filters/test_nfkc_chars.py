"""NFKC one character at a time (filters/nfkc_chars.py): the shipped list of class-0 composition
seconds is what this Python's character database says, the per-character rule holds on random
text, and the kernel's batch normalisation that relies on it equals the reference."""
import os
import random
import unicodedata

import pytest

from filters import dedup_native
from filters.dedup_text import normalize_text_reference
from filters.nfkc_chars import STARTER_SECONDS, per_char, starter_seconds


def _assigned():
    return [chr(cp) for cp in range(0x80, 0x110000) if unicodedata.category(chr(cp)) not in ("Cn", "Cs", "Co")]


@pytest.fixture(scope="module")
def chars():
    every = _assigned()
    ok = [c for c in every if per_char(c)]
    return {"ok": ok, "mapped": [c for c in ok if unicodedata.normalize("NFKC", c) != c],
            "not": [c for c in every if not per_char(c)]}


def test_the_list_of_class_0_composition_seconds_is_this_pythons():
    assert starter_seconds() == set(STARTER_SECONDS)


def test_per_char_rule_on_the_characters_it_must_refuse_and_accept(chars):
    for c in ["\u0301", "\u0308", "\u1161", "\u11a8", "\u0bbe", "\u0344", "\u0f73"]:  # marks, jamo, vowel signs
        assert not per_char(c), hex(ord(c))
    for c in ["\u00a0", "\u2026", "\ufb01", "\uff21", "\u00e9", "\u212b", "\uac00", "\u3000", "\u00bd", "\ufdfa"]:
        assert per_char(c), hex(ord(c))
    assert len(chars["mapped"]) > 3000 and len(chars["not"]) > 500  # both sides are large, not a handful


def test_nfkc_of_per_char_text_is_the_concatenation_of_its_characters(chars):
    rng = random.Random(11)
    pool = chars["mapped"] + rng.sample(chars["ok"], 5000) + [chr(b) for b in range(32, 127)]
    for _ in range(20000):
        s = "".join(rng.choice(pool) for _ in range(rng.randrange(1, 8)))
        assert unicodedata.normalize("NFKC", s) == "".join(unicodedata.normalize("NFKC", c) for c in s), repr(s)


@pytest.mark.skipif(os.environ.get("CIDERMILL_NATIVE") == "0" or not dedup_native.available(),
                    reason="compiled kernel unavailable")
def test_batch_normalisation_with_per_char_nfkc_equals_the_reference(chars):
    rng = random.Random(12)
    mixed = chars["mapped"] + chars["not"] + [chr(b) for b in range(32, 127)] * 20 + ["\u00a0", " "] * 200
    texts = ["".join(rng.choice(mixed) for _ in range(rng.randrange(0, 60))) for _ in range(3000)]
    texts += ["".join(rng.choice(chars["mapped"] + [" ", "a"]) for _ in range(40)) for _ in range(500)]
    texts += ["no\u00a0break…ﬁne ＡＢＣ", "e\u0301 + \u1100\u1161\u11a8 jamo", "ﷺ long", "", None, "\ud800 lone"]
    buf, off, _ = dedup_native.normalize_batch(texts)
    redone = 0
    for i, t in enumerate(texts):
        assert buf[off[i]:off[i + 1]].decode("utf-8") == normalize_text_reference(t), repr(t)[:80]
        redone += isinstance(t, str) and not all(per_char(c) for c in t)
    assert 0 < redone < len(texts)  # both the per-character and the whole-text path ran
