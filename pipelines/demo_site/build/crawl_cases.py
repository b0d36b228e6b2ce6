"""Crawler cases: robots.txt and its labels, robots meta tags and X-Robots-Tag, redirects, the
slow/huge/404/trap routes, legacy encodings, the login form, malformed and binary pages, invalid
links, non-HTML files, and the JavaScript-rendered pages."""
from __future__ import annotations

import base64
import json
import random

from crawl.identity import BOT_TOKEN, OPTOUT_TOKEN
from pipelines.demo_site.build.page import Page, esc, paragraphs_html, strip_headings

CRAWLER = BOT_TOKEN     # the tokens ROBOTS_TXT below is written for
OPT_OUT = OPTOUT_TOKEN

ROBOTS_TXT = """# robots.txt for the Cider Mill Gazette demo site (a cidermill test fixture)

User-agent: CiderBot
Disallow: /private/
Allow: /private/open-notice.html
Disallow: /*.php$
Disallow: /*/print/

# Training opt-out: pages below may be crawled by CiderBot but must not be used for training.
User-agent: CiderBot-Extended
Disallow: /no-train/
Disallow: /*-notrain.html$

User-agent: *
Crawl-delay: 10
Disallow: /private/
Disallow: /fr/
Disallow: /calendar/
Disallow: /account/

Sitemap: {{BASE_URL}}/sitemap.xml
"""


def robots_labels(path: str) -> dict:
    """Hand-written reading of ROBOTS_TXT (tests check protego agrees on every path)."""
    bare = path.split("?", 1)[0]
    cider = not (
        (path.startswith("/private/") and path != "/private/open-notice.html")
        or path.endswith(".php")                                   # /*.php$ (query string breaks the $)
        or (bare.count("/") >= 3 and bare.split("/")[2] == "print")  # /*/print/
    )
    star = not path.startswith(("/private/", "/fr/", "/calendar/", "/account/"))
    extended = not (path.startswith("/no-train/") or path.endswith("-notrain.html"))
    return {CRAWLER: cider, "*": star, OPT_OUT: extended}


def _page(path, title, paras, **kw) -> Page:
    return Page(path=path, title=title, body=paragraphs_html(paras), paragraphs=strip_headings(paras), **kw)


def _b64json(obj) -> str:
    return base64.b64encode(json.dumps(obj, ensure_ascii=False).encode()).decode()


# -- robots.txt cases -------------------------------------------------------------------------
def robots_pages(print_source: Page) -> list[Page]:
    pages = [
        _page("/private/staff-notes.html", "Staff notes", [
            "Reminder for staff: the pressing shed key is now kept in the office, not under the flower pot.",
            "The new pallets arrive on Thursday morning, so please keep the yard clear until noon."],
            categories=["robots_disallowed"], notes="disallowed for CiderBot and *; listed in the sitemap"),
        _page("/private/budget.html", "Draft budget 2025", [
            "The draft budget assumes a harvest of forty tonnes and a ten percent rise in glass prices.",
            "Nothing here is final until the committee approves it in January."],
            categories=["robots_disallowed"], in_sitemap=False),
        _page("/private/open-notice.html", "Public notice", [
            "The orchard will be closed to visitors on the first weekend of December for tree surgery.",
            "Thank you for your patience while we look after the oldest trees."],
            categories=["robots_allow_exception"], notes="Allow overrides Disallow: /private/ for CiderBot only"),
        _page("/no-train/essay.html", "Why we still prune by hand", [
            "Every winter someone asks why we do not use machines to prune our trees, and every winter we give the same answer.",
            "A standard apple tree is shaped over decades. Each cut decides where the tree will put its energy for the next few years, and a careless cut on an old limb invites rot that may take a decade to show. Machines cut by height and width; people cut by looking at each branch.",
            "Hand pruning is slow. A skilled pruner manages perhaps fifteen old trees in a day, and the work happens in cold, short days when the trees are dormant. But the reward is a tree that stays healthy and productive for a century or more.",
            "The author of this essay asked that it not be used to train machine learning models, which is why it sits in a folder that our robots.txt marks for the training opt-out agent."],
            categories=["prose", "training_opt_out"], author="Hannah Vogel", date="2024-01-20"),
    ]
    archive = _page("/archive/list.php", "Archive", [
        "The archive lists every issue of the Gazette since 2009, ten issues per page.",
        "Use the page links to move through the older issues."],
        categories=["robots_wildcard_dollar"], notes="Disallow: /*.php$ matches; ?page=2 does not")
    archive.body += '\n<p><a href="/archive/list.php?page=2">Older issues</a></p>'
    page2 = Page(**{**archive.__dict__, "categories": ["robots_wildcard_dollar", "query_string"],
                    "in_sitemap": False, "extra": {"same_file_as": "/archive/list.php"},
                    "notes": "same file as /archive/list.php; Disallow: /*.php$ does not match with a query"})
    page2.path = "/archive/list.php?page=2"
    pages += [archive, page2]
    # a print version of an article (Disallow: /*/print/ for CiderBot)
    pr = Page(path="/en/print/cider-history.html", title=print_source.title, body=print_source.body,
              paragraphs=list(print_source.paragraphs), author=print_source.author, date=print_source.date,
              categories=["prose", "print_version"], notes="print copy of /en/cider-history.html")
    pages.append(pr)
    return pages


