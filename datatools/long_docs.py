"""Natural long documents kept whole: one document per manual, book or long text file.

The report's long-context stage samples "naturally occurring long-form data". The anchor corpus
(datatools/debian_docs.py) cuts pages into chunks of up to ~2,000 words; here a document is a whole
unit of documentation instead:

- ``unit="manual"`` (default): every documentation file of one directory in one language, in
  natural file-name order (``ch2`` before ``ch10``), is one document: a multi-page HTML manual
  (debian-reference's chapters, the Debian Handbook's pages of one language) stays one document.
- ``unit="file"``: every file is one document (a book shipped as one text or HTML file).

Files read: HTML (text blocks in page order, navigation/script/code removed, as debian_docs reads
them; index/search pages skipped) and plain text (.txt, .md, .rst, also gzipped). Sphinx's
``_sources``/``_static`` copies are skipped. A file that is not UTF-8 text is dropped with a reason;
a unit under ``min_words`` words is dropped as ``short`` (it is not long). A unit longer than
``max_chars`` characters (the tokenize stage's per-document limit) is cut at its last paragraph end
that fits into consecutive parts ``ID~p0``, ``ID~p1``... with ``part``/``parts`` recorded, so no
text is lost to tokenize's limit; the packer then splits anything longer than its largest bucket
at sentence ends (training/data/buckets.py), recorded there too.

Output: a ``documents`` dataset (``id``, ``text``, ``title``, ``lang``, ``files``, ``words``,
``part``, ``parts``) with a ``_report/`` of kept/dropped units and files, ready for
``cidermill tokenize``. Same files in, same dataset out.

    python -m datatools.long_docs --root DIR --out out/cpt/books/docs          # a directory of docs
    python -m datatools.long_docs --packages debian-handbook --out out/cpt/books/docs   # via apt
"""
from __future__ import annotations

import argparse
import gzip
import os
import re
import sys
from collections import defaultdict

import lxml.etree
import lxml.html
import pyarrow as pa

from corpus.errors import CidermillError
from corpus.report import ReportStats, write_report
from corpus.writer import write_dataset
from datatools import debian_docs

HTML_EXT = (".html", ".htm", ".xhtml")
TEXT_EXT = (".txt", ".md", ".rst", ".text")
_SKIP_DIRS = {"_sources", "_static", "_images", "_downloads"}
_CJK = ("ja", "zh", "zh-cn", "zh-tw", "ko")
UNITS = ("manual", "file")

LONG_DOCS = pa.schema([
    ("id", pa.string()),       # unit key (relative file or `dir#lang`), `~pN` added for parts
    ("text", pa.string()),
    ("title", pa.string()),    # relative path of the file or directory the unit came from
    ("lang", pa.string()),     # HTML: as debian_docs reads it (default "en"); plain text: ""
    ("files", pa.int32()),     # files joined into this unit
    ("words", pa.int64()),     # words of this row's text (CJK: characters / 2)
    ("part", pa.int32()),      # 0-based part of a unit longer than max_chars
    ("parts", pa.int32()),
])


def _natural(s: str) -> list:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def doc_kind(path: str) -> str | None:
    """'html', 'text' or None (not a documentation file)."""
    name = path[:-3] if path.endswith(".gz") else path
    if name.endswith(HTML_EXT):
        return None if debian_docs.is_index_page(name) else "html"
    return "text" if name.endswith(TEXT_EXT) else None


def doc_files(root: str) -> list[str]:
    """Documentation files under root, sorted; Sphinx source/static copies left out."""
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in _SKIP_DIRS)
        out.extend(os.path.join(d, f) for f in files if doc_kind(f))
    return sorted(out)


_LANG_TAG = re.compile(r"^[a-z]{2}(-[a-z]{2})?$")


