"""What a page declares about itself in its <meta> tags and JSON-LD: is it an article, a product?

Publishers mark a story page as one (`og:type` "article", a JSON-LD `NewsArticle` or `BlogPosting`)
so that social sites and search engines show it as a story. The extractor reads that declaration,
not a site list: on an article page the main content is one story under one element
(crawl/extract_region.py `article_region`), while a listing or a forum thread has no such claim.
Shops mark a product page the same way (a JSON-LD `Product`, `og:type` "product"), for search
results with a price; there the customer reviews are not the main content
(crawl/extract_reviews.py). A category page that also lists Product entries says it is a list.
"""
from __future__ import annotations

import re

# schema.org Article and its subtypes (lower case), as publishers write them in JSON-LD "@type"
ARTICLE_TYPES = frozenset({
    "article", "newsarticle", "blogposting", "reportagenews", "analysisnewsarticle", "opinionnewsarticle",
    "backgroundnewsarticle", "reviewnewsarticle", "askpublicnewsarticle", "scholarlyarticle", "techarticle",
    "liveblogposting", "report", "satiricalarticle"})
_TYPE = re.compile(r'"@type"\s*:\s*(\[[^\]]*\]|"[^"]*")')
_NAME = re.compile(r'"([^"]+)"')
_WS = re.compile(r"\s+")
MAX_JSON_LD = 1 << 20     # characters of JSON-LD read per page: a declaration sits near the top


def meta_content(doc, *names: str) -> str | None:
    """The first non-empty <meta name|property=...> content among `names` (case-insensitive; the
    earlier name wins), whitespace collapsed. A tag may carry both attributes
    (`property="og:type" name="type"`); either one matches."""
    want = {n.lower(): i for i, n in enumerate(names)}
    best = None
    for m in doc.iter("meta"):
        rank = min((want.get((m.get(a) or "").strip().lower(), len(want)) for a in ("name", "property")))
        if rank == len(want) or (best is not None and rank >= best[0]):
            continue
        content = _WS.sub(" ", m.get("content") or "").strip()
        if content:
            best = (rank, content)
    return best[1] if best else None


def declared_types(doc) -> tuple[str | None, set[str]]:
    """(og:type in lower case or None, every JSON-LD "@type" name in lower case). A regex over the
    script text, not a JSON parse: pages often carry JSON-LD that is not valid JSON."""
    og = (meta_content(doc, "og:type") or "").lower() or None
    types: set[str] = set()
    budget = MAX_JSON_LD
    for s in doc.iter("script"):
        if (s.get("type") or "").strip().lower() != "application/ld+json" or budget <= 0:
            continue
        text = (s.text or "")[:budget]
        budget -= len(text)
        for t in _TYPE.findall(text):
            types.update(n.strip().lower() for n in _NAME.findall(t))
    return og, types


LIST_TYPES = frozenset({"itemlist", "collectionpage", "searchresultspage"})


def declares_article(doc) -> bool:
    """True when the page says it is an article (og:type "article" or a schema.org Article type)."""
    return page_kind(doc)[0]


def page_kind(doc) -> tuple[bool, bool]:
    """(declares an article, declares one product): the second is a schema.org Product in the JSON-LD
    or an og:type "product..." (not "product.group"), on a page that does not declare a list
    (ItemList, CollectionPage, SearchResultsPage) or an article."""
    og, types = declared_types(doc)
    article = og == "article" or bool(types & ARTICLE_TYPES)
    product = (("product" in types or (og or "").startswith("product")) and og != "product.group"
               and not types & LIST_TYPES and not article)
    return article, product
