"""The domain bootstrap of bench/extract_f1.py: pages of one site move together, so an interval
over domains must be wider than one over pages when sites differ, and repeatable with its seed."""
import numpy as np

from bench.domain_bootstrap import domain_ci, domain_mean


def _page_ci(scores, rounds=2000, seed=0):
    draw = np.random.default_rng(seed).integers(0, len(scores), size=(rounds, len(scores)))
    return tuple(np.percentile(np.asarray(scores)[draw].mean(axis=1), [2.5, 97.5]))


def test_sites_that_move_together_widen_the_interval_and_the_seed_repeats_it():
    # 10 sites of 10 pages; each site's pages all score alike, sites differ
    rng = np.random.default_rng(1)
    site_level = rng.uniform(0.3, 1.0, size=10)
    scores = [float(site_level[d]) for d in range(10) for _ in range(10)]
    domains = [f"site{d}" for d in range(10) for _ in range(10)]
    lo, hi = domain_ci(scores, domains)
    plo, phi = _page_ci(scores)
    assert lo <= np.mean(scores) <= hi
    assert (hi - lo) > 2 * (phi - plo)     # 10 independent sites, not 100 independent pages
    assert domain_ci(scores, domains) == (lo, hi)
    assert domain_ci(scores, domains, seed=5) != (lo, hi)


def test_one_page_per_site_is_the_page_bootstrap_and_one_site_has_no_spread():
    scores = [0.1, 0.9, 0.5, 0.7, 0.3, 0.8]
    domains = ["a", "b", "c", "d", "e", "f"]
    lo, hi = domain_ci(scores, domains)
    assert 0.1 < lo < np.mean(scores) < hi < 0.9
    assert np.allclose(domain_ci([0.2, 0.4], ["x", "x"]), (0.3, 0.3))


def test_mean_over_domains_counts_each_site_once():
    assert np.isclose(domain_mean([1.0, 1.0, 1.0, 0.0], ["big", "big", "big", "small"]), 0.5)
