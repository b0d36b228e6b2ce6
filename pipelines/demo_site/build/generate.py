"""Generate the demo site (pipelines/demo_site/site/) and its ground truth from the sources.

    .venv/bin/python -m pipelines.demo_site.build        # rewrite site/ and ground_truth.json

Deterministic: the same sources give byte-identical files (a test checks the committed copy is
up to date). The server does not need this module; it only serves site/.
"""
from __future__ import annotations

import json
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from pipelines.demo_site.build import crawl_cases, media, text_cases
from pipelines.demo_site.build.articles import load_articles
from pipelines.demo_site.build.images import build_images
from pipelines.demo_site.build.page import (BOILERPLATE_SNIPPETS, Page, count_words, esc, normalize_ws,
                                            paragraphs_html, strip_headings)

PKG = Path(__file__).resolve().parent.parent
SITE = PKG / "site"
GROUND_TRUTH = PKG / "ground_truth.json"
FAKE_BASE = "http://demo.invalid"
LANG_NAMES = {"en": "English", "fr": "Français", "de": "Deutsch", "es": "Español", "ja": "日本語",
              "zh": "中文", "it": "Italiano", "pt": "Português", "ko": "한국어"}
SPACELESS = ("ja", "zh")

# figures placed inside articles: path -> (after paragraph index, src, alt, caption)
ARTICLE_FIGURES = {
    "/en/pressing-apples.html": (1, "/img/photos/apple.jpg", "A red apple with a green leaf",
                                 "A ripe apple ready for the mill."),
}

CSS = """body{font-family:sans-serif;margin:0;color:#222;background:#fdfcf7}
.site-header{background:#7a1f12;color:#fff;padding:.5em 1em}.site-header a{color:#fff;margin-right:.6em}
.brand{font-weight:bold;font-size:1.2em}.cookie-banner{font-size:.8em}
.layout{display:flex;gap:2em;padding:1em}main{flex:3}aside{flex:1;font-size:.9em}
.site-footer{border-top:1px solid #ccc;padding:1em;font-size:.8em}
table{border-collapse:collapse}td,th{border:1px solid #999;padding:.2em .5em}
figure{margin:1em 0}figcaption{font-style:italic}
"""


