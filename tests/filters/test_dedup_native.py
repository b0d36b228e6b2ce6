"""The compiled dedup kernel (filters/dedup_native.c) gives the numpy path's values bit for bit,
bad input included, and a machine that cannot build it falls back to the numpy path."""
import os
import random
import shutil
import subprocess
import sys

import numpy as np
import pytest

from filters import dedup_lsh, dedup_native
from filters.dedup_text import (_splits_at_spaces, distinct_per_document, normalize_text, shingle_hashes_spaced,
                                spaced_words)
from filters.minhash_signature import MinHasher
from tests.filters.test_fast_paths import _texts

pytestmark = pytest.mark.skipif(os.environ.get("CIDERMILL_NATIVE") == "0", reason="compiled kernel turned off")


def _unicode_soup(n=300, seed=3):
    """Random strings over ASCII, the BMP and beyond (CJK, marks, symbols, surrogates, controls)."""
    rng = random.Random(seed)
    pick = [lambda: rng.randrange(0, 128), lambda: rng.randrange(0x80, 0x3000), lambda: rng.randrange(0x3000, 0x11000),
            lambda: rng.randrange(0x1F000, 0x20000), lambda: rng.choice([0xD800, 0xDFFF, 0xFFFD, 0x200B, 0xAD])]
    return ["".join(chr(rng.choice(pick)()) for _ in range(rng.randrange(0, 80))) for _ in range(n)]


def _all_texts():
    return _texts() + _unicode_soup() + [None, 5, b"bytes", "ß" * 700 + " ǅ" * 300, "café ctrl\x00char", "ﬁ \x01 ok",
                                                    "日本語の文章 mixed with English 中文", "カタカナ　ひらがな、漢字。", "e\u0301 mark 中",
                                                    # separators: format, bidi, private use, controls, marks
                                                    "zero\u200bwidth\ufeffbom \u200eltr\u202aemb\u202c caf\u00e9",
                                                    "\uf179icon\uf17a word\x01ctl\x7fdel na\u00efve", "\u0130stanbul \u0130",
                                                    "\u0643\u064e\u062a\u064e\u0628\u064e arabic marks", "漢\u200b字\x02かな x_y",
                                                    "\u200b", "\x01\u00e9\x02", "a\u0300\u0301b \u0915\u094d\u0937 \u0e01\u0e34"]


@pytest.mark.skipif(not shutil.which(os.environ.get("CC", "cc")), reason="no C compiler: dedup runs the numpy path")
def test_the_kernel_builds_where_there_is_a_compiler():
    # `make setup` builds it (and installs gcc where apt can); with a compiler, the fast path is what runs
    assert dedup_native.available()


def test_normalisation_and_word_spacing_equal_the_python_functions():
    texts = _all_texts()
    buf, off, flags = dedup_native.normalize_batch(texts)
    for i, t in enumerate(texts):
        norm = normalize_text(t if isinstance(t, str) else None)
        assert buf[off[i]:off[i + 1]] == norm.encode("utf-8"), repr(t)[:60]
        if norm:
            assert bool(flags[i]) == (not _splits_at_spaces(norm)), repr(norm)[:60]
    spaced, spaced_off = dedup_native.spaced_batch(buf, off, flags)
    for i, t in enumerate(texts):
        ref = spaced_words(normalize_text(t if isinstance(t, str) else None))
        assert spaced[spaced_off[i]:spaced_off[i + 1]] == ref.encode("utf-8"), repr(t)[:60]
    assert {int(f) for f in flags} >= {0, dedup_native.CJK_WORD, dedup_native.OTHER}  # each way is tested


@pytest.mark.parametrize("ngram", [1, 2, 5, 16])
def test_signatures_and_sets_equal_the_numpy_path(ngram):
    spaced = [spaced_words(normalize_text(t if isinstance(t, str) else None)) for t in _all_texts()]
    parts = [s.encode("utf-8", "surrogatepass") for s in spaced]
    hasher = MinHasher(64, seed=5)
    sigs, sets, counts = dedup_native.signatures_batch(b"".join(parts), dedup_native.offsets(parts), ngram,
                                                       hasher.a, hasher.b)
    flat, flat_counts = shingle_hashes_spaced(spaced, ngram)
    ref_sets, ref_counts = distinct_per_document(flat, flat_counts)
    assert np.array_equal(counts, ref_counts)
    assert np.array_equal(sets, ref_sets)
    assert np.array_equal(sigs, hasher.signatures(np.split(ref_sets, np.cumsum(ref_counts)[:-1])))
    assert (sigs[[i for i, s in enumerate(spaced) if not s]] == 0xFFFFFFFF).all()


