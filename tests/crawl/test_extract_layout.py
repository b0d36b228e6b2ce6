"""The extractor's page-shape features (crawl/extract_layout.py), its second stage's context rows
(crawl/extract_context.py) and the two-stage model file (crawl/extract_stages.py)."""
import numpy as np

from crawl import gbdt
from crawl.extract import parse_html
from crawl.extract_blocks import segment
from crawl.extract_context import CONTEXT_FEATURES, context_features, context_keys
from crawl.extract_layout import LAYOUT_FEATURES, layout_features, tag_path
from crawl.extract_stages import BlockModel

PROSE = ["Cider makers in the valley press their apples late in October when the fruit is ripe and sweet.",
         "The juice ferments slowly in oak barrels through the winter, and the cellar stays cool and dark.",
         "By spring the cider is dry, clear and ready to bottle, with a sharp taste of the local orchards."]
MENU = "".join(f'<li class="item"><a href="/s{k}">Section {k}</a></li>' for k in range(10))
PAGE = (f"<html><body><div class='top'><ul class='menu'>{MENU}</ul></div>"
        f"<div class='main'><h1>Cider notes</h1>{''.join(f'<p>{p}</p>' for p in PROSE)}</div>"
        "<div class='foot'><p>Copyright the orchard company.</p></div></body></html>")


def _blocks():
    return segment(parse_html(PAGE)).blocks


def test_layout_features_find_the_prose_root_the_title_and_the_repeated_menu():
    blocks = _blocks()
    texts = [b.text for b in blocks]
    votes = [1.0 if t in PROSE else 0.0 for t in texts]  # a vote that keeps the three paragraphs
    rows = layout_features(blocks, votes)
    col = {n: i for i, n in enumerate(LAYOUT_FEATURES)}
    assert len(rows) == len(blocks) and all(len(r) == len(LAYOUT_FEATURES) for r in rows)
    prose = [i for i, t in enumerate(texts) if t in PROSE]
    menu = [i for i, t in enumerate(texts) if t.startswith("Section")]
    h1 = texts.index("Cider notes")
    foot = texts.index("Copyright the orchard company.")
    for i in prose:
        assert rows[i][col["in_vote_root"]] == 1.0 and rows[i][col["in_dense_root"]] == 1.0
        assert rows[i][col["after_h1"]] == 1.0 and rows[i][col["rel_h1"]] > 0
    for i in menu + [foot]:
        assert rows[i][col["in_vote_root"]] == 0.0 and rows[i][col["in_dense_root"]] == 0.0
    for i in menu:
        assert rows[i][col["after_h1"]] == 0.0 and rows[i][col["path_log_count"]] == np.log1p(10)
    assert rows[h1][col["in_vote_root"]] == 1.0   # the h1 sits in the prose's container
    assert abs(sum(r[col["word_share"]] for r in rows) - 1.0) < 1e-9
    assert len({tag_path(blocks[i].el) for i in menu}) == 1
    # no vote at all: the vote root is unknown (-1), the dense root still stands
    rows = layout_features(blocks, [0.0] * len(blocks))
    assert rows[prose[0]][col["in_vote_root"]] == -1.0 and rows[prose[0]][col["in_dense_root"]] == 1.0


def test_context_rows_read_neighbours_containers_and_look_alikes():
    blocks = _blocks()
    n = len(blocks)
    prob = np.linspace(0.0, 1.0, n)
    words = np.array([len(b.words) for b in blocks])
    base = np.arange(n * 80, dtype=np.float64).reshape(n, 80)
    anc, path = context_keys(blocks)
    rows = context_features(prob, words, anc, path, base)
    col = {c: i for i, c in enumerate(CONTEXT_FEATURES)}
    assert rows.shape == (n, len(CONTEXT_FEATURES))
    assert rows[0, col["p_prev"]] == -1.0 and rows[1, col["p_prev"]] == prob[0] and rows[0, col["p_next"]] == prob[1]
    menu = [i for i, b in enumerate(blocks) if b.text.startswith("Section")]
    w = np.maximum(words[menu], 1)
    same = (w * prob[menu]).sum() / w.sum()     # the menu items share a path, and their <ul> grandparent
    assert np.allclose(rows[menu, col["p_same_path"]], same) and np.allclose(rows[menu, col["p_grand"]], same)
    top = int(prob.argmax())
    assert rows[top, col["words_scored_higher"]] == 0.0 and rows[:, col["p_page_max"]].max() == 1.0


def test_two_stage_model_round_trips_and_an_old_single_model_still_loads(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.random((600, 80))
    y = (X[:, 0] > 0.5).astype(float)
    s1 = gbdt.train(X, y, trees=5, depth=2, seed=0)
    blocks = _blocks()
    X1 = rng.random((len(blocks), 80))
    anc, path = context_keys(blocks)
    X2 = np.vstack([context_features(s1.predict(X1), np.ones(len(blocks)), anc, path, X1)] * 20)
    s2 = gbdt.train(X2, rng.random(len(X2)) > 0.5, trees=5, depth=2, seed=0)
    m = BlockModel(s1, s2, {"threshold": 0.4, "vote_fast": False})
    m.save(str(tmp_path / "m.json"))
    back = BlockModel.load(str(tmp_path / "m.json"))
    assert back.threshold == 0.4 and back.vote_fast is False
    assert np.allclose(back.score(X1, blocks), m.score(X1, blocks), atol=1e-4)
    s1.meta = {"threshold": 0.45}
    s1.save(str(tmp_path / "old.json"))
    old = BlockModel.load(str(tmp_path / "old.json"))
    assert old.stage2 is None and old.threshold == 0.45 and old.vote_fast is True
    assert np.allclose(old.score(X1, blocks), s1.predict(X1), atol=1e-4)
