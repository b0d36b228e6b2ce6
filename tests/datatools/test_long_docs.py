"""Whole long documents from a directory of documentation files: one per manual, never cut at
2,000 words; short units, binary files and Sphinx copies dropped with reasons; tokenizable."""
import gzip
import json
import os
import random

import pytest

from corpus.errors import CidermillError
from corpus.reader import ShardDataset
from datatools.long_docs import build, split_parts

_WORDS = "apple press cider barrel yeast juice orchard tree harvest cellar bottle cork sugar acid".split()


def _paragraphs(tag: str, n: int, rng: random.Random) -> list[str]:
    """n paragraphs of 60 words; each starts with a unique marker so order can be checked."""
    return [f"{tag}P{i} " + " ".join(rng.choice(_WORDS) for _ in range(59)) + "." for i in range(n)]


def _html(path: str, paras: list[str]) -> None:
    with open(path, "w") as f:
        f.write("<html><body><div class='related'>nav</div>" + "".join(f"<p>{p}</p>" for p in paras)
                + "<pre>code()</pre></body></html>")


def _docs(root: str) -> dict[str, list[str]]:
    rng = random.Random(0)
    book = {n: _paragraphs(n, 30, rng) for n in ("pr01", "ch1", "ch2", "ch10")}  # 4 x 1,800 words, one manual
    os.makedirs(os.path.join(root, "manual", "_sources"))
    for n, paras in book.items():
        _html(os.path.join(root, "manual", f"{n}.html"), paras)
    with open(os.path.join(root, "manual", "index.html"), "w") as f:  # reading order: preface first
        f.write("".join(f"<a href='{n}.html#top'>{n}</a>" for n in book))
    os.makedirs(os.path.join(root, "ref"))  # a manual shipped twice: HTML pages and a text rendering
    ref = _paragraphs("ref", 50, rng)
    _html(os.path.join(root, "ref", "a.en.html"), ref[:25])
    _html(os.path.join(root, "ref", "b.en.html"), ref[25:])
    with open(os.path.join(root, "ref", "ref.en.txt"), "w") as f:
        f.write("\n\n".join(ref))
    os.symlink(os.path.join(root, "ref", "ref.en.txt"), os.path.join(root, "ref", "copy.en.txt"))
    with open(os.path.join(root, "manual", "_sources", "ch1.rst.txt"), "w") as f:
        f.write("\n\n".join(book["ch1"]))  # Sphinx's source copy: must not double the manual
    os.makedirs(os.path.join(root, "texts"))
    novel = _paragraphs("novel", 60, rng)
    with gzip.open(os.path.join(root, "texts", "novel.txt.gz"), "wt") as f:  # lines wrapped inside paragraphs
        f.write("\n\n".join(p.replace(" ", "\n", 3) for p in novel))
    with open(os.path.join(root, "texts", "blob.txt"), "wb") as f:
        f.write(b"\x00\x01 not text")
    os.makedirs(os.path.join(root, "notes"))
    with open(os.path.join(root, "notes", "todo.md"), "w") as f:
        f.write("a short note of a few words")
    return {"manual": [p for paras in book.values() for p in paras], "novel": novel, "ref": ref}


def test_manuals_kept_whole_in_reading_order_and_tokenizable(tmp_path):
    from pipelines.tokenize_pipeline import run_tokenize
    from training.tokenizer import save_tokenizer, train_tokenizer

    want = _docs(str(tmp_path / "docs"))
    s = build(str(tmp_path / "docs"), str(tmp_path / "out"))
    rows = {r["title"]: r for r in ShardDataset(str(tmp_path / "out")).to_table().to_pylist()}
    assert sorted(rows) == ["manual", "ref", "texts"]
    manual = rows["manual"]
    assert manual["text"].split("\n\n") == want["manual"]  # pr01, ch1, ch2, ch10 whole; no nav/code/_sources
    assert manual["words"] == 7200 and manual["files"] == 4 and manual["parts"] == 1
    assert rows["ref"]["text"].split("\n\n") == want["ref"] and rows["ref"]["files"] == 1  # not doubled
    assert rows["texts"]["text"].split("\n\n") == want["novel"] and rows["texts"]["files"] == 1
    assert s["files_dropped"] == {"binary": 1, "html_twin_of_text": 2, "symlink": 1}
    assert s["units_dropped"] == {"short": 1}
    stats = json.load(open(tmp_path / "out" / "_report" / "stats.json"))
    assert stats["stages"]["units"]["dropped"] == {"short": 1}

    tok = save_tokenizer(train_tokenizer(want["manual"][:20], 300), str(tmp_path / "tok"))
    run_tokenize(str(tmp_path / "out"), str(tmp_path / "tokens"), tok, source="books")
    t = ShardDataset(str(tmp_path / "tokens")).to_table().to_pylist()
    lengths = {r["doc_id"]: len(r["tokens"]) for r in t}
    assert set(lengths) == {"manual#en", "ref#en", "texts#"} and lengths["manual#en"] > 7200  # one row, whole


def test_long_units_cut_into_lossless_parts_and_reruns_identical(tmp_path):
    want = _docs(str(tmp_path / "docs"))
    build(str(tmp_path / "docs"), str(tmp_path / "a"), unit="file", min_words=100, max_chars=5_000)
    build(str(tmp_path / "docs"), str(tmp_path / "b"), unit="file", min_words=100, max_chars=5_000)
    ta, tb = (ShardDataset(str(tmp_path / d)).to_table() for d in "ab")
    assert ta.equals(tb)
    rows = ta.to_pylist()
    ch10 = sorted((r for r in rows if r["title"] == "manual/ch10.html"), key=lambda r: r["part"])
    assert len(ch10) == ch10[0]["parts"] > 1 and all(len(r["text"]) <= 5_000 for r in ch10)
    assert [r["id"] for r in ch10] == [f"manual/ch10.html~p{i}" for i in range(len(ch10))]
    assert "\n\n".join(r["text"] for r in ch10).split("\n\n") == want["manual"][90:]
    assert split_parts("x" * 2500, 1000) == ["x" * 1000, "x" * 1000, "x" * 500]  # no break: hard cut


def test_nothing_long_enough_is_one_line_error(tmp_path):
    os.makedirs(tmp_path / "d")
    (tmp_path / "d" / "a.txt").write_text("too short")
    with pytest.raises(CidermillError, match="no document of 2000 words"):
        build(str(tmp_path / "d"), str(tmp_path / "out"))
