"""Main content and structure of an HTML page: text, title, metadata, images in place, tables, links.

The page is cut into blocks (crawl/extract_blocks.py: paragraphs, list items, headings, table rows,
...) and a gradient-boosted block model (crawl/extract_stages.py; crawl/extract_model.json, rebuilt
by `cidermill train-extractor`) keeps the blocks that are main content. It scores each block from
its own features, its place in the page's layout (crawl/extract_layout.py) and trafilatura's vote
(main text and comments read apart); an optional second stage rescores it from the scores of its
neighbours, containers and look-alikes (crawl/extract_context.py). Forum posts, answers, product descriptions and listings
count as content when they look like it. The kept blocks, in page order and one per line, are the
text; every image next to a kept block gets the character offset where it sits, the text right
before and after it and its figure caption (an interleaved document); a table gets the offset of
its first kept row. Tables, links, canonical URL and language come from one lxml parse of the
whole page, so a table or link outside the main content is still kept. Bad HTML never raises: the
worst case is an empty Extraction with `error` set.
"""
from __future__ import annotations

import copy
import itertools
import os
import re
from dataclasses import dataclass, field
from typing import Any

import lxml.etree as etree
import lxml.html

from crawl.extract_blocks import FEATURES, Segmented, features, segment
from crawl.extract_contents import drop_contents
from crawl.extract_fallback import peer_fallback
from crawl.extract_groups import propagate, repeated_items
from crawl.extract_identifiers import drop_identifier_runs
from crawl.extract_post_meta import drop_post_meta
from crawl.extract_posts import declared_posts
from crawl.extract_repeats import drop_repeated
from crawl.extract_region import article_region, main_region, navigation_takeover
from crawl.extract_reviews import drop_reviews
from crawl.extract_units import section_headings, voted_listings, whole_units
from crawl.framesets import frame_links, open_noframes
from crawl.mail_archive import archive_kind, archived_message
from crawl.page_kind import meta_content, page_kind
from crawl.streamed_html import apply_streamed_swaps
from crawl.tables import table_caption, table_rows, to_markdown
from crawl.urls import LinkResolver, try_canonicalize
from crawl.visibility import drop_hidden, lift_cloak, open_disclosures

CONTEXT_CHARS = 300
MAX_LINKS = 2000
MAX_IMAGES = 500
MAX_TABLES = 200
MODEL_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "extract_model.json")
_CHROME = frozenset({"nav", "header", "footer", "aside"})  # an image there is page furniture, not content
_WS = re.compile(r"\s+")


@dataclass
class Extraction:
    title: str | None = None
    text: str = ""
    language_hint: str | None = None
    author: str | None = None
    date: str | None = None
    canonical_url: str | None = None
    images: list[dict[str, Any]] = field(default_factory=list)
    tables: list[dict[str, Any]] = field(default_factory=list)
    outlinks: list[dict[str, str]] = field(default_factory=list)
    bad_links: list[tuple[str, str]] = field(default_factory=list)  # (href, reason), first 50
    error: str | None = None


_FLATTEN = re.compile(rb"</?(?:div|span|section|article|font|b|i|u|em|strong|small|big|center|blockquote|ul|ol|li|"
                      rb"dl|dd|dt|table|tbody|thead|tr|td|th|main|aside|header|footer|nav|form|label|a|p|q|sub|sup)\b[^>]*>",
                      re.I)


def _html_parser():
    parser = lxml.html.HTMLParser(encoding="utf-8", remove_comments=True, huge_tree=False)
    parser.set_element_class_lookup(etree.ElementDefaultClassLookup(
        element=lxml.html.HtmlElement, comment=lxml.html.HtmlComment, pi=lxml.html.HtmlProcessingInstruction,
        entity=lxml.html.HtmlEntity))
    return parser


