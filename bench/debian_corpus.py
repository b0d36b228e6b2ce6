"""The speed benches' corpus: real Debian documentation, fetched with apt, in chunks of up to about 2,000 words (a few run past it to the end of a block; a page's tail or a short page is one shorter chunk).

`documents_jsonl(scratch, n)` runs `apt-get download` + `dpkg -x` of datatools.debian_docs.BENCH_PACKAGES
(13,117 chunks; SCALE_PACKAGES when n asks for more: about 28,500) into SCRATCH (never committed), cuts every HTML page into chunks of up to `words` words (paragraph
blocks in page order) and writes the first n as JSONL {"id", "text"}; `pages_dataset(scratch, n)`
writes the same documents as a cidermill pages dataset (Arrow shards), the input of `cidermill text`.
Both are cached under SCRATCH.
"""
from __future__ import annotations

import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

CHUNK_WORDS = 2000  # chunks end at the first block boundary past this many words (issue 23's corpus)
MIN_WORDS = 50  # a page's shorter tail (or a shorter page) is not a document


def documents_jsonl(scratch: str, n: int, words: int = CHUNK_WORDS) -> str:
    from datatools import debian_docs

    path = os.path.join(scratch, f"debian-{words}w-{n}.jsonl")
    if not os.path.exists(path):
        root = debian_docs.fetch(os.path.join(scratch, "debian"), debian_docs.BENCH_PACKAGES)
        chunks = debian_docs.documents(root, words=words, min_words=MIN_WORDS)
        if len(chunks) < n:  # the larger corpus: the same chunks first, then those of SCALE_PACKAGES
            root = debian_docs.fetch(os.path.join(scratch, "debian"), debian_docs.SCALE_PACKAGES)
            chunks = debian_docs.documents(root, words=words, min_words=MIN_WORDS)
        if len(chunks) < n:
            print(f"note: only {len(chunks)} documents available", flush=True)
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            for c in chunks[:n]:
                f.write(json.dumps({"id": f"{c.page}#{c.index}", "text": c.text}, ensure_ascii=False) + "\n")
        os.replace(path + ".tmp", path)
    return path


def add_chunk_words_flag(ap) -> None:
    """`--chunk-words` on a bench's argument parser (one default for every speed bench)."""
    ap.add_argument("--chunk-words", type=int, default=CHUNK_WORDS,
                    help=f"corpus documents are chunks of up to this many words (default {CHUNK_WORDS})")


def load_jsonl(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def pages_dataset(scratch: str, n: int, words: int = CHUNK_WORDS, shard_bytes: int = 16 << 20) -> str:
    """The documents as a pages dataset of Arrow shards of about `shard_bytes` (url = a file:// name)."""
    import pyarrow as pa

    from corpus.reader import ShardDataset
    from corpus.schemas import PAGES
    from corpus.writer import DatasetWriter

    out = os.path.join(scratch, f"pages-{words}w-{n}")
    if os.path.exists(os.path.join(out, "_manifest.json")):
        return out
    docs = load_jsonl(documents_jsonl(scratch, n, words))
    with DatasetWriter(out, "pages", PAGES, target_bytes=shard_bytes, overwrite=True) as w:
        for s in range(0, len(docs), 1000):
            part = docs[s:s + 1000]
            rows = [{"id": d["id"], "url": f"file:///debian/{d['id']}", "text": d["text"], "status": 200,
                     "training_allowed": True} for d in part]
            w.write_table(pa.Table.from_pylist(rows, schema=PAGES))
    assert ShardDataset(out).manifest.rows == len(docs)
    return out