# -- robots meta tags / X-Robots-Tag ------------------------------------------------------------
def meta_pages() -> list[Page]:
    def link(href, text):
        return f'<p>Read next: <a href="{href}">{esc(text)}</a>.</p>'

    pages = []
    paras = ["This announcement was only meant for people who follow the link from our newsletter.",
             "Search engines are asked not to index it, but they may follow its links."]
    pg = _page("/meta/noindex.html", "Members' announcement", paras, meta_robots=["noindex"],
               categories=["meta_noindex"])
    pg.body += "\n" + link("/meta/from-noindex.html", "the follow-up note")
    pages.append(pg)
    pages.append(_page("/meta/from-noindex.html", "Follow-up note", [
        "This note is linked only from a page marked noindex, which still allows following its links."],
        categories=["linked_from_noindex"], hub=None))

    paras = ["This page may be indexed, but crawlers are asked not to follow any of its links.",
             "The link below leads to a page that is linked from nowhere else."]
    pg = _page("/meta/nofollow.html", "Links we do not vouch for", paras, meta_robots=["nofollow"],
               categories=["meta_nofollow"])
    pg.body += "\n" + link("/meta/nofollow-target.html", "an unvouched page")
    pages.append(pg)
    pages.append(_page("/meta/nofollow-target.html", "Unvouched page", [
        "A crawler that honours nofollow never reaches this page."], categories=["only_linked_from_nofollow"],
        hub=None, in_sitemap=False))

    paras = ["The robots meta tag on this page says none, which means noindex and nofollow together."]
    pg = _page("/meta/none.html", "Nothing to see here", paras, meta_robots=["none"], categories=["meta_none"])
    pg.body += "\n" + link("/meta/none-target.html", "a hidden page")
    pages.append(pg)
    pages.append(_page("/meta/none-target.html", "Hidden page", [
        "A crawler that honours the none directive never reaches this page."],
        categories=["only_linked_from_nofollow"], hub=None, in_sitemap=False))

    pages.append(_page("/meta/x-robots-noindex.html", "Old price list", [
        "This price list is out of date and is kept only for our own records.",
        "The server sends an X-Robots-Tag header asking crawlers not to index it."],
        headers={"X-Robots-Tag": "noindex"}, categories=["x_robots_tag_noindex"]))
    pg = _page("/meta/ciderbot-noindex.html", "Draft recipe", [
        "This recipe for spiced perry is still being tested in our kitchen.",
        "Only CiderBot is asked not to index it; other robots see no restriction."],
        categories=["meta_noindex_agent"])
    pg.extra_head = '<meta name="ciderbot" content="noindex">\n'
    pg.extra["agent_meta_robots"] = {"ciderbot": ["noindex"]}
    pages.append(pg)
    return pages