def test_prepared_rows_equal_the_numpy_path():
    rows = [{"text": t, "id": f"k{i}"} for i, t in enumerate(_all_texts())]
    rows += [{"id": "no-text"}, {"text": "", "id": "empty"}]
    hasher = MinHasher(128, seed=1)
    for exact, h in ((True, hasher), (False, hasher), (True, None)):
        fast = dedup_lsh._prepared_native(rows, "text", "id", exact, h, 5)
        ref = dedup_lsh._prepared_numpy(rows, "text", "id", exact, h, 5)
        assert fast[:2] == ref[:2]
        if h is None:
            assert fast[2] is ref[2] is None
            continue
        assert np.array_equal(fast[2], ref[2])
        assert len(fast[3]) == len(ref[3]) and all(np.array_equal(a, b) for a, b in zip(fast[3], ref[3]))


def test_without_a_compiler_dedup_falls_back_to_the_numpy_path(tmp_path):
    script = ("from filters import dedup_native, dedup_lsh; from filters.minhash_signature import MinHasher\n"
              "assert not dedup_native.available()\n"
              "out = dedup_lsh.prepare_batch([{'text': 'a b c d e f', 'id': 'x'}], 'text', 'id', True,"
              " MinHasher(128, 1), 5, 16, 8, 1)\n"
              "print(len(out[0]), len(out[1]))\n")
    env = dict(os.environ, CIDERMILL_NATIVE_DIR=str(tmp_path / "cache"), CC=str(tmp_path / "no-such-cc"))
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["1", "1"]
    assert "no C compiler" in run.stderr and "numpy path" in run.stderr
    assert not list((tmp_path / "cache").glob("*.so"))


def test_signatures_of_texts_with_runs_of_spaces_equal_the_numpy_path():
    # not what normalisation gives, but callers may pass it: empty words hash as the numpy path hashes them
    spaced = ["a  b", " lead", "trail ", "   ", "x", "a b  c   d    e f g h"]
    parts = [s.encode() for s in spaced]
    hasher = MinHasher(16, seed=2)
    sigs, sets, counts = dedup_native.signatures_batch(b"".join(parts), dedup_native.offsets(parts), 3,
                                                       hasher.a, hasher.b)
    flat, flat_counts = shingle_hashes_spaced(spaced, 3)
    ref_sets, ref_counts = distinct_per_document(flat, flat_counts)
    assert np.array_equal(counts, ref_counts) and np.array_equal(sets, ref_sets)
    assert np.array_equal(sigs, hasher.signatures(np.split(ref_sets, np.cumsum(ref_counts)[:-1])))


def test_a_home_that_cannot_be_written_builds_into_a_private_temp_folder(tmp_path):
    script = ("from filters import dedup_native\nprint(dedup_native.build())\n"
              "print(dedup_native.available())\n")
    env = {k: v for k, v in os.environ.items() if k not in ("CIDERMILL_NATIVE_DIR", "XDG_CACHE_HOME")}
    env.update(HOME="/proc/no-home", TMPDIR=str(tmp_path))
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    assert run.returncode == 0, run.stderr
    path, ok = run.stdout.split()
    folder = tmp_path / f"cidermill-native-{os.getuid()}"
    assert path.startswith(str(folder)) and ok == "True"
    assert folder.stat().st_mode & 0o777 == 0o700


def test_a_batch_of_long_texts_goes_to_the_kernel_in_chunks_with_the_same_values(monkeypatch):
    rows = [{"text": t, "id": f"k{i}"} for i, t in enumerate(_all_texts())]
    hasher = MinHasher(32, seed=4)
    whole = dedup_lsh._prepared_native(rows, "text", "id", True, hasher, 5)
    monkeypatch.setattr(dedup_lsh, "_NATIVE_CHUNK_CHARS", 500)  # many chunks, one long text alone in its own
    chunked = dedup_lsh._prepared_native(rows, "text", "id", True, hasher, 5)
    assert chunked[:2] == whole[:2] and np.array_equal(chunked[2], whole[2])
    assert all(np.array_equal(a, b) for a, b in zip(chunked[3], whole[3])) and len(chunked[3]) == len(whole[3])
