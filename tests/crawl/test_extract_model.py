"""The learned extractor: gradient-boosted trees, the domain split, the metric, `cidermill train-extractor`
on a small WCXB-style folder, and the shipped model file."""
import json
import os

import numpy as np
import pytest

from crawl import gbdt
from crawl.extract import MODEL_PATH, extract_page, page_blocks
from crawl.extract_blocks import FEATURES
from crawl.extract_context import CONTEXT_FEATURES
from crawl.extract_stages import BlockModel
from crawl.extract_train import load_dev, split_of, word_prf
from pipelines.cli import main as cli_main


def test_trees_learn_an_interaction_and_round_trip_through_json(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.random((4000, 3))
    y = ((X[:, 0] > 0.5) ^ (X[:, 1] > 0.3)).astype(float)  # XOR: no single split separates it
    m = gbdt.train(X, y, trees=40, depth=3, lr=0.3, seed=1)
    acc = ((m.predict(X) > 0.5) == y).mean()
    assert acc > 0.95
    m.save(tmp_path / "m.json")
    m2 = gbdt.Trees.load(tmp_path / "m.json")
    assert np.allclose(m2.predict(X), m.predict(X), atol=1e-4)
    again = gbdt.train(X, y, trees=40, depth=3, lr=0.3, seed=1)
    assert np.array_equal(again.predict(X), m.predict(X))  # same seed, same model


def test_colsample_makes_trees_split_on_other_features():
    rng = np.random.default_rng(0)
    X = rng.random((2000, 4))
    y = (X[:, 0] + 0.2 * X[:, 1] > 0.6).astype(float)   # feature 0 decides; 1 helps a little; 2, 3 are noise
    full = gbdt.train(X, y, trees=20, depth=2, lr=0.3, seed=3)
    assert set(full.feats[:, 0]) == {0}                   # every root split takes the strong feature
    sub = gbdt.train(X, y, trees=20, depth=2, lr=0.3, seed=3, colsample=0.5)
    assert len(set(sub.feats[:, 0])) > 1                  # trees without it split on what they were given
    assert ((sub.predict(X) > 0.5) == y).mean() > 0.9
    again = gbdt.train(X, y, trees=20, depth=2, lr=0.3, seed=3, colsample=0.5)
    assert np.array_equal(again.predict(X), sub.predict(X))


def test_split_is_by_domain_and_fixed():
    parts = {d: split_of(d) for d in (f"site{i}.example" for i in range(400))}
    assert set(parts.values()) == {"tune", "held"}
    assert 0.2 < sum(p == "held" for p in parts.values()) / len(parts) < 0.4
    assert all(split_of(d) == p for d, p in parts.items())
    assert split_of("Site1.Example") == split_of("site1.example")


def test_word_f1_matches_the_benchmark_definition():
    assert word_prf("", "") == (1.0, 1.0, 1.0)
    assert word_prf("words", "") == (0.0, 0.0, 0.0)
    p, r, f = word_prf("the cat the", "The cat sat")
    assert (p, r) == (2 / 3, 2 / 3) and abs(f - 2 / 3) < 1e-9


CONTENT = ["Cider makers in the valley press their apples late in October when the fruit is ripe and sweet.",
           "The juice ferments slowly in oak barrels through the winter, and the cellar stays cool and dark.",
           "By spring the cider is dry, clear and ready to bottle, with a sharp taste of the local orchards."]


def _page(i: int) -> tuple[str, str]:
    nav = "".join(f'<li><a href="/s{k}">Section {k}</a></li>' for k in range(8))
    body = "".join(f"<p>{c} Page {i} adds its own line number {i * 7 + k}.</p>" for k, c in enumerate(CONTENT))
    html = (f"<html><head><title>Page {i}</title></head><body><nav><ul>{nav}</ul></nav>"
            f"<article><h1>Cider notes {i}</h1>{body}</article>"
            f"<footer><p>Copyright the orchard company. All rights reserved. Contact us.</p></footer></body></html>")
    truth = f"Cider notes {i}\n" + "\n".join(f"{c} Page {i} adds its own line number {i * 7 + k}." for k, c in
                                             enumerate(CONTENT))
    return html, truth


def test_train_extractor_cli_on_a_small_folder(tmp_path, capsys):
    data = _folder(tmp_path)
    assert len(load_dev(str(data), part="tune")) == 8
    out = tmp_path / "model.json"
    assert cli_main(["train-extractor", "--data", str(data), "--out", str(out), "--trees", "8", "--depth", "3",
                     "--folds", "2", "--stage2"]) == 0
    model = BlockModel.load(str(out))
    assert model.stage1.names == list(FEATURES) and model.stage2.names == list(CONTEXT_FEATURES)
    assert 0.2 <= model.threshold <= 0.8 and model.meta["tune_f1"] > 0.9 and model.vote_fast is False
    assert model.meta["threshold_from"] == "2-fold out-of-fold by domain (both stages)" and model.meta["oof_f1"] > 0.5
    html, truth = _page(99)
    blocks = page_blocks(html, "https://orchard99.example/a")
    scores = model.score(np.asarray(blocks.rows), blocks.seg.blocks)
    assert scores.shape == (len(blocks.rows),) and ((0 <= scores) & (scores <= 1)).all()
    assert cli_main(["train-extractor", "--data", str(tmp_path / "missing"), "--out", str(out)]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a folder" in err[0]


def test_shipped_model_loads_and_keeps_forum_replies():
    if not os.path.exists(MODEL_PATH):
        pytest.skip("no shipped model")
    model = BlockModel.load(MODEL_PATH)
    assert model.stage1.names == list(FEATURES)
    assert model.stage2 is None or model.stage2.names == list(CONTEXT_FEATURES)
    assert os.path.getsize(MODEL_PATH) < 1_000_000
    posts = "".join(
        f'<div class="post reply" id="post{k}"><div class="author"><a href="/u/{k}">member{k}</a></div>'
        f'<div class="message">{c} I tried this in my own shed last year and it worked well for me.</div></div>'
        for k, c in enumerate(CONTENT))
    nav = "".join(f'<li><a href="/f{k}">Forum {k}</a></li>' for k in range(12))
    html = (f"<html><head><title>Pressing question - Cider forum</title></head><body><nav><ul>{nav}</ul></nav>"
            f"<main><h1>Pressing question</h1><div class='thread'>{posts}</div></main>"
            "<footer><p>Forum software. Terms. Privacy.</p></footer></body></html>")
    ex = extract_page(html, "https://forum.example/t/1")
    for c in CONTENT:
        assert c in ex.text
    assert "Forum 3" not in ex.text


def _folder(tmp_path, n: int = 8):
    data = tmp_path / "dev"
    (data / "html").mkdir(parents=True)
    (data / "ground-truth").mkdir()
    domains = [d for d in (f"orchard{i}.example" for i in range(60)) if split_of(d) == "tune"][:n]
    files = {}
    for i, dom in enumerate(domains):
        fid = f"{i:04d}"
        html, truth = _page(i)
        (data / "html" / f"{fid}.html").write_text(html, encoding="utf-8")
        (data / "ground-truth" / f"{fid}.json").write_text(json.dumps(
            {"url": f"https://{dom}/a", "ground_truth": {"main_content": truth}}), encoding="utf-8")
        files[fid] = {"page_type": "article", "domain": dom}
    (data / "metadata-dev.json").write_text(json.dumps({"files": files}), encoding="utf-8")
    return data


def test_soft_and_mixed_labels():
    from crawl.extract_train import labels_of
    html, truth = _page(3)
    blocks = page_blocks(html, "https://orchard3.example/a").seg.blocks
    hard, soft, mix = (labels_of(blocks, truth, k) for k in ("hard", "soft", "mix"))
    assert ((0 <= soft) & (soft <= 1)).all() and set(np.unique(hard)) <= {0.0, 1.0}
    assert (soft[hard == 1] == 1).all()             # a block found in the truth has all its words there
    long = np.array([len(b.words) >= 8 for b in blocks])
    assert (mix[long] == hard[long]).all() and (mix[~long] == soft[~long]).all()
    assert (soft > hard).any()                      # "Section 3" style links share a word with the truth
    with pytest.raises(ValueError):
        labels_of(blocks, truth, "fuzzy")


def test_train_extractor_bag_labels_and_pairwise_options(tmp_path):
    data = _folder(tmp_path)
    out = tmp_path / "bag.json"
    assert cli_main(["train-extractor", "--data", str(data), "--out", str(out), "--trees", "5", "--depth", "3",
                     "--folds", "2", "--bag", "2", "--labels", "mix", "--pairwise", "1"]) == 0
    model = BlockModel.load(str(out))
    meta = model.meta
    assert meta["bag"] == 2 and meta["labels"] == "mix" and meta["objective"] == "logloss+pairwise"
    assert model.stage1.feats.shape[0] == 10 and model.stage2 is None     # 2 x 5 trees in one ensemble
    plain = tmp_path / "plain.json"
    assert cli_main(["train-extractor", "--data", str(data), "--out", str(plain), "--trees", "5", "--depth", "3",
                     "--folds", "2"]) == 0
    assert not {"bag", "labels", "objective", "pairwise"} & set(BlockModel.load(str(plain)).meta)
