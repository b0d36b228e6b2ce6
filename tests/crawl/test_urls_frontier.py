"""URL canonicalisation, trap heuristics, priorities and the frontier's budgets (pure Python)."""
from crawl.frontier import Frontier, FrontierConfig, url_template
from crawl.priority import priority, trap_reason
import crawl.urls as urls
from crawl.urls import LinkResolver, authority_of, canonicalize, hostname_of, try_canonicalize


def test_authority_keeps_the_port_hostname_does_not():
    """Politeness and the `host` column work per host:port; domain rules match the bare name."""
    url = canonicalize("http://Shop.Example.COM.:8080/a")
    assert authority_of(url) == "shop.example.com:8080" and hostname_of(url) == "shop.example.com"
    assert authority_of(canonicalize("https://example.com:443/")) == "example.com"  # default port dropped
    assert hostname_of("http://[::1]:80/") == "::1" and hostname_of("http://[broken/") == ""


def test_canonicalize_normalises_every_spelling_to_one():
    variants = ["HTTP://Example.COM:80/a/./b/../c?b=2&a=1#frag",
                "http://example.com/a/c?a=1&b=2&utm_source=news&fbclid=x",
                "http://example.com/a/c;jsessionid=ABC?a=1&b=2",
                "http://EXAMPLE.com/a//c?a=1&b=2"]
    assert {canonicalize(v) for v in variants} == {"http://example.com/a/c?a=1&b=2"}
    assert canonicalize("https://x.org:443") == "https://x.org/"
    assert canonicalize("https://x.org:8443/p") == "https://x.org:8443/p"
    assert canonicalize("../x/y.html", "http://h.test/a/b/c.html") == "http://h.test/a/x/y.html"
    assert canonicalize("http://h.test/%7Euser/a b") == "http://h.test/~user/a%20b"


def test_bad_urls_are_reasons_not_exceptions():
    cases = {"javascript:alert(1)": "bad_scheme", "mailto:a@b.c": "bad_scheme", "file:///etc/passwd": "bad_scheme",
             "data:text/html,hi": "bad_scheme", "http://[bad": "invalid_url", "http:///nohost": "invalid_url",
             "": "invalid_url", "http://a b.com/": "invalid_url", "/relative/without/base": "bad_scheme",
             "http://x.com/" + "a" * 3000: "invalid_url"}
    for raw, reason in cases.items():
        assert try_canonicalize(raw) == (None, reason), raw


def test_link_resolver_gives_try_canonicalize_results_and_shares_only_path_independent_links():
    hrefs = ["/a/../b?utm_source=x", "//other.example/p", "HTTPS://Example.com:443/x#f", "rel/page", "../up",
             "?q=1", "/\\\\evil.example/x", "\\\\x", "javascript:void(0)", "http:rel", "http://[::1/", "/a b", ""]
    bases = ["http://site.example/dir/one.html", "http://site.example/other/two.html", "https://site.example/dir/"]
    urls._SITE_LINKS.clear()
    for base in bases:
        resolve = LinkResolver(base)
        for h in hrefs + hrefs:   # the second pass reads the memo
            assert resolve(h) == try_canonicalize(h, base), (base, h)
    shared = {k[2] for k in urls._SITE_LINKS}
    assert "rel/page" not in shared and "../up" not in shared and "?q=1" not in shared   # these read the page's path
    assert {"/a/../b?utm_source=x", "//other.example/p", "HTTPS://Example.com:443/x#f"} <= shared
    assert {k[:2] for k in urls._SITE_LINKS} == {("http", "site.example"), ("https", "site.example")}
    assert LinkResolver("http://[broken/")("/x") == try_canonicalize("/x", "http://[broken/")


def test_traps_and_priorities():
    assert trap_reason("http://h/a/b/a/b/a/b/a/b/") == "trap:repeating_path"
    assert trap_reason("http://h/" + "/".join(f"s{i}" for i in range(20))) == "trap:deep_path"
    assert trap_reason("http://h/x?" + "&".join(f"k{i}=1" for i in range(10))) == "trap:many_params"
    assert trap_reason("http://h/en/cider.html") is None
    good = priority("http://h/en/cider.html", 1)
    assert good > priority("http://h/calendar/2024/01/", 1)
    assert good > priority("http://h/list?page=7", 1)
    assert good > priority("http://h/x?sessionid=abc", 1)
    assert good > priority("http://h/en/cider.html", 3)
    assert url_template("http://h/calendar/2024/01/") == url_template("http://h/calendar/1999/12/")


def test_frontier_budgets_scope_and_seen_set():
    f = Frontier(FrontierConfig(max_depth=2, max_pages=5, max_pages_per_host=3, wave_size=4, max_per_template=3))
    f.add_seed("http://a.test/")
    f.add_seed("http://b.test/")
    assert f.add("http://a.test/", 1, "http://b.test/", "link") is None  # already seen: silently ignored
    assert f.add("http://c.test/x", 1, "http://a.test/", "link") == "out_of_scope"
    assert f.add("http://a.test/deep", 3, "http://a.test/", "link") == "depth"
    for i in range(5):
        assert f.add(f"http://a.test/p{i}.html", 1, "http://a.test/", "link") is None
    reasons = [f.add(f"http://a.test/cal/{2000 + i}/01/", 1, "http://a.test/", "link") for i in range(6)]
    assert reasons.count("trap:template_limit") == 3
    wave = f.select()
    assert len(wave) == 4 and wave[0]["depth"] == 0  # seeds first (highest priority)
    assert sum(e["host"] == "a.test" for e in wave) <= 3
    f.record_attempts(wave, {})
    assert f.fetched_per_host["a.test"] == 3
    assert f.select() == []  # a.test is at its per-host cap and b.test has nothing left
    assert f.pending  # what was not crawled stays queued (logged as "limit" at the end)
    f.config.max_pages_per_host = 0
    assert len(f.select()) == 1  # total budget of 5 pages


def test_include_exclude_patterns():
    f = Frontier(FrontierConfig(include=[r"/en/"], exclude=[r"\.pdf$"]))
    f.add_seed("http://a.test/")
    assert f.add("http://a.test/en/x.html", 1, None, "link") is None
    assert f.add("http://a.test/de/x.html", 1, None, "link") == "excluded"
    assert f.add("http://a.test/en/x.pdf", 1, None, "link") == "excluded"
    import pytest
    from corpus.errors import ConfigError
    with pytest.raises(ConfigError):
        Frontier(FrontierConfig(include=["(unclosed"]))