def parse_html_checked(html: str):
    """(lxml document or None, note), with React's streamed content moved where a browser shows it
    (crawl/streamed_html.py). libxml2 stops reading at 256 levels of nesting and drops the
    rest of the page; such a page is read again with its container tags flattened to spaces, and the
    note says so ("deep_nesting_flattened") so the crawl log records it."""
    data = html.replace("\x00", "").encode("utf-8", "replace")
    if not data.strip():
        return None, None
    try:
        parser = _html_parser()
        doc, note = lxml.html.document_fromstring(data, parser=parser), None
        if any("Excessive depth" in e.message for e in parser.error_log):
            parser = _html_parser()
            doc, note = lxml.html.document_fromstring(_FLATTEN.sub(b" ", data), parser=parser), "deep_nesting_flattened"
    except (etree.ParserError, ValueError, etree.XMLSyntaxError):
        return None, None
    try:
        apply_streamed_swaps(doc, data)
    except (ValueError, TypeError):  # an odd tree is read as parsed, never an error
        pass
    open_noframes(doc)  # a frameset page's content for readers without frames (crawl/framesets.py)
    lift_cloak(doc)     # a page hidden whole until its script runs (crawl/visibility.py)
    open_disclosures(doc)   # collapsed accordion panels are one click away
    return doc, note


def parse_html(html: str):
    """lxml document for any string (XML declarations, NULs and broken markup included), or None."""
    return parse_html_checked(html)[0]


def _clean(s: str | None) -> str:
    return _WS.sub(" ", s or "").strip()


def _context(text: str, pos: int) -> tuple[str, str]:
    before = text[max(0, pos - CONTEXT_CHARS):pos]
    after = text[pos:pos + CONTEXT_CHARS]
    if pos - CONTEXT_CHARS > 0 and " " in before:
        before = before[before.index(" ") + 1:]
    if pos + CONTEXT_CHARS < len(text) and " " in after:
        after = after[:after.rindex(" ")]
    return before.strip(), after.strip()


def _image_src(img) -> str | None:
    for attr in ("src", "data-src", "data-original", "data-lazy-src"):
        v = (img.get(attr) or "").strip()
        if v and not v.startswith("data:"):
            return v
    srcset = (img.get("srcset") or img.get("data-srcset") or "").strip()
    if srcset:
        return srcset.split(",")[0].strip().split(" ")[0] or None
    return None


def _dom_images(doc, resolve: LinkResolver) -> list[dict[str, Any]]:
    out = []
    for img in doc.iter("img"):
        src = _image_src(img)
        if not src:
            continue
        absu, why = resolve(src)
        if absu is None:
            continue
        if img.get("width") in ("0", "1") or img.get("height") in ("0", "1"):
            continue  # tracking pixels
        fig = next((a for a in img.iterancestors() if a.tag == "figure"), None)
        caption = None
        if fig is not None:
            fc = fig.find(".//figcaption")
            caption = _clean(fc.text_content()) if fc is not None else None
        out.append({"src": absu, "alt": img.get("alt"), "caption": caption or None})
        if len(out) >= MAX_IMAGES:
            break
    return out


def _links(doc, base: str, resolve: LinkResolver | None = None) -> tuple[list[dict[str, str]], list[tuple[str, str]]]:
    """(the page's links to follow, with anchor text; its bad links with why). An anchor marked
    rel="nofollow" is not one to follow (the same URL linked plainly elsewhere on the page is)."""
    links, seen, bad = [], set(), []
    resolve = resolve or LinkResolver(base)
    anchors = ((a.get("href") or "", a) for a in doc.iter("a", "area"))
    for href, anchor in itertools.chain(anchors, frame_links(doc)):  # a frame's anchor is its title
        href = href.strip()
        if not href or href.startswith("#"):
            continue
        if not isinstance(anchor, str) and "nofollow" in (anchor.get("rel") or "").lower().split():
            continue   # rel="nofollow": the site asks crawlers not to follow it (a "Show source" link, a sort order)
        url, why = resolve(href)
        if url is None:
            if why != "bad_scheme" and len(bad) < 50 and (href[:300], why) not in bad:  # mailto: etc. are fine
                bad.append((href[:300], why))
            continue
        if url in seen:
            continue
        seen.add(url)
        text = anchor if isinstance(anchor, str) else anchor.text_content()
        links.append({"url": url, "anchor": _clean(text)[:500]})
        if len(links) >= MAX_LINKS:
            break
    return links, bad