# -- redirects, 404, slow, huge, trap, non-HTML files ---------------------------------------------
def route_pages() -> list[Page]:
    pages = [_page("/redirect/final.html", "You have arrived", [
        "This page is the end of a redirect chain with three hops.",
        "A crawler should record this URL as the final address of the start page."],
        categories=["redirect_target"], hub=None, in_sitemap=False)]
    pages.append(_page("/sitemap-only.html", "Only in the sitemap", [
        "No page on this site links here. A crawler can only find this page through sitemap.xml."],
        categories=["sitemap_only"], hub=None))
    pages.append(_page("/about.html", "About the Gazette", [
        "The Cider Mill Gazette is a small magazine about orchards, fruit and the people who look after them. It started in 2009 as a photocopied newsletter for a village cider club and moved online a few years later.",
        "We publish articles in several languages, written by volunteers who grow, press or simply enjoy apples and pears. Our writers include farmers, beekeepers, teachers and retired engineers, and every article is read by at least two other members before it appears.",
        "The Gazette carries no advertising. Running costs are covered by member subscriptions and by the sale of our calendar, which lists pressing days, blossom walks and wassail evenings across the region.",
        "If you would like to write for us, send a short outline of your idea. We are especially keen to hear from young growers and from orchards in places where apples are not traditionally grown."],
        categories=["prose"], author="The editors", date="2024-01-01", hub=None))
    for path, status, kind, extra in [
            ("/redirect/start.html", 301, "redirect", {"location": "/redirect/hop-1.html", "final": "/redirect/final.html", "hops": 3}),
            ("/redirect/hop-1.html", 302, "redirect", {"location": "{{BASE_URL}}/redirect/hop-2.html", "final": "/redirect/final.html"}),
            ("/redirect/hop-2.html", 307, "redirect", {"location": "final.html", "final": "/redirect/final.html"}),
            ("/loop/a.html", 302, "redirect", {"location": "/loop/b.html", "final": None, "loop": True}),
            ("/loop/b.html", 302, "redirect", {"location": "/loop/a.html", "final": None, "loop": True})]:
        pages.append(Page(path=path, title="", kind=kind, status=status, dynamic=True,
                          hub="/" if path in ("/redirect/start.html", "/loop/a.html") else None,
                          categories=["redirect_loop" if extra.get("loop") else "redirect_chain"],
                          quality="none", extra=extra, in_sitemap=False))
    pages.append(Page(path="/slow.html", title="Slow page", dynamic=True, categories=["slow"], quality="none",
                      expected_snippets=["This page took a long time to answer."], in_sitemap=False,
                      extra={"delay_seconds": "DemoSite(slow_seconds=...) (default 15)"}))
    pages.append(Page(path="/huge.html", title="A very long page", dynamic=True, categories=["huge"],
                      quality="none", in_sitemap=False, extra={"bytes": 50 * 1024 * 1024, "streamed": True}))
    pages.append(Page(path="/calendar/2024/01/", title="Orchard events: 2024-01", dynamic=True,
                      categories=["spider_trap"], quality="none", in_sitemap=False,
                      extra={"pattern": "/calendar/YYYY/MM/", "links": ["prev", "next"], "years": [1, 9999]}))
    pages.append(Page(path="/missing-page.html", title="", dynamic=True, status=404, categories=["not_found"],
                      quality="none", in_sitemap=False))
    return pages


def file_resources() -> dict[str, tuple[bytes, dict]]:
    """Non-HTML files linked from the site: path -> (bytes, ground-truth entry)."""
    pdf = (b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
           b"2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\n"
           b"trailer << /Root 1 0 R >>\n%%EOF\n")
    csv = "variety,harvest_month,sugar_brix\nBramley,October,11.2\nDabinett,November,13.5\n".encode()
    return {
        "/files/annual-report.pdf": (pdf, {"kind": "pdf", "content_type": "application/pdf",
                                           "categories": ["non_html_link"]}),
        "/files/harvest.csv": (csv, {"kind": "csv", "content_type": "text/csv; charset=utf-8",
                                     "categories": ["non_html_link"]}),
    }


# -- encodings, login, malformed, binary, invalid links -------------------------------------------
SJIS_PARAS = [
    "この記事はシフトJISという古い文字コードで書かれています。文字コードはHTTPヘッダーではなく、メタタグだけで宣言されています。",
    "弘前のりんご公園では、毎年秋に収穫祭が開かれます。園内には六十種類以上のりんごの木が植えられていて、訪れた人は自分でりんごをもぎ取ることができます。",
    "正しく表示されていれば、この文章は普通の日本語として読めるはずです。",
]
CP1252_PARAS = [
    "Cette page est encodée en windows-1252 et ne le déclare que dans sa balise meta, pas dans l’en-tête HTTP.",
    "Le « cidre bouché » coûte environ 6 € la bouteille ; le pommeau, un peu plus. Œnologues et amateurs s’accordent sur un point : la patience paie.",
    "Auch Umlaute wie ä, ö, ü und das ß müssen nach dem Dekodieren korrekt erscheinen.",
]


