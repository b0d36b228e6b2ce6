"""Byte-level BPE training and extension: no unknowns, old ids kept, new language cheaper."""
import json
import subprocess
import sys

import pyarrow as pa

from corpus.reader import open_dataset
from corpus.writer import write_dataset
from training.tokenizer import EOS, extend_tokenizer, load_tokenizer, token_pieces, train_tokenizer

EN = [f"Data pipelines filter web pages before training run {i}. The crawler respects robots.txt files "
      f"and renders pages with a headless browser; version {i}.{i % 7}." for i in range(400)]
DE = [f"Die Datenpipeline filtert Webseiten vor dem Training, Lauf {i}. Der Crawler beachtet die "
      f"Regeln und rendert Seiten mit einem Browser ohne Oberfläche, Version {i}." for i in range(400)]
JA = [f"データパイプラインは訓練の前にウェブページをフィルタリングします。実行番号 {i}。"
      "クローラーはルールを守り、ブラウザでページを描画します。" for i in range(400)]


def test_bpe_roundtrip_digits_and_byte_fallback():
    tok = train_tokenizer(EN, 600)
    assert tok.token_to_id(EOS) is not None
    text = "Zürich 2024: 12345 ✓ 数据 \x00 🍎"
    enc = tok.encode(text)
    assert tok.decode(enc.ids) == text            # nothing is unknown, bytes round-trip
    digit_tokens = [t for t in enc.tokens if any(c.isdigit() for c in t)]
    assert all(len(t) == 1 for t in digit_tokens)  # digits are split one by one


def test_extension_keeps_old_ids_and_shortens_new_language():
    base = train_tokenizer(EN, 600)
    ext, new = extend_tokenizer(base, JA + DE, 120)
    assert len(new) == 120 and ext.get_vocab_size() == base.get_vocab_size() + 120
    old, grown = base.get_vocab(), ext.get_vocab()
    assert all(grown[t] == i for t, i in old.items())
    assert sorted(grown[t] for t in new) == list(range(base.get_vocab_size(), ext.get_vocab_size()))
    ja = JA[3]
    assert len(ext.encode(ja).ids) < 0.7 * len(base.encode(ja).ids)
    assert ext.decode(ext.encode(ja).ids) == ja
    assert base.encode(EN[5]).ids == ext.encode(EN[5]).ids  # old-language text unchanged here
    for t in new[:20]:
        assert all(p < base.get_vocab_size() for p in token_pieces(base, t))


def _docs(tmp_path, name, texts):
    d = str(tmp_path / name)
    write_dataset(d, "documents", pa.table({"id": [f"{name}-{i}" for i in range(len(texts))], "text": texts}))
    return d


def test_cli_train_extend_tokenize(tmp_path):
    en, ja = _docs(tmp_path, "en", EN), _docs(tmp_path, "ja", JA)
    tok, ext = str(tmp_path / "tok"), str(tmp_path / "tok-ext")
    run = lambda *a: subprocess.run([sys.executable, "-m", "pipelines.cli", *a], capture_output=True, text=True, timeout=300)
    r = run("tokenizer", "train", "--in", en, "--vocab", "500", "--out", tok)
    assert r.returncode == 0, r.stderr
    r = run("tokenizer", "extend", "--base", tok, "--in", ja, "--add", "50", "--out", ext)
    assert r.returncode == 0, r.stderr
    assert len(json.load(open(f"{ext}/added_tokens.json"))) == 50
    out = str(tmp_path / "tokens")
    r = run("tokenize", "--in", en, "--out", out, "--tokenizer", tok, "--mixture", "web")
    assert r.returncode == 0, r.stderr
    ds = open_dataset(out)
    assert ds.kind == "tokens" and len(ds) == len(EN)
    t = load_tokenizer(tok)
    row = next(r for r in ds.iter_rows() if r["doc_id"] == "en-7")
    assert row["tokens"][-1] == t.token_to_id(EOS) and row["mixture"] == "web" and row["source"] == "en"
    assert t.decode(row["tokens"][:-1]) == EN[7]
    assert str(ds.schema.field("tokens").type) == "list<item: uint32>"
    r = run("tokenizer", "train", "--in", str(tmp_path / "missing"), "--vocab", "500", "--out", tok)
    assert r.returncode == 1 and "no such dataset" in r.stderr and "Traceback" not in r.stderr