def _dom_tables(doc) -> list[dict[str, Any]]:
    out = []
    for t in doc.iter("table"):
        rows = table_rows(t)
        if not rows or (len(rows) < 2 and len(rows[0]) < 2):
            continue
        out.append({"rows": rows, "markdown": to_markdown(rows), "caption": table_caption(t), "position": -1,
                    "_el": t})
        if len(out) >= MAX_TABLES:
            break
    return out


def _meta(doc) -> tuple[str | None, str | None, str | None]:
    """(title, language, canonical href) straight from the DOM."""
    title = None
    t = doc.find(".//title")
    if t is not None:
        title = _clean(t.text_content()) or None
    lang = doc.get("lang") or doc.get("xml:lang")
    if not lang:
        for m in doc.iter("meta"):
            if (m.get("http-equiv") or "").lower() == "content-language":
                lang = m.get("content")
                break
    canon = None
    for ln in doc.iter("link"):
        if "canonical" in (ln.get("rel") or "").lower().split():
            canon = ln.get("href")
            break
    return title, (lang or "").strip().split(",")[0].lower() or None, canon


_TITLE_SEP = re.compile(r"\s+[|\u2013\u2014\u00b7\u2022\u00bb-]\s+")


def _page_title(doc, title: str | None) -> str | None:
    """The page's own title without the site name: og:title, else the <title> part that is the
    first <h1> (\"Title | Site\" and \"Site - Title\" alike), else its first part."""
    og = meta_content(doc, "og:title")
    if og:
        return og
    if not title:
        h1 = doc.find(".//h1")
        return _clean(h1.text_content()) or None if h1 is not None else None
    parts = [p for p in _TITLE_SEP.split(title) if p.strip()]
    if len(parts) < 2:
        return title
    h1 = doc.find(".//h1")
    h1_text = _clean(h1.text_content()).lower() if h1 is not None else ""
    for part in parts:
        if h1_text and part.strip().lower() == h1_text:
            return part.strip()
    return parts[0].strip()


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _date(doc) -> str | None:
    """Publication date (YYYY-MM-DD) from the usual meta tags, else the first <time datetime>."""
    raw = meta_content(doc, "article:published_time", "datePublished", "date", "dc.date", "pubdate",
                       "og:published_time", "article:modified_time")
    if not raw:
        t = next((t for t in doc.iter("time") if t.get("datetime")), None)
        raw = t.get("datetime") if t is not None else None
    m = _DATE.search(raw or "")
    return m.group(0) if m else None


def _model():
    """The shipped block model (crawl/extract_model.json), loaded once; None if absent."""
    global _MODEL
    if _MODEL is None:
        try:
            from crawl.extract_stages import BlockModel  # noqa: PLC0415
            _MODEL = BlockModel.load(MODEL_PATH)
        except (OSError, ValueError, KeyError):
            _MODEL = False
    return _MODEL or None


_MODEL = None


@dataclass
class PageBlocks:
    seg: Segmented
    rows: list[list[float]]
    peer: Any                     # trafilatura's Document (main text, comments, metadata) or None
    article: bool = False         # the page declares itself an article (crawl/page_kind.py)
    product: bool = False         # ... or one product

    def votes(self) -> list[bool]:
        """Per block, trafilatura's main-text vote."""
        vi = FEATURES.index("vote_main")
        return [r[vi] > 0 for r in self.rows]


def peer_extraction(doc, url: str | None, fast: bool = True):
    """trafilatura's reading of the page (main text and comments kept apart, metadata), or None.
    bare_extraction skips the serialisation and fingerprinting that extract() would add."""
    import trafilatura  # noqa: PLC0415  (slow import; only extraction needs it)

    from crawl.justext_linear import install  # noqa: PLC0415
    install()   # its jusText fallback in linear time, same result
    try:
        return trafilatura.bare_extraction(doc, url=url, include_images=False, include_tables=True,
                                           include_links=False, include_comments=True, with_metadata=False,
                                           fast=fast)
    except Exception:  # noqa: BLE001  (the vote is optional; the blocks still stand)
        return None