def legacy_pages() -> list[Page]:
    return [
        _page("/legacy/shift-jis.html", "シフトJISのページ", SJIS_PARAS, lang="ja", encoding="shift_jis",
              content_type="text/html", charset_in_header=False, categories=["legacy_encoding", "prose"],
              notes="bytes are Shift_JIS; only <meta charset=\"shift_jis\"> says so"),
        _page("/legacy/windows-1252.html", "Une page en windows-1252", CP1252_PARAS, lang="fr",
              encoding="windows-1252", content_type="text/html", charset_in_header=False,
              categories=["legacy_encoding", "prose"],
              expected_snippets=[CP1252_PARAS[0], "coûte environ 6 € la bouteille", "Œnologues et amateurs s’accordent"],
              notes="bytes are windows-1252 (euro sign 0x80, curly quotes); only the meta tag says so"),
    ]


def login_pages() -> list[Page]:
    body = ('<p>Members can sign in to see their order history and volunteer shifts.</p>\n'
            '<form class="login" action="/account/login.html" method="post">\n'
            '<label>Email <input type="email" name="email" autocomplete="username"></label>\n'
            '<label>Password <input type="password" name="password" autocomplete="current-password"></label>\n'
            '<button type="submit">Sign in</button>\n</form>\n'
            '<p><a href="/account/reset.html">Forgot your password?</a></p>')
    return [Page(path="/account/login.html", title="Sign in", body=body,
                paragraphs=["Members can sign in to see their order history and volunteer shifts."],
                categories=["login_form"], quality="none",
                notes="a password form; POST answers 403; /account/reset.html is a 404"),
            Page(path="/account/reset.html", title="", dynamic=True, status=404, categories=["not_found"],
                 quality="none", in_sitemap=False, hub=None)]


