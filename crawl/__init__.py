"""cidermill's crawler as a plain library (no Beam): pipelines/crawl_pipeline.py wires it into waves.

Where things live:
    urls.py          canonical URLs, page ids, bad-URL reasons
    safety.py        the address policy: non-http(s) schemes and non-global addresses refused
    robots.py        robots.txt (RFC 9309, protego) with the training opt-out token, per-origin cache
    robots_meta.py   <meta name="robots"> and X-Robots-Tag (noindex, nofollow, none)
    fetch.py         HTTP with timeouts, size cap, type filter, checked redirects, retries
    charset.py       header / BOM / meta / detection decoding of legacy pages
    politeness.py    per-host delay, Crawl-delay, back-off
    priority.py      URL priority and spider-trap heuristics
    frontier.py      seen set, admission (depth, scope, patterns, traps), wave selection, budgets
    sitemap.py       sitemap and sitemap-index parsing
    render_policy.py when --render auto renders a page
    render.py        Playwright + Debian Chromium, request guard, one browser per thread
    extract.py       main text (trafilatura) with images in place, tables, links, metadata
    tables.py        HTML tables as rectangular grids and markdown
    crawler.py       WaveCrawler: one wave's URLs -> page rows, log rows, discovered links
    log_schema.py    Arrow schemas of the crawl log, frontier and links datasets
    warc.py          WARC files -> page rows, page rows -> WARC
"""