def page_blocks(html_or_doc, url: str | None, fast: bool | None = None) -> PageBlocks | None:
    """The page's blocks and their feature rows (the classifier's input), or None if it does not
    parse. fast: trafilatura's vote without its fallbacks; None = the way the shipped model was trained."""
    doc = parse_html(html_or_doc) if isinstance(html_or_doc, str) else html_or_doc
    if doc is None:
        return None
    if fast is None:
        model = _model()
        fast = model.vote_fast if model is not None else True
    article, product = page_kind(doc)
    peer_doc = copy.deepcopy(doc)
    drop_hidden(peer_doc)
    peer = peer_extraction(peer_doc, url, fast=fast)
    seg = segment(doc)
    title = doc.find(".//title")
    rows = features(seg, getattr(peer, "text", None), getattr(peer, "comments", None),
                    title.text_content() if title is not None else None)
    return PageBlocks(seg, rows, peer, article, product)


def select_blocks(pb: PageBlocks) -> list[bool]:
    """Which blocks are main content: the block model's decision (or trafilatura's vote without a
    model), extended to items repeating a kept one (crawl/extract_groups.py)."""
    if not pb.rows:
        return []
    model = _model()
    if model is None:
        return propagate(pb.seg.blocks, pb.votes())
    import numpy as np  # noqa: PLC0415
    prob = model.score(np.asarray(pb.rows), pb.seg.blocks)
    return block_selection(pb.seg.blocks, prob, model.threshold, pb.votes(), pb.article, pb.product)


def block_selection(blocks, prob, thr: float, votes: list[bool] | None = None, article: bool = False,
                    product: bool = False) -> list[bool]:
    """The classifier's selection at cut `thr`: softened next to kept siblings (hysteresis), parts of
    a unit kept together (crawl/extract_units.py: a `<pre>` listing, a term and its definition),
    extended over repeated items (propagate) and held to one main region (crawl/extract_region.py);
    with trafilatura's per-block `votes` (PageBlocks.votes), a discussion's per-post metadata
    dropped (crawl/extract_post_meta.py), a code listing it reads as main text right after a kept
    block and a heading with its kept section (extract_units), on an `article` page the region of its
    sure blocks, and on a page where the classifier keeps almost nothing, the votes (peer_fallback);
    on a page that declares its posts in microdata, their messages without the posts' other blocks
    (crawl/extract_posts.py); on a `product` page, without its customer reviews (crawl/extract_reviews.py);
    then each paragraph once (crawl/extract_repeats.py), without the page's table of contents
    (crawl/extract_contents.py) and without runs of UUIDs (crawl/extract_identifiers.py); last, a
    selection of under MIN_WORDS words is no main content (too_few_words).
    Training picks `thr` through this same function."""
    keep = [bool(x) for x in prob >= thr]
    if not any(keep):  # nothing cleared the bar: the single most likely block beats an empty page
        keep[int(prob.argmax())] = bool(prob.max() > 0.05)
    keep = whole_units(blocks, hysteresis(blocks, keep, prob, LOW_SHARE * thr))
    items = repeated_items(blocks)
    keep = main_region(blocks, navigation_takeover(blocks, propagate(blocks, keep, items)), prob, items=items)
    if votes is None:
        return _final_steps(blocks, declared_posts(blocks, keep))
    keep = section_headings(blocks, voted_listings(blocks, drop_post_meta(blocks, keep, votes, items), votes))
    if article:
        keep = article_region(blocks, keep, prob, votes, items=items)
    keep = declared_posts(blocks, peer_fallback(blocks, keep, votes))
    return _final_steps(blocks, drop_reviews(blocks, keep) if product else keep)


def _final_steps(blocks, keep: list[bool]) -> list[bool]:
    """What every selection ends with, with or without the peer's votes: each paragraph once, no
    table of contents, no run of UUIDs (crawl/extract_identifiers.py), and no selection of under
    MIN_WORDS words."""
    keep = drop_identifier_runs(blocks, drop_contents(blocks, drop_repeated(blocks, keep)))
    return too_few_words(blocks, keep)


# Main content is at least a short sentence. What a selection keeps under this many words is what a
# page without content shows around its empty place: a bot wall's "Help" link, a lone price, a
# script shell's "Loading" (the development set's truth calls such pages empty; its shortest
# non-empty truth has 15 words).
MIN_WORDS = 5


def too_few_words(blocks, keep: list[bool]) -> list[bool]:
    """Nothing, where the kept blocks hold fewer than MIN_WORDS words in all."""
    if sum(len(b.words) for b, k in zip(blocks, keep) if k) < MIN_WORDS:
        return [False] * len(keep)
    return keep


