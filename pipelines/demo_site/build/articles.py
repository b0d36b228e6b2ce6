"""Load the prose articles from sources/articles/<lang>/<slug>.txt.

File format: `key: value` header lines (title, author, date, description), a line `---`, then
paragraphs separated by blank lines; a paragraph starting with `## ` is a subheading.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SOURCES = Path(__file__).resolve().parent.parent / "sources" / "articles"


@dataclass
class Article:
    lang: str
    slug: str
    title: str
    author: str | None
    date: str | None
    description: str | None
    paragraphs: list[str]

    @property
    def path(self) -> str:
        return f"/{self.lang}/{self.slug}.html"


def parse_article(lang: str, slug: str, text: str) -> Article:
    head, _, body = text.partition("\n---\n")
    meta = {}
    for line in head.splitlines():
        if ":" in line:
            k, _, v = line.partition(":")
            meta[k.strip()] = v.strip()
    joiner = "" if lang in ("ja", "zh") else " "
    paras = []
    for p in body.split("\n\n"):
        p = p.strip()
        if not p:
            continue
        prefix = "## " if p.startswith("## ") else ""
        paras.append(prefix + joiner.join(p[len(prefix):].split()))
    return Article(lang, slug, meta["title"], meta.get("author"), meta.get("date"), meta.get("description"), paras)


def load_articles() -> list[Article]:
    out = []
    for f in sorted(SOURCES.glob("*/*.txt")):
        out.append(parse_article(f.parent.name, f.stem, f.read_text(encoding="utf-8")))
    return out