def file_language(path: str) -> str:
    """`name.LL.ext` -> LL; else HTML as debian_docs reads it (default "en"); plain text ""."""
    parts = os.path.basename(path[:-3] if path.endswith(".gz") else path).split(".")
    if len(parts) >= 3 and _LANG_TAG.match(parts[-2]) and parts[-2] not in ("md", "rst", "py"):
        return parts[-2]
    return debian_docs.page_language(path) if doc_kind(path) == "html" else ""


def reading_order(paths: list[str]) -> list[str]:
    """Pages of one directory in the order its index page (`index.html` or `index.LL.html`) first
    links them, the rest after in natural name order (file names alone put a preface last)."""
    d, lang = os.path.dirname(paths[0]), file_language(paths[0])
    rank: dict[str, int] = {}
    for name in (f"index.{lang}.html", "index.html"):
        idx = os.path.join(d, name)
        if os.path.isfile(idx):
            try:
                with open(idx, "rb") as f:
                    links = [link for _, _, link, _ in lxml.html.fromstring(f.read()).iterlinks()]
            except (OSError, ValueError, lxml.etree.ParserError):
                break
            for link in links:
                rank.setdefault(link.split("#")[0].split("?")[0], len(rank))
            break
    return sorted(paths, key=lambda p: (rank.get(os.path.basename(p), len(rank)), _natural(os.path.basename(p))))


def group_units(root: str, files: list[str], unit: str = "manual") -> dict[str, list[str]]:
    """Unit key -> its files in reading (natural name) order."""
    if unit not in UNITS:
        raise CidermillError(f"unknown unit {unit!r} (one of {', '.join(UNITS)})")
    groups: dict[str, list[str]] = defaultdict(list)
    for p in files:
        rel = os.path.relpath(p, root)
        key = rel if unit == "file" else f"{os.path.dirname(rel) or '.'}#{file_language(p)}"
        groups[key].append(p)
    return {k: reading_order(v) for k, v in sorted(groups.items())}


def file_text(path: str) -> str:
    """The text of one documentation file; CidermillError('binary'|'not_utf8') when it is not text."""
    if doc_kind(path) == "html":
        return "\n\n".join(debian_docs.page_blocks(path))
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    if b"\x00" in raw:
        raise CidermillError("binary")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CidermillError("not_utf8") from None
    paras = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text)]  # reflow lines inside a paragraph
    return "\n\n".join(p for p in paras if p)


def count_words(text: str, lang: str) -> int:
    return len(text) // 2 if lang.startswith(_CJK) else len(text.split())


def split_parts(text: str, max_chars: int) -> list[str]:
    """Consecutive parts of at most max_chars, each cut after its last paragraph end that fits
    (else its last whitespace, else hard); joined with blank lines they give the text back."""
    parts = []
    while len(text) > max_chars:
        cut = text.rfind("\n\n", 0, max_chars + 1)
        if cut <= 0:
            cut = max(text.rfind(" ", 0, max_chars + 1), text.rfind("\n", 0, max_chars + 1))
        if cut <= 0:
            cut = max_chars
        parts.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    return parts + [text] if text else parts


def read_unit(paths: list[str], fst) -> list[str]:
    """Texts of one unit's files, recording each file kept or dropped (with its reason) in `fst`.

    A unit holding a manual twice, as HTML pages and as a plain-text rendering (Debian ships
    both), keeps the text (one file, in reading order): when the plain text has at least 80% of
    the pages' words the pages are dropped as `html_twin_of_text`; otherwise both are kept."""
    got = []
    for p in paths:
        if os.path.islink(p):  # packages link shared files in: the target is read where it lives
            fst.record(False, "symlink")
            continue
        try:
            t = file_text(p)
        except CidermillError as e:
            fst.record(False, str(e))
        except (OSError, EOFError, ValueError) as e:  # unreadable file or broken gzip / HTML
            fst.record(False, f"unreadable:{type(e).__name__}")
        else:
            if t:
                got.append((doc_kind(p), t))
            else:
                fst.record(False, "empty")
    words = {k: sum(len(t.split()) for kk, t in got if kk == k) for k in ("html", "text")}
    twin = words["html"] > 0 and words["text"] >= 0.8 * words["html"]
    for k, _ in got:
        fst.record(not (twin and k == "html"), "html_twin_of_text")
    return [t for k, t in got if not (twin and k == "html")]