LOW_SHARE = 0.75   # a block next to a kept sibling needs only this share of the threshold


def hysteresis(blocks, keep: list[bool], prob, low: float) -> list[bool]:
    """Keep a block that scores at least `low` when a neighbour under the same parent is kept: the
    last paragraph of an article should not fall off because it is the last one."""
    out = list(keep)
    for i, b in enumerate(blocks):
        if keep[i] or prob[i] < low:
            continue
        parent = b.el.getparent()
        for j in (i - 1, i + 1):
            if 0 <= j < len(blocks) and keep[j] and (blocks[j].el is b.el or blocks[j].el.getparent() is parent):
                out[i] = True
                break
    return out


def extract_page(html: str, url: str, fast: bool | None = None) -> Extraction:
    """Everything the later stages need from one page; never raises. fast: see page_blocks."""
    ex = Extraction()
    try:
        doc, note = parse_html_checked(html)
        if doc is None:
            ex.error = "unparseable_html"
            return ex
        ex.error = note
        base = url
        b = doc.find(".//base")
        if b is not None and b.get("href"):
            nb, _ = try_canonicalize(b.get("href"), url)
            base = nb or url
        ex.title, ex.language_hint, canon = _meta(doc)
        if canon:
            ex.canonical_url, _ = try_canonicalize(canon, base)
        resolve = LinkResolver(base)   # one memo for the page's links and images (each image src is met twice)
        ex.outlinks, ex.bad_links = _links(doc, base, resolve)
        dom_tables = _dom_tables(doc)
        dom_imgs = _dom_images(doc, resolve)
        archive = archive_kind(html, doc)   # a mail archive's message page (crawl/mail_archive.py)
        pb = page_blocks(doc, base, fast=fast)
        keep, sender, sent = archived_message(archive, html, doc, pb.seg.blocks, select_blocks(pb))
        blocks = pb.seg.blocks
        # text of the kept blocks, one per line; starts[k]: where block k's text is (or would be)
        parts, starts, n = [], [], 0
        for blk, k in zip(blocks, keep):
            at = n + (1 if parts else 0)
            starts.append(at)
            if k:
                shown = blk.shown or blk.text
                parts.append(shown)
                n = at + len(shown)
        starts.append(n + (1 if parts else 0))
        ex.text = "\n".join(parts)
        if not ex.text and not ex.error:  # recorded in the crawl log's detail
            ex.error = "no_main_content" if blocks else "no_visible_text"
        end = len(ex.text)
        ex.title = _page_title(doc, ex.title)
        ex.author = meta_content(doc, "author", "article:author", "dc.creator", "parsely-author") or None
        ex.date = _date(doc)
        if archive:
            ex.author, ex.date = ex.author or sender, ex.date or sent
        kept_tables = {}
        for first, last, el in pb.seg.tables:
            hit = next((i for i in range(first, last) if keep[i]), None)
            if hit is not None:
                kept_tables[el] = min(starts[hit], end)
        for t in dom_tables:
            t["position"] = kept_tables.get(t.pop("_el"), -1)
        ex.tables = dom_tables
        by_src = {}
        for d in dom_imgs:
            by_src.setdefault(d["src"], d)
        placed = set()
        for k, img, ctx in pb.seg.images:
            near = (k > 0 and keep[k - 1]) or (k < len(keep) and keep[k])
            if not near or ctx.marks & _CHROME:
                continue
            src = _image_src(img)
            src = resolve(src)[0] if src else None
            if src is None or src in placed or src not in by_src:
                continue
            placed.add(src)
            pos = min(starts[k], end)
            before, after = _context(ex.text, pos)
            ex.images.append({**by_src[src], "text_before": before, "text_after": after, "position": pos})
        for d in dom_imgs:  # images outside the main content: kept, without a place in the text
            if d["src"] not in placed:
                placed.add(d["src"])
                ex.images.append({**d, "text_before": None, "text_after": None, "position": -1})
    except Exception as e:  # noqa: BLE001  (a pathological page must not stop the crawl)
        ex.error = f"extract_error: {type(e).__name__}"
    return ex
