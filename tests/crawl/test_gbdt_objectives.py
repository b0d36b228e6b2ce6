"""crawl/gbdt.py beyond plain log-loss: seed bags (one ensemble = the mean of its members' margins) and
the within-group pairwise term (objective="logloss+pairwise")."""
import numpy as np
import pytest

from crawl import gbdt


def _grouped(seed: int = 0, groups: int = 60, per: int = 30):
    """Rows in groups whose level shifts every row's feature: within a group, x0 - the group's offset
    ranks the rows, but the offset itself misleads a model that reads x0 alone."""
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(groups), per)
    offset = rng.normal(0, 1.5, groups)[g]
    z = rng.normal(0, 1, len(g))
    y = (z > 0.3).astype(float)
    X = np.column_stack([z + offset, offset + rng.normal(0, 0.3, len(g)), rng.random(len(g))])
    return X, y, g


def test_a_bag_is_the_mean_of_its_members_margins(tmp_path):
    X, y, _ = _grouped()
    members = [gbdt.train(X, y, trees=12, depth=3, lr=0.3, subsample=0.5, seed=s) for s in range(3)]
    bag = gbdt.bag(members)
    assert bag.leaves.shape == (36, 8) and bag.depth == 3
    assert np.allclose(bag.margin(X), np.mean([m.margin(X) for m in members], axis=0))
    bag.save(tmp_path / "bag.json")   # the same file format: it loads as a plain ensemble
    again = gbdt.Trees.load(tmp_path / "bag.json")
    assert np.allclose(again.margin(X), bag.margin(X), atol=1e-3)
    with pytest.raises(ValueError):
        gbdt.bag([members[0], gbdt.train(X, y, trees=2, depth=2, seed=0)])


def test_pairs_cover_each_group_and_weigh_it_like_its_rows():
    X, y, g = _grouped()
    w = np.random.default_rng(1).random(len(y)) + 0.5
    small = gbdt.Pairs(y, w, g, cap=10_000)               # every pair of every group
    assert (y[small.i] == 1).all() and (y[small.j] == 0).all() and (g[small.i] == g[small.j]).all()
    assert len(small.i) == sum(int(y[g == k].sum() * (1 - y[g == k]).sum()) for k in range(60))
    capped = gbdt.Pairs(y, w, g, cap=16, seed=3)           # 16 drawn pairs per group
    assert len(capped.i) == 16 * len(np.unique(g[small.i]))
    for pairs in (small, capped):
        per_group = np.bincount(g[pairs.i], pairs.w, minlength=60)
        full = np.bincount(g, w, minlength=60)
        has = np.bincount(g[pairs.i], minlength=60) > 0
        assert np.allclose(per_group[has], full[has])
    # the gradient is the derivative of the loss
    m = np.random.default_rng(2).normal(size=len(y))
    grad, _ = small.grad_hess(m, len(y))
    k, eps = 5, 1e-6
    bump = m.copy()
    bump[k] += eps
    assert abs((small.loss(bump) - small.loss(m)) / eps - grad[k]) < 1e-3


def test_the_pairwise_term_ranks_rows_within_their_group():
    X, y, g = _grouped()
    w = np.ones(len(y))
    pairs = gbdt.Pairs(y, w, g, cap=10_000)
    plain = gbdt.train(X, y, w, trees=30, depth=3, lr=0.2, subsample=0.7, seed=0)
    ranked = gbdt.train(X, y, w, trees=30, depth=3, lr=0.2, subsample=0.7, seed=0, objective="logloss+pairwise",
                        groups=g, pairwise=2.0)
    assert pairs.loss(ranked.margin(X)) < 0.95 * pairs.loss(plain.margin(X))   # 112 against 126
    p = ranked.predict(X)                                  # still probabilities a cut can use
    assert ((p > 0.5) == y).mean() > 0.8
    again = gbdt.train(X, y, w, trees=30, depth=3, lr=0.2, subsample=0.7, seed=0, objective="logloss+pairwise",
                       groups=g, pairwise=2.0)
    assert np.array_equal(again.margin(X), ranked.margin(X))
    with pytest.raises(ValueError):
        gbdt.train(X, y, w, trees=2, objective="lambdamart")