def build(root: str, out: str, unit: str = "manual", min_words: int = 2000, max_chars: int = 1_000_000,
          overwrite: bool = False) -> dict:
    """Write the whole documents under root to the dataset `out`; returns a summary."""
    if not os.path.isdir(root):
        raise CidermillError(f"{root}: no such directory")
    if max_chars < 1000:
        raise CidermillError(f"max_chars {max_chars} is too small for whole documents (>= 1000)")
    stats = ReportStats()
    fst, ust = stats.stage("files"), stats.stage("units")
    rows = []
    for key, paths in group_units(root, doc_files(root), unit).items():
        texts = read_unit(paths, fst)
        lang = file_language(paths[0])
        text = "\n\n".join(texts)
        words = count_words(text, lang)
        if words < min_words:
            ust.record(False, "empty" if not texts else "short")
            continue
        ust.record(True, scores={"words": words}, ranges={"words": (0, 1_000_000)})
        title = key if unit == "file" else key.rsplit("#", 1)[0]
        parts = split_parts(text, max_chars)
        if len(parts) > 1:
            ust.counters["units_cut_at_max_chars"] += 1
        for i, part in enumerate(parts):
            rows.append({"id": key if len(parts) == 1 else f"{key}~p{i}", "text": part, "title": title,
                         "lang": lang, "files": len(texts), "words": count_words(part, lang),
                         "part": i, "parts": len(parts)})
        ust.counters["words"] += words
    if not rows:
        raise CidermillError(f"{root}: no document of {min_words} words or more "
                             f"({fst.rows_in} documentation files read)")
    ust.counters["rows"] = len(rows)
    prov = {"builder": "datatools.long_docs", "root": os.path.abspath(root), "unit": unit,
            "min_words": min_words, "max_chars": max_chars}
    write_dataset(out, "documents", pa.Table.from_pylist(rows, schema=LONG_DOCS), prov, overwrite=overwrite)
    write_report(out, stats)
    return {"out": out, "files": fst.rows_in, "files_dropped": dict(fst.dropped), "units": ust.rows_in,
            "documents": ust.kept, "units_dropped": dict(ust.dropped), "rows": len(rows),
            "words": ust.counters["words"], "cut_at_max_chars": ust.counters["units_cut_at_max_chars"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--root", help="a directory of documentation files (e.g. unpacked packages)")
    src.add_argument("--packages", nargs="+", help="Debian documentation packages to fetch with apt-get download")
    ap.add_argument("--scratch", default="/tmp/cidermill-long-docs", help="where --packages are unpacked")
    ap.add_argument("--out", required=True, help="documents dataset to write (then `cidermill tokenize --in` it)")
    ap.add_argument("--unit", choices=UNITS, default="manual", help="one document per directory+language, or per file")
    ap.add_argument("--min-words", type=int, default=2000, help="drop units shorter than this (not long)")
    ap.add_argument("--max-chars", type=int, default=1_000_000, help="cut longer units into parts at paragraph ends")
    ap.add_argument("--overwrite", action="store_true")
    a = ap.parse_args(argv)
    try:
        root = a.root or debian_docs.fetch(a.scratch, a.packages)
        s = build(root, a.out, a.unit, a.min_words, a.max_chars, a.overwrite)
    except CidermillError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"long docs: {s['documents']} documents ({s['words']} words, {s['rows']} rows, "
          f"{s['cut_at_max_chars']} cut at --max-chars) from {s['files']} files -> {s['out']}; "
          f"dropped units {s['units_dropped']}, files {s['files_dropped']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
