"""Main content and structure of an HTML page: text, title, metadata, images in place, tables, links.

Main text comes from trafilatura (chosen by word-level F1 on devdata/aeb, see bench/extract_f1.py),
asked for its XML so images and tables keep their place in the text: the text is rebuilt from that
XML and every image gets the character offset where it sits, the text right before and after it
and its figure caption (an interleaved document). Tables, links, canonical URL and language come
from one lxml parse of the whole page, so a table or link outside the main content is still kept.
Bad HTML never raises: the worst case is an empty Extraction with `error` set.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

import lxml.etree as etree
import lxml.html

from crawl.tables import table_caption, table_rows, to_markdown
from crawl.urls import try_canonicalize

CONTEXT_CHARS = 300
MAX_LINKS = 2000
MAX_IMAGES = 500
MAX_TABLES = 200
_BLOCK = {"p", "head", "list", "item", "quote", "code", "table", "row", "div", "main", "lb", "ab", "note", "fw"}
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


def parse_html(html: str):
    """lxml document for any string (XML declarations, NULs and broken markup included), or None."""
    data = html.replace("\x00", "").encode("utf-8", "replace")
    if not data.strip():
        return None
    try:
        parser = lxml.html.HTMLParser(encoding="utf-8", remove_comments=True, huge_tree=False)
        return lxml.html.document_fromstring(data, parser=parser)
    except (etree.ParserError, ValueError, etree.XMLSyntaxError):
        return None


def _clean(s: str | None) -> str:
    return _WS.sub(" ", s or "").strip()


class _TextBuilder:
    """Accumulates text with collapsed whitespace so offsets recorded along the way stay exact."""

    def __init__(self):
        self.parts: list[str] = []
        self.n = 0
        self.last = "\n"

    def add(self, s: str | None) -> None:
        if not s:
            return
        s = _WS.sub(" ", s)
        if self.last in " \n":
            s = s.lstrip(" ")
        if s:
            self.parts.append(s)
            self.n += len(s)
            self.last = s[-1]

    def newline(self) -> None:
        if self.last == "\n":
            return
        if self.last == " " and self.parts:
            self.parts[-1] = self.parts[-1][:-1]
            self.n -= 1
        self.parts.append("\n")
        self.n += 1
        self.last = "\n"

    def text(self) -> str:
        return "".join(self.parts)


def _walk_xml(el, tb: _TextBuilder, images: list, tables: list) -> None:
    tag = el.tag if isinstance(el.tag, str) else ""
    if tag == "graphic":
        images.append({"src": el.get("src"), "alt": el.get("alt"), "title": el.get("title"), "position": tb.n})
        tb.add(" ")
    elif tag == "table":
        tb.newline()
        pos = tb.n
        cells = []
        for row in el.iter("row"):
            texts = [_clean("".join(c.itertext())) for c in row if c.tag == "cell"]
            cells.extend(t for t in texts if t)
            tb.add(" | ".join(t for t in texts if t))
            tb.newline()
        tables.append({"position": pos, "cells": cells})
    else:
        block = tag in _BLOCK
        if block:
            tb.newline()
        tb.add(el.text)
        for child in el:
            _walk_xml(child, tb, images, tables)
        if block:
            tb.newline()
    if el.tail:
        tb.add(el.tail)


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


def _dom_images(doc, base: str) -> list[dict[str, Any]]:
    out = []
    for img in doc.iter("img"):
        src = _image_src(img)
        if not src:
            continue
        absu, why = try_canonicalize(src, base)
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


def _links(doc, base: str) -> tuple[list[dict[str, str]], list[tuple[str, str]]]:
    links, seen, bad = [], set(), []
    for a in doc.iter("a", "area"):
        href = (a.get("href") or "").strip()
        if not href or href.startswith("#"):
            continue
        url, why = try_canonicalize(href, base)
        if url is None:
            if why != "bad_scheme" and len(bad) < 50 and (href[:300], why) not in bad:  # mailto: etc. are fine
                bad.append((href[:300], why))
            continue
        if url in seen:
            continue
        seen.add(url)
        links.append({"url": url, "anchor": _clean(a.text_content())[:500]})
        if len(links) >= MAX_LINKS:
            break
    return links, bad


def _dom_tables(doc) -> list[dict[str, Any]]:
    out = []
    for t in doc.iter("table"):
        rows = table_rows(t)
        if not rows or (len(rows) < 2 and len(rows[0]) < 2):
            continue
        out.append({"rows": rows, "markdown": to_markdown(rows), "caption": table_caption(t), "position": -1})
        if len(out) >= MAX_TABLES:
            break
    return out


def _match_tables(dom_tables: list[dict], xml_tables: list[dict]) -> None:
    used = set()
    for t in dom_tables:
        cells = {c for row in t["rows"] for c in row if c}
        for i, x in enumerate(xml_tables):
            if i in used or not cells:
                continue
            xc = set(x["cells"])
            if len(cells & xc) >= 0.5 * len(cells):
                t["position"] = x["position"]
                used.add(i)
                break


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


def main_content(html_or_doc, url: str | None, fast: bool = True):
    """trafilatura's main content as an XML-like tree (<head>, <p>, <list>, <graphic>, <table>, ...)
    plus metadata, or None. bare_extraction skips the XML serialisation and fingerprinting that
    extract(output_format="xml") would add (about a third of the extraction time)."""
    import trafilatura  # noqa: PLC0415  (slow import; only extraction needs it)
    return trafilatura.bare_extraction(html_or_doc, url=url, include_images=True, include_tables=True,
                                       include_links=False, include_comments=False, with_metadata=True, fast=fast,
                                       date_extraction_params={"extensive_search": False, "original_date": True})


def extract_page(html: str, url: str, fast: bool = True) -> Extraction:
    """Everything the later stages need from one page; never raises."""
    ex = Extraction()
    try:
        doc = parse_html(html)
        if doc is None:
            ex.error = "unparseable_html"
            return ex
        base = url
        b = doc.find(".//base")
        if b is not None and b.get("href"):
            nb, _ = try_canonicalize(b.get("href"), url)
            base = nb or url
        ex.title, ex.language_hint, canon = _meta(doc)
        if canon:
            ex.canonical_url, _ = try_canonicalize(canon, base)
        ex.outlinks, ex.bad_links = _links(doc, base)
        dom_tables = _dom_tables(doc)
        dom_imgs = _dom_images(doc, base)
        res = main_content(copy.deepcopy(doc), base, fast=fast)
        xml_images: list[dict] = []
        xml_tables: list[dict] = []
        if res is not None and res.body is not None:
            tb = _TextBuilder()
            for child in res.body:
                _walk_xml(child, tb, xml_images, xml_tables)
            ex.text = tb.text().strip()
            ex.title = _clean(res.title) or ex.title
            ex.author = _clean(res.author) or None
            ex.date = res.date or None
        _match_tables(dom_tables, xml_tables)
        ex.tables = dom_tables
        by_src = {}
        for d in dom_imgs:
            by_src.setdefault(d["src"], d)
        placed = set()
        for xi in xml_images:
            src, _ = try_canonicalize(xi["src"] or "", base)
            if src is None or src in placed:
                continue
            placed.add(src)
            dom = by_src.get(src, {})
            pos = min(xi["position"], len(ex.text))
            before, after = _context(ex.text, pos)
            ex.images.append({"src": src, "alt": dom.get("alt", xi.get("alt")), "caption": dom.get("caption"),
                              "text_before": before, "text_after": after, "position": pos})
        for d in dom_imgs:  # images outside the main content: kept, without a place in the text
            if d["src"] not in placed:
                placed.add(d["src"])
                ex.images.append({**d, "text_before": None, "text_after": None, "position": -1})
    except Exception as e:  # noqa: BLE001  (a pathological page must not stop the crawl)
        ex.error = f"extract_error: {type(e).__name__}"
    return ex