MALFORMED = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Broken markup</title>
<body>
<div class="main"><p>Despite the broken markup, this sentence about pear blossom should survive extraction.
<p>Unclosed <b>bold <i>and italic text runs on<div><span>
</div></div></div></div></td></tr></table>
<p class=unquoted attr=>Another paragraph with a <a href="/en/">link that never closes
<!-- an unterminated comment that swallows nothing important
<p>\x00\x01 garbage &#xZZZ; &bogus; <<<>>> </p>
<script>document.write("<p>written by script</p>"</script>
<p>The last sentence sits after a pile of garbage and should also be found.
"""


def bad_pages() -> list[Page]:
    rng = random.Random(1234)
    binary = bytes(rng.randrange(256) for _ in range(4096))
    invalid = ["http://[::1", "javascript:alert(1)", "mailto:orchard@example.com", "file:///etc/passwd",
               "data:text/html,<b>hi</b>", "http://exa mple.com/", "ftp://ftp.example.com/pub/file.txt",
               "http://%zz/", "//", "http://", "tel:+442079460958", "http://127.0.0.1:99999/",
               "/" + "a" * 5000, "#top", ""]
    items = "\n".join(f'<li><a href="{h.replace(chr(34), "&quot;")}">link {i}</a></li>' for i, h in enumerate(invalid))
    body = (f"<p>This page links to addresses that a crawler must skip or handle without crashing.</p>\n"
            f"<ul class=\"weird-links\">\n{items}\n<li><a href=\"/en/cider-history.html\">a valid link</a></li>\n</ul>\n"
            f'<p>Files: <a href="/files/annual-report.pdf">annual report (PDF)</a>, '
            f'<a href="/files/harvest.csv">harvest data (CSV)</a>.</p>')
    return [
        Page(path="/bad/malformed.html", title="Broken markup", document=MALFORMED, categories=["malformed_html"],
             quality="low", paragraphs=["Despite the broken markup, this sentence about pear blossom should survive extraction."],
             expected_snippets=["Despite the broken markup, this sentence about pear blossom should survive extraction."]),
        Page(path="/bad/binary.html", title="", raw=binary, categories=["binary_as_html"], quality="none", lang=None,
             expected_snippets=[], notes="4096 random bytes served as text/html"),
        Page(path="/bad/empty.html", title="", raw=b"", categories=["empty_body"], quality="none", lang=None,
             expected_snippets=[]),
        Page(path="/bad/invalid-links.html", title="Strange links", body=body,
             paragraphs=["This page links to addresses that a crawler must skip or handle without crashing."],
             categories=["invalid_links", "non_html_link"], quality="none",
             extra={"invalid_links": invalid}),
        Page(path="/" + "a" * 5000, title="", dynamic=True, status=404, categories=["not_found", "long_url"],
             quality="none", in_sitemap=False, hub=None, notes="a 5001-character path linked from /bad/invalid-links.html"),
    ]


# -- JavaScript-rendered pages --------------------------------------------------------------------
SHELL = """<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<title>{title}</title>
<link rel="stylesheet" href="/static/site.css">
</head>
<body>
<header class="site-header"><a class="brand" href="/">Cider Mill Gazette</a></header>
<main id="app">{static}</main>
<noscript>Please enable JavaScript to read this article.</noscript>
<script>
function cmRender(data, keep) {{
  var app = document.getElementById('app');
  if (!keep) {{ app.innerHTML = ''; }}
  var art = document.createElement('article');
  if (data.title) {{
    var h = document.createElement('h1'); h.textContent = data.title; art.appendChild(h);
    document.title = data.title + ' | Cider Mill Gazette';
  }}
  data.paragraphs.forEach(function (t) {{
    var p = document.createElement('p'); p.textContent = t; art.appendChild(p);
  }});
  app.appendChild(art);
}}
function cmDecode(b64) {{
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(b64), function (c) {{ return c.charCodeAt(0); }})));
}}
{script}
</script>
</body>
</html>
"""

APP_SHELL = {"title": "Bees in the Orchard", "paragraphs": [
    "An apple orchard in blossom is one of the best places for a beehive, and a good beehive is one of the best things for an orchard. Most apple varieties cannot pollinate themselves: pollen has to travel from the flowers of one variety to those of another, and honeybees do most of that carrying.",
    "A strong colony sends out thousands of foragers on a warm spring morning. Each bee tends to stay faithful to one kind of flower during a trip, which makes her an efficient pollinator. Growers often place one or two hives per hectare during the short blossom period, then move them on when the petals fall.",
    "Wild bees matter too. Mason bees and bumblebees fly in cooler, damper weather than honeybees, and in a cold spring they may do most of the work. Leaving patches of bare soil, old wood and flowering hedges around the orchard gives them places to nest.",
    "Spraying during blossom is the greatest danger. Careful growers check the label of every product, spray in the evening when bees have gone home, and talk to the beekeeper before they do anything at all.",
]}
FETCHED = {"title": "Apfelessig selbst herstellen", "paragraphs": [
    "Apfelessig entsteht in zwei Schritten. Zuerst vergären Hefen den Zucker im Apfelsaft zu Alkohol, danach verwandeln Essigsäurebakterien den Alkohol in Essigsäure. Beide Schritte brauchen vor allem Zeit und Sauerstoff.",
    "Für den Anfang genügt ein Glasgefäß mit weiter Öffnung, das mit einem Tuch abgedeckt wird. Gibt man etwas unpasteurisierten Essig aus einer früheren Herstellung dazu, bildet sich schneller die sogenannte Essigmutter, eine gallertartige Schicht aus Bakterien.",
    "Nach sechs bis zehn Wochen bei Zimmertemperatur ist der Essig meist fertig. Man erkennt es am Geruch und daran, dass er deutlich sauer schmeckt. Danach wird er gefiltert, in saubere Flaschen gefüllt und kühl gelagert.",
    "Selbstgemachter Essig eignet sich hervorragend für Salate und zum Einlegen von Gemüse. Für die Konservierung sollte man allerdings nur Essig mit bekanntem Säuregehalt verwenden.",
]}
LAZY_STATIC = "Frost is the orchard's most feared visitor in spring, and a single cold night can undo a year of work."
LAZY = {"title": None, "paragraphs": [
    "The danger comes when blossom is open. A flower can survive a light frost while it is still a tight bud, but once the petals spread, temperatures just below freezing can kill the tiny fruit at its centre.",
    "Growers have tried many defences. Some light small fires or burners between the rows, others run large fans that pull warmer air down from a few metres above the ground. The strangest method is to spray the trees with water all night: as the water freezes it releases heat and holds the blossom at zero degrees.",
    "Site matters most of all. Cold air flows downhill like water and collects in hollows, so old orchards were planted on gentle slopes where the frost could drain away. A hedge at the bottom of a slope can trap that cold air and make things worse.",
    "Weather forecasts help, but every orchard has its own microclimate. Many growers keep a simple thermometer at blossom height and check it before dawn on every clear, still night in April.",
]}

# A single-file JavaScript wiki (built like TiddlyWiki): every entry sits in a hidden store element
# (display:none) and a script draws the default entries into the story column on load. The static
# page shows only a header and a short notice; the store's text must not count as visible.
WIKI_ENTRIES = [
    ("Pressing Day", "pressing", [
        "Pressing day starts before sunrise, when the apples are still cold from the night. Cold fruit gives a cleaner juice and keeps the wasps away until the work is well under way.",
        "The fruit is washed in a trough, milled into a coarse pulp called pomace, and stacked in cloths on the bed of the press. Each layer is folded like a parcel before the next one goes on top.",
    ]),
    ("Choosing Apples", "orchard", [
        "A good cider blend needs sugar, acid and tannin. Sweet apples give the alcohol, sharp apples keep the cider lively, and bittersweet varieties add the dry grip that makes it taste of the farm.",
        "Windfalls are fine if they are sound, but any fruit with brown rot goes to the pigs. One bad apple really can spoil a barrel, because the rot carries wild yeasts and vinegar bacteria.",
    ]),
    ("Keeping the Barrels", "cellar", [
        "Oak barrels must never dry out between seasons. Keepers fill them with water for a week before pressing, so that the staves swell and the joints close without a single drip.",
        "During fermentation the bung stays loose and a little foam climbs out of the barrel every morning. When the foam stops, the keeper tops the barrel up and closes it tight for the winter.",
    ]),
    ("Wassail Night", "custom", [
        "In January the village walks to the oldest tree in the orchard, sings to it and pours cider over its roots. Toast soaked in cider is hung in the branches for the robins, who guard the trees.",
        "The noise of pots, pans and old shotguns is meant to wake the trees and scare away bad spirits. Whatever the reason, the evening ends in the barn with hot cider and a fiddle.",
    ]),
]
WIKI_HIDDEN_ENTRY = ("Draft: Perry Notes", "draft", [
    "Unfinished notes on perry pears, kept in the store but not shown: the wiki draws only its default entries.",
])


def _wiki_store() -> str:
    items = []
    for title, tag, paras in WIKI_ENTRIES + [WIKI_HIDDEN_ENTRY]:
        items.append(f'<div title="{esc(title)}" tags="{tag}"><pre>{esc(chr(10).join(paras))}</pre></div>')
    default = " ".join(f"[[{t}]]" for t, _, _ in WIKI_ENTRIES)
    items.append(f'<div title="DefaultTiddlers"><pre>{esc(default)}</pre></div>')
    return "\n".join(items)


WIKI_DOC = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Cider Mill Wiki</title>
<link rel="stylesheet" href="/static/site.css">
</head>
<body>
<header class="site-header"><a class="brand" href="/">Cider Mill Gazette</a> <span>Wiki</span></header>
<div id="story"><p class="loading">The wiki is starting. Entries appear in a moment.</p></div>
<div id="storeArea" style="display:none">
__STORE__
</div>
<script>
(function () {
  var store = {};
  Array.prototype.forEach.call(document.querySelectorAll('#storeArea > div'), function (d) {
    store[d.getAttribute('title')] = d.querySelector('pre').textContent;
  });
  var titles = (store['DefaultTiddlers'].match(/\\[\\[([^\\]]+)\\]\\]/g) || []).map(function (m) { return m.slice(2, -2); });
  var story = document.getElementById('story');
  story.innerHTML = '';
  titles.forEach(function (t) {
    var art = document.createElement('article'); art.className = 'tiddler';
    var h = document.createElement('h2'); h.textContent = t; art.appendChild(h);
    store[t].split('\\n').forEach(function (para) {
      var p = document.createElement('p'); p.textContent = para; art.appendChild(p);
    });
    story.appendChild(art);
  });
  document.title = titles[0] + ' | Cider Mill Wiki';
})();
</script>
</body>
</html>
"""


