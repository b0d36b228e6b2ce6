"""One demo-site page as the generator sees it: its HTML and every ground-truth label it carries.

`Page.render()` wraps the main content in the site's boilerplate (header, nav, newsletter aside,
footer) unless the page supplies its whole document (`document=` or `raw=`).
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

SITE_NAME = "Cider Mill Gazette"
# Boilerplate sentences on every templated page; an extractor must leave them out of the main text.
NEWSLETTER = "Subscribe to the Cider Mill Gazette newsletter for seasonal orchard news and recipes."
COPYRIGHT = "All rights reserved. Reproduction of any part of this site without written permission is prohibited."
COOKIE = "We use cookies to remember your language and to count visits."
BOILERPLATE_SNIPPETS = [NEWSLETTER, COPYRIGHT, COOKIE]

NAV = [("/", "Home"), ("/en/", "English"), ("/fr/", "Fran&ccedil;ais"), ("/de/", "Deutsch"),
       ("/es/", "Espa&ntilde;ol"), ("/ja/", "&#26085;&#26412;&#35486;"), ("/zh/", "&#20013;&#25991;"),
       ("/gallery/", "Gallery"), ("/data/", "Data"), ("/about.html", "About")]
POPULAR = [("/en/cider-history.html", "The long history of cider"),
           ("/gallery/shapes.html", "Shapes gallery"),
           ("/data/harvest.html", "Harvest figures")]

ALL_ALLOWED = {"CiderBot": True, "*": True, "CiderBot-Extended": True}


def esc(text: str) -> str:
    return html.escape(text, quote=False)


def first_sentence(text: str) -> str:
    """The first sentence of a paragraph (used as an expected snippet)."""
    best = len(text)
    for term in (". ", "! ", "? ", "\u3002", "\uff01", "\uff1f"):
        i = text.find(term)
        if i != -1:
            best = min(best, i + len(term.rstrip()))
    return text[:best].strip()


def count_words(text: str) -> int:
    return len(text.split())


@dataclass
class Page:
    path: str
    title: str
    lang: str | None = "en"
    body: str = ""                     # inner HTML of <article> after the h1/byline
    paragraphs: list[str] = field(default_factory=list)  # plain main text (labels, counts)
    categories: list[str] = field(default_factory=list)
    quality: str = "good"             # good | low | navigation | none
    author: str | None = None
    date: str | None = None
    description: str | None = None
    robots: dict = field(default_factory=lambda: dict(ALL_ALLOWED))
    meta_robots: list[str] = field(default_factory=list)
    extra_head: str = ""
    extra_body_end: str = ""          # e.g. an inline <script>
    status: int = 200
    content_type: str | None = None   # override the extension's type
    headers: dict = field(default_factory=dict)
    encoding: str = "utf-8"
    charset_in_header: bool = True
    document: str | None = None       # the whole HTML document (no site template)
    raw: bytes | None = None          # exact bytes to serve (no template, no encoding)
    expected_snippets: list[str] | None = None
    js_only_snippets: list[str] = field(default_factory=list)
    js: str | None = None             # None | inline | fetch | scroll
    images: list[dict] = field(default_factory=list)
    tables: list[dict] = field(default_factory=list)
    pii: dict = field(default_factory=dict)
    not_pii: dict = field(default_factory=dict)
    dup_group: str | None = None
    exact_dup_group: str | None = None
    eval_passages: list[str] = field(default_factory=list)
    unsafe_words: list[str] = field(default_factory=list)
    in_sitemap: bool = True
    hub: str | None = "/"             # the hub page that lists it (None: linked elsewhere or not at all)
    html_lang: str | None = None      # <html lang> when it differs from the real language
    kind: str = "html"                # html | redirect
    dynamic: bool = False             # served by server.py, not written to site/
    notes: str = ""
    extra: dict = field(default_factory=dict)  # case-specific labels, merged into the entry

    # -- rendering -------------------------------------------------------------------------
    def main_html(self) -> str:
        byline = ""
        if self.author or self.date:
            bits = []
            if self.author:
                bits.append(f'By <span class="author">{esc(self.author)}</span>')
            if self.date:
                bits.append(f'<time datetime="{self.date}">{self.date}</time>')
            byline = f'<p class="byline">{" &middot; ".join(bits)}</p>\n'
        return f"<article>\n<h1>{esc(self.title)}</h1>\n{byline}{self.body}\n</article>"

    def head_html(self) -> str:
        metas = []
        if self.author:
            metas.append(f'<meta name="author" content="{html.escape(self.author)}">')
        if self.date:
            metas.append(f'<meta name="date" content="{self.date}">')
            metas.append(f'<meta property="article:published_time" content="{self.date}">')
        if self.description:
            metas.append(f'<meta name="description" content="{html.escape(self.description)}">')
        if self.meta_robots:
            metas.append(f'<meta name="robots" content="{", ".join(self.meta_robots)}">')
        charset = {"utf-8": "utf-8"}.get(self.encoding, self.encoding)
        return (f'<meta charset="{charset}">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n'
                f"<title>{esc(self.title)} | {SITE_NAME}</title>\n" + "".join(m + "\n" for m in metas)
                + '<link rel="stylesheet" href="/static/site.css">\n' + self.extra_head)

    def render(self) -> bytes:
        if self.raw is not None:
            return self.raw
        if self.document is not None:
            return self.document.encode(self.encoding)
        nav = " ".join(f'<a href="{h}">{t}</a>' for h, t in NAV)
        popular = "".join(f'<li><a href="{h}">{esc(t)}</a></li>' for h, t in POPULAR)
        doc = f"""<!DOCTYPE html>
