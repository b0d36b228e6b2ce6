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
    visibility.py    what a visitor sees in static HTML (hidden elements, templates, scripts)
    render_policy.py when --render auto renders a page (visible vs script-held text)
    render.py        Playwright + Debian Chromium, request guard, one browser per thread
    extract.py       main text (block classifier) with images in place, tables, links, metadata
    extract_blocks.py a page cut into text blocks, and each block's features
    extract_groups.py repeated items (posts, answers, entries) kept together
    gbdt.py          tiny gradient-boosted trees in numpy (the block classifier; extract_model.json)
    extract_train.py dev data, domain split, word F1, training the block classifier
    tables.py        HTML tables as rectangular grids and markdown
    crawler.py       WaveCrawler: one wave's URLs -> page rows, log rows, discovered links
    log_schema.py    Arrow schemas of the crawl log, frontier and links datasets
    warc.py          WARC files -> page rows, page rows -> WARC
    image_fetch.py   images fetched under the same robots.txt, politeness and address rules
    image_warc.py    image records of WARC files, matched to pages' <img src> by canonical URL
"""
