"""Learned crawl order on the trap site: more filter-passing pages, fewer trap pages, robots obeyed."""
from crawl.frontier import FrontierConfig
from crawl.learned_frontier import LearnedFrontier
from crawl.learned_priority import LearnedPriority, anchor_score, prefixes
from pipelines.frontier_eval import simulate


def test_learned_order_beats_url_shape_order_with_robots_obeyed():
    learned, shape = simulate("learned", 100, log=True), simulate("shape", 100)
    assert learned["fetched"] == shape["fetched"] == 100
    assert learned["passed_unique"] > shape["passed_unique"]
    assert learned["trap_pages"] < shape["trap_pages"]
    for r in (learned, shape):
        assert r["robots_violations"] == 0 and r["robots_refused"] >= 1   # /cart/ links met, never fetched
    # every fetched URL says why it came when it did
    scored = [row for row in learned["log"] if row["parts"]]
    assert scored and set(scored[-1]["parts"]) == {"shape", "quality", "language", "diversity", "anchor"}
    assert abs(sum(scored[-1]["parts"].values()) - scored[-1]["priority"]) < 1e-3


def test_priority_parts_follow_what_was_fetched():
    lp = LearnedPriority(("en",))
    good, bad = "http://s.example/articles/a/1", "http://s.example/forum/1"
    for i in range(5):
        lp.observe(f"http://s.example/articles/a/{i}", 1.0, "en", "apple")
        lp.observe(f"http://s.example/forum/{i}", 0.0, "en", None)
        lp.observe(f"http://s.example/fr/x/{i}", 1.0, "fr", "pomme")
    pg, pb = lp.score(good, 2)[1], lp.score(bad, 2)[1]
    assert pg["quality"] > 0 > pb["quality"]
    assert lp.score("http://s.example/fr/x/9", 2)[1]["language"] < 0 == pg["language"]
    assert anchor_score("How the press shapes the juice", "content") > 0 > anchor_score("Next", "nav")
    assert prefixes("http://s.example/a/b/c.html") == ["s.example/a/b/", "s.example/a/", "s.example/"]


def test_url_explosion_keeps_memory_bounded_and_records_the_trap():
    fr = LearnedFrontier(FrontierConfig(max_depth=5), order="learned", max_pending=2000, max_per_template=50)
    fr.add_seed("http://s.example/")
    n = 40_000

    def word(i):   # distinct digit-free path words: every one its own template
        return "".join(chr(97 + (i // 26 ** k) % 26) for k in range(4))
    for i in range(n):   # generated links: facets x pagination, and distinct words
        fr.add(f"http://s.example/search?color=c{i % 97}&size={i % 13}&page={i}", 1, None, "Next", "nav")
        if i % 10 == 0:
            fr.add(f"http://s.example/{word(i)}/", 1, None, "word", "nav")
    assert len(fr.pending) <= 2000 and len(fr.seen) <= n // 10 + 50 + 1
    assert fr.refused["trap:template_limit"] >= n - 50
    assert fr.refused["frontier_full"] > 0 and fr.refused_samples