<html lang="{self.html_lang or self.lang or 'en'}">
<head>
{self.head_html()}</head>
<body>
<header class="site-header"><a class="brand" href="/">{SITE_NAME}</a>
<nav class="main-nav">{nav}</nav>
<p class="cookie-banner">{esc(COOKIE)} <button type="button">OK</button></p>
</header>
<div class="layout">
<main id="content">
{self.main_html()}
</main>
<aside class="sidebar">
<h2>Newsletter</h2>
<p>{esc(NEWSLETTER)}</p>
<form class="newsletter" action="/subscribe" method="get"><input type="email" name="email" placeholder="you@example.com"><button>Subscribe</button></form>
<h2>Popular</h2>
<ul>{popular}</ul>
</aside>
</div>
<footer class="site-footer">
<p>&copy; 2024 {SITE_NAME}. {esc(COPYRIGHT)}</p>
<p><a href="/about.html">About</a> &middot; <a href="/contact.html">Contact</a> &middot; <a href="/changelog.html">Changelog</a></p>
</footer>
{self.extra_body_end}</body>
</html>
"""
        return doc.encode(self.encoding)

    # -- labels ----------------------------------------------------------------------------
    def snippets(self) -> list[str]:
        if self.expected_snippets is not None:
            return self.expected_snippets
        paras = [p for p in self.paragraphs if p.strip()]
        if not paras:
            return []
        out = [first_sentence(paras[0])]
        if len(paras) > 1:
            out.append(first_sentence(paras[-1]))
        return out

    def main_text(self) -> str:
        return "\n\n".join(self.paragraphs)


def paragraphs_html(paragraphs: list[str]) -> str:
    """<p> per paragraph; a paragraph starting with '## ' becomes an <h2>."""
    out = []
    for p in paragraphs:
        if p.startswith("## "):
            out.append(f"<h2>{esc(p[3:])}</h2>")
        else:
            out.append(f"<p>{esc(p)}</p>")
    return "\n".join(out)


def strip_headings(paragraphs: list[str]) -> list[str]:
    return [p[3:] if p.startswith("## ") else p for p in paragraphs]


_WS = re.compile(r"\s+")


def normalize_ws(text: str) -> str:
    return _WS.sub(" ", text).strip()