class _Links(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.resources: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and "href" in a:
            self.links.append(a["href"] or "")
        elif tag in ("img", "script") and a.get("src"):
            self.resources.append(a["src"])
        elif tag == "link" and a.get("href"):
            self.resources.append(a["href"])


def resolve(page_path: str, href: str) -> str | None:
    """Same-site path (+query) an href points to, or None (other site, invalid, non-http)."""
    href = href.replace("{{BASE_URL}}", FAKE_BASE)
    try:
        url = urljoin(FAKE_BASE + page_path, href)
        parts = urlsplit(url)
        _ = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or f"{parts.scheme}://{parts.netloc}" != FAKE_BASE:
        return None
    if not parts.path.startswith("/"):
        return None
    return parts.path + (f"?{parts.query}" if parts.query else "")


def file_for(path: str, site: Path = SITE) -> Path:
    bare = path.split("?", 1)[0]
    rel = bare.lstrip("/")
    if rel == "" or rel.endswith("/"):
        rel += "index.html"
    return site / rel


def article_page(a) -> Page:
    body = paragraphs_html(a.paragraphs)
    images = []
    if a.path in ARTICLE_FIGURES:
        after, src, alt, cap = ARTICLE_FIGURES[a.path]
        f = media.Figures(_IMAGES)
        fig = f.img(src, alt, cap, context=strip_headings(a.paragraphs)[after])
        blocks = body.split("\n")
        blocks.insert(after + 1, fig)
        body = "\n".join(blocks)
        images = f.entries
    return Page(path=a.path, title=a.title, lang=a.lang, body=body, paragraphs=strip_headings(a.paragraphs),
                categories=["prose"], author=a.author, date=a.date, description=a.description,
                hub=f"/{a.lang}/", images=images)


def hub_pages(pages: list[Page]) -> list[Page]:
    by_hub: dict[str, list[Page]] = {}
    for p in pages:
        if p.hub:
            by_hub.setdefault(p.hub, []).append(p)
    hubs = []
    titles = {"/gallery/": "Gallery", "/data/": "Data and tables", "/dup/": "Reprints and copies"}
    for hub, members in sorted(by_hub.items()):
        if hub == "/":
            continue
        lang = hub.strip("/") if hub.strip("/") in LANG_NAMES else "en"
        title = LANG_NAMES.get(hub.strip("/"), titles.get(hub, hub))
        items = "\n".join(f'<li><a href="{m.path}">{esc(m.title or m.path)}</a></li>'
                          for m in sorted(members, key=lambda m: m.path))
        hubs.append(Page(path=hub, title=title, lang=lang, body=f"<ul class=\"index\">\n{items}\n</ul>",
                         categories=["hub"], quality="navigation", expected_snippets=[]))
    root_members = sorted(by_hub.get("/", []), key=lambda m: m.path)
    sections = "\n".join(f'<li><a href="{h.path}">{esc(h.title)}</a></li>' for h in hubs)
    items = "\n".join(f'<li><a href="{m.path}">{esc(m.title or m.path)}</a></li>' for m in root_members)
    intro = ("Welcome to the Cider Mill Gazette, a magazine about orchards, apples and the people who "
             "grow them, in several languages.")
    body = (f"<p>{esc(intro)}</p>\n<h2>Sections</h2>\n<ul class=\"sections\">\n{sections}\n</ul>\n"
            f"<h2>More pages</h2>\n<ul class=\"more\">\n{items}\n</ul>")
    hubs.insert(0, Page(path="/", title="Cider Mill Gazette", lang="en", body=body, paragraphs=[intro],
                        categories=["hub", "home"], quality="navigation"))
    return hubs


_IMAGES: dict[str, dict] = {}


def collect(images: dict[str, dict]) -> tuple[list[Page], dict]:
    global _IMAGES
    _IMAGES = images
    articles = load_articles()
    pages = [article_page(a) for a in articles]
    by_path = {p.path: p for p in pages}
    info: dict = {}
    dups, info["near_duplicate_groups"] = text_cases.dup_pages({a.path: a for a in articles}, by_path)
    pages += dups
    pages += media.gallery_pages(images) + media.table_pages()
    pages += text_cases.pii_pages() + text_cases.quality_pages()
    pages += crawl_cases.robots_pages(by_path["/en/cider-history.html"])
    pages += crawl_cases.meta_pages() + crawl_cases.route_pages() + crawl_cases.legacy_pages()
    pages += crawl_cases.login_pages() + crawl_cases.bad_pages() + crawl_cases.js_pages()
    glossary = by_path.get("/en/cider-glossary.html")
    if glossary:
        glossary.exact_dup_group = "exact-glossary"
        mirror = Page(**{**glossary.__dict__, "path": "/mirror/cider-glossary.html", "hub": "/",
                         "categories": ["prose", "exact_duplicate"]})
        glossary.categories = ["prose", "exact_duplicate"]
        pages.append(mirror)
        info["exact_duplicate_groups"] = {"exact-glossary": [glossary.path, mirror.path]}
    pages += hub_pages(pages)
    return pages, info


SHORT_WORDS, SHORT_CHARS = 100, 200  # below this a "good" page is labelled "short"


def _quality(p: Page, text: str) -> str:
    """The page's own label, except that well-formed but brief pages are "short", not "good"."""
    if p.quality != "good":
        return p.quality
    size = len(normalize_ws(text)) if p.lang in SPACELESS else count_words(text)
    return "short" if size < (SHORT_CHARS if p.lang in SPACELESS else SHORT_WORDS) else "good"


def entry_for(p: Page, body: bytes) -> dict:
    text = p.main_text()
    static = p.kind == "html" and not p.dynamic
    ctype = p.content_type or ("text/html; charset=utf-8" if p.kind == "html" else None)
    meta = set(p.meta_robots)
    noindex = bool(meta & {"noindex", "none"}) or "noindex" in p.headers.get("X-Robots-Tag", "") \
        or "noindex" in p.extra.get("agent_meta_robots", {}).get("ciderbot", [])
    e = {
        "kind": p.kind,
        "status": p.status,
        "content_type": ctype if p.status == 200 else None,
        "lang": p.lang if p.paragraphs or p.js_only_snippets else None,
        "html_lang": p.html_lang or p.lang,
        "title": p.title or None,
        "categories": p.categories,
        "quality": _quality(p, text),
        "author": p.author,
        "date": p.date,
        "robots": crawl_cases.robots_labels(p.path),
        "meta_robots": p.meta_robots,
        "x_robots_tag": p.headers.get("X-Robots-Tag"),
        "noindex": noindex,
        "nofollow": bool(meta & {"nofollow", "none"}),
        "encoding": p.encoding if p.kind == "html" and p.raw is None else None,
        "charset_in_header": p.charset_in_header,
        "js": p.js,
        "main_text": text if p.paragraphs else "",
        "words": count_words(text) if p.lang not in SPACELESS else None,
        "chars": len(normalize_ws(text)),
        "expected_snippets": p.snippets(),
        "js_only_snippets": p.js_only_snippets,
        "boilerplate_snippets": BOILERPLATE_SNIPPETS if static and p.document is None and p.raw is None else [],
        "images": p.images,
        "tables": p.tables,
        "pii": p.pii,
        "not_pii": p.not_pii,
        "dup_group": p.dup_group,
        "exact_dup_group": p.exact_dup_group,
        "eval_passages": p.eval_passages,
        "unsafe_words": p.unsafe_words,
        "in_sitemap": p.in_sitemap and p.kind == "html" and p.status == 200 and not p.dynamic,
        "dynamic": p.dynamic,
        "bytes": len(body) if not p.dynamic else None,
        "notes": p.notes,
    }
    if p.headers:
        e["headers"] = p.headers
    e.update(p.extra)
    return e


def links_of(p: Page, body: bytes) -> tuple[list[str], list[str]]:
    if p.kind == "redirect":
        return [p.extra["location"]], []
    if p.path.startswith("/calendar/"):
        return ["/calendar/2023/12/", "/calendar/2024/02/"], []
    if p.raw is not None or p.dynamic:
        return [], []
    parser = _Links()
    parser.feed(body.decode(p.encoding, errors="replace"))
    parser.close()
    return parser.links, parser.resources


def crawl_walk(entries: dict[str, dict], agent: str | None) -> set[str]:
    """Paths a crawler starting at / reaches by links (no sitemap). With an agent: it honours that
    agent's robots.txt labels and nofollow; without: it follows everything (reachability).
    Spider-trap pages are entered but their links are not followed."""
    seen, queue = {"/"}, ["/"]
    while queue:
        path = queue.pop(0)
        e = entries.get(path)
        if e is None or (agent and not e["robots"][agent]):
            continue
        if e.get("categories") and "spider_trap" in e["categories"]:
            continue
        if agent and e.get("nofollow"):
            continue
        for target in e.get("internal_links", []):
            if target not in seen:
                seen.add(target)
                queue.append(target)
    return seen


def generate(site: Path = SITE, gt_path: Path = GROUND_TRUTH) -> dict:
    """Write the site's files under `site` and its ground truth to `gt_path` (and return it)."""
    if site.exists():
        shutil.rmtree(site)
    site.mkdir(parents=True)
    images = build_images(site)
    pages, info = collect(images)
    entries, serve = _page_entries(pages, site)
    _resource_entries(entries, images, site)
    _plumbing_entries(entries, site)
    (site / "_serve.json").write_text(json.dumps(serve, indent=1, sort_keys=True) + "\n")
    reach = crawl_walk(entries, None)
    fetch = crawl_walk(entries, crawl_cases.CRAWLER)
    for path, e in entries.items():
        if e["kind"] in ("html", "redirect"):
            e["reachable_by_links"] = path in reach
            e["ciderbot_fetches"] = path in fetch and e["robots"][crawl_cases.CRAWLER]
    gt = _ground_truth(entries, info)
    gt_path.write_text(json.dumps(gt, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return gt


def _page_entries(pages: list[Page], site: Path) -> tuple[dict[str, dict], dict[str, dict]]:
    """Each page written to its file (dynamic pages are served by code), with its ground-truth
    entry and links; and the per-file serving overrides (content type, headers) for _serve.json."""
    entries: dict[str, dict] = {}
    serve: dict[str, dict] = {}
    for p in pages:
        body = p.render() if not p.dynamic else b""
        if "?" in p.path:  # served from the file of the path without the query
            assert body == file_for(p.path, site).read_bytes(), p.path
        elif not p.dynamic:
            f = file_for(p.path, site)
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_bytes(body)
            over = {}
            if p.content_type:
                over["content_type"] = p.content_type
            if p.headers:
                over["headers"] = p.headers
            if over:
                serve["/" + f.relative_to(site).as_posix()] = over
        e = entry_for(p, body)
        links, resources = links_of(p, body)
        e["links"] = links
        e["internal_links"] = sorted({t for t in (resolve(p.path, h) for h in links) if t})
        e["resources"] = sorted({t for t in (resolve(p.path, h) for h in resources) if t})
        entries[p.path] = e
    return entries, serve


def _resource_entries(entries: dict[str, dict], images: dict[str, dict], site: Path) -> None:
    """Ground-truth entries for the images, and the non-HTML files and JS data written to `site`."""
    for path, meta in images.items():
        status = meta.pop("status", 200)
        ctype = {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "svg": "image/svg+xml"}.get(
            path.rsplit(".", 1)[-1].replace("jpg", "jpeg"))
        entries[path] = {"kind": "image", "status": status, "content_type": ctype if status == 200 else None,
                         "robots": crawl_cases.robots_labels(path), "categories": ["image"], **meta}
    for path, (data, meta) in {**crawl_cases.file_resources(), **crawl_cases.js_data_files()}.items():
        f = file_for(path, site)
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(data)
        entries[path] = {"status": 200, "robots": crawl_cases.robots_labels(path), "bytes": len(data), **meta}


def _plumbing_entries(entries: dict[str, dict], site: Path) -> None:
    """The site's own plumbing: robots.txt, sitemap.xml (of the entries marked in_sitemap), CSS."""
    (site / "robots.txt").write_text(crawl_cases.ROBOTS_TXT)
    entries["/robots.txt"] = {"kind": "robots", "status": 200, "content_type": "text/plain; charset=utf-8",
                              "robots": crawl_cases.robots_labels("/robots.txt"), "categories": ["robots_txt"]}
    sitemap_paths = sorted(k for k, e in entries.items() if e.get("in_sitemap"))
    urls = "\n".join(f"  <url><loc>{{{{BASE_URL}}}}{esc(k)}</loc></url>" for k in sitemap_paths)
    (site / "sitemap.xml").write_text('<?xml version="1.0" encoding="UTF-8"?>\n'
                                      '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
                                      f"{urls}\n</urlset>\n")
    entries["/sitemap.xml"] = {"kind": "sitemap", "status": 200, "content_type": "application/xml",
                               "robots": crawl_cases.robots_labels("/sitemap.xml"), "categories": ["sitemap"],
                               "urls": sitemap_paths}
    (site / "static").mkdir(exist_ok=True)
    (site / "static" / "site.css").write_text(CSS)
    entries["/static/site.css"] = {"kind": "css", "status": 200, "content_type": "text/css; charset=utf-8",
                                   "robots": crawl_cases.robots_labels("/static/site.css"), "categories": ["static"]}


def _ground_truth(entries: dict[str, dict], info: dict) -> dict:
    """The ground-truth document: site facts, robots.txt, the text cases' groups and every path."""
    return {
        "format": "cidermill.demo_site.ground_truth/1",
        "site_name": "Cider Mill Gazette",
        "crawler_user_agent": crawl_cases.CRAWLER,
        "training_opt_out_user_agent": crawl_cases.OPT_OUT,
        "start_path": "/",
        "robots_txt": {"path": "/robots.txt", "text": crawl_cases.ROBOTS_TXT,
                       "crawl_delay": {"*": 10.0, crawl_cases.CRAWLER: None, crawl_cases.OPT_OUT: None},
                       "sitemaps": ["/sitemap.xml"],
                       "agents": [crawl_cases.CRAWLER, crawl_cases.OPT_OUT, "*"]},
        "languages": sorted({e["lang"] for e in entries.values() if e.get("lang") and e["quality"] == "good"}),
        "boilerplate_snippets": BOILERPLATE_SNIPPETS,
        "eval_passages": text_cases.EVAL_PASSAGES,
        "near_duplicate_groups": info.get("near_duplicate_groups", {}),
        "exact_duplicate_groups": info.get("exact_duplicate_groups", {}),
        "redirects": {"chain": ["/redirect/start.html", "/redirect/hop-1.html", "/redirect/hop-2.html",
                                "/redirect/final.html"],
                      "loop": ["/loop/a.html", "/loop/b.html"]},
        "dynamic_routes": {
            "spider_trap": {"pattern": "/calendar/YYYY/MM/", "entry": "/calendar/2024/01/", "infinite": True},
            "slow": {"path": "/slow.html", "default_seconds": 15},
            "huge": {"path": "/huge.html", "bytes": 50 * 1024 * 1024},
            "decompression_bomb": {"path": "/img/bad/huge-100mp.png", "size": [10000, 10000]},
        },
        "paths": dict(sorted(entries.items())),
    }


def main() -> None:
    gt = generate()
    n_html = sum(1 for e in gt["paths"].values() if e["kind"] == "html")
    size = sum(f.stat().st_size for f in SITE.rglob("*") if f.is_file())
    print(f"wrote {SITE} ({n_html} HTML pages, {len(gt['paths'])} paths, {size / 1024:.0f} KiB) and {GROUND_TRUTH}")


if __name__ == "__main__":
    main()