def js_pages() -> list[Page]:
    shell = SHELL.format(lang="en", title="Cider Mill Gazette", static='<p class="loading">Loading&hellip;</p>',
                         script=f'cmRender(cmDecode("{_b64json(APP_SHELL)}"));')
    fetch = SHELL.format(lang="de", title="Cider Mill Gazette", static='<p class="loading">Wird geladen&hellip;</p>',
                         script="fetch('/js/data/article.json').then(function (r) { return r.json(); })"
                                ".then(function (d) { cmRender(d); });")
    lazy_static = (f'<article><h1>Frost Nights in the Orchard</h1><p>{esc(LAZY_STATIC)}</p></article>'
                   '<div class="spacer" style="height: 3000px">Scroll down to keep reading.</div>'
                   '<div id="sentinel"></div>')
    lazy = SHELL.format(lang="en", title="Frost Nights in the Orchard | Cider Mill Gazette", static=lazy_static, script=(
        f'var cmLazy = "{_b64json(LAZY)}", cmDone = false;\n'
        "function cmMore() { if (cmDone) return; cmDone = true; cmRender(cmDecode(cmLazy), true); }\n"
        "new IntersectionObserver(function (es) { if (es.some(function (e) { return e.isIntersecting; })) cmMore(); })"
        ".observe(document.getElementById('sentinel'));\n"
        "window.addEventListener('scroll', function () { if (window.scrollY > 1500) cmMore(); });"))
    return [
        Page(path="/js/app-shell.html", title=APP_SHELL["title"], lang="en", document=shell, js="inline",
             paragraphs=APP_SHELL["paragraphs"], categories=["js_rendered", "prose"],
             expected_snippets=[], js_only_snippets=[APP_SHELL["paragraphs"][0][:90], APP_SHELL["paragraphs"][-1][:80]],
             extra={"static_text": ["Loading…"], "static_title": "Cider Mill Gazette"},
             notes="static HTML is an empty shell; an inline script decodes base64 JSON and inserts the article"),
        Page(path="/js/fetch-article.html", title=FETCHED["title"], lang="de", document=fetch, js="fetch",
             paragraphs=FETCHED["paragraphs"], categories=["js_rendered", "prose"], expected_snippets=[],
             js_only_snippets=[FETCHED["paragraphs"][0][:80], FETCHED["paragraphs"][-1][:80]],
             extra={"fetches": ["/js/data/article.json"], "static_text": ["Wird geladen…"],
                    "static_title": "Cider Mill Gazette"},
             notes="the article is fetched from /js/data/article.json after load"),
        Page(path="/js/lazy-scroll.html", title="Frost Nights in the Orchard", lang="en", document=lazy, js="scroll",
             paragraphs=[LAZY_STATIC] + LAZY["paragraphs"], categories=["js_rendered", "lazy_loaded", "prose"],
             expected_snippets=[LAZY_STATIC], js_only_snippets=[LAZY["paragraphs"][0][:80], LAZY["paragraphs"][-1][:80]],
             notes="first paragraph is static; the rest is inserted when the page is scrolled past 1500px"),
        Page(path="/js/wiki.html", title=WIKI_ENTRIES[0][0], lang="en",
             document=WIKI_DOC.replace("__STORE__", _wiki_store()), js="wiki",
             paragraphs=[x for t, _, paras in WIKI_ENTRIES for x in [t, *paras]],
             categories=["js_rendered", "prose"], expected_snippets=[],
             js_only_snippets=[WIKI_ENTRIES[0][2][0][:80], WIKI_ENTRIES[-1][2][-1][:80]],
             extra={"static_text": ["The wiki is starting."], "static_title": "Cider Mill Wiki",
                    "hidden_store": "#storeArea", "not_drawn": [WIKI_HIDDEN_ENTRY[2][0]]},
             notes="single-file JS wiki: the entries sit in a display:none store; a script draws the default "
                   "entries into #story (paragraphs = the drawn headings and text)"),
    ]


def js_data_files() -> dict[str, tuple[bytes, dict]]:
    data = json.dumps(FETCHED, ensure_ascii=False, indent=1).encode()
    return {"/js/data/article.json": (data, {"kind": "json", "content_type": "application/json",
                                             "categories": ["js_data"]})}
