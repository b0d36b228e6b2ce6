"""Real documents for training and benchmarks, from Debian documentation packages.

`fetch(scratch)` runs `apt-get download` + `dpkg -x` into a scratch directory (never committed);
`documents(root)` turns every HTML page into text chunks of ~`words` words (paragraph, list and
definition blocks in page order, navigation/script/style removed). Sources: python3.11-doc (a
530-page Sphinx site) and debian-reference in 8 languages. Used by the quality-model rebuild
(datatools/quality_data.py) and bench/text_chain.py.
"""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
from dataclasses import dataclass

import lxml.html

PACKAGES = ["python3.11-doc"] + [f"debian-reference-{l}" for l in ("en", "de", "fr", "es", "it", "pt", "ja", "zh-cn")]
# The speed benches' larger corpus (10,000+ chunks of up to 2,000 words): the above plus the Debian
# Administrator's Handbook in 26 languages, the Apache httpd manual in its translations and the
# PostgreSQL, Django, Git, SQLite, SQLAlchemy, scikit-learn, CMake, Octave and Sphinx manuals.
BENCH_PACKAGES = PACKAGES + ["debian-handbook", "postgresql-doc-15", "python-django-doc", "git-doc", "sqlite3-doc",
                             "python-sqlalchemy-doc", "python-sklearn-doc", "apache2-doc", "cmake-doc", "octave-doc",
                             "sphinx-doc"]
_BENCH_GLOBS = ["usr/share/doc/debian-handbook/html/*/*.html", "usr/share/doc/postgresql-doc-15/html/*.html",
                "usr/share/doc/python-django-doc/html/**/*.html", "usr/share/doc/git-doc/**/*.html",
                "usr/share/doc/sqlite3/**/*.html", "usr/share/doc/python-sqlalchemy-doc/html/**/*.html",
                "usr/share/doc/python-sklearn-doc/html/**/*.html", "usr/share/doc/apache2-doc/manual/**/*.html",
                "usr/share/doc/cmake-data/html/**/*.html", "usr/share/doc/octave/**/*.html",
                "usr/share/doc/sphinx-doc/html/**/*.html"]
# Past BENCH_PACKAGES' 13,117 chunks (bench/scale.py --docs beyond that): the GIMP, pandas, SciPy, SymPy,
# Boost, Linux kernel, Erlang/OTP, GnuCash (5 languages), Node.js and Wireshark manuals and the Rust books
# (about 15,400 more chunks of up to 2,000 words). Their pages come after the others', so the first
# 13,117 chunks stay the same whichever list was fetched.
SCALE_PACKAGES = BENCH_PACKAGES + ["gimp-help-en", "python-pandas-doc", "python-scipy-doc", "python-sympy-doc",
                                   "libboost1.81-doc", "rust-doc", "linux-doc-6.1", "erlang-doc", "gnucash-docs",
                                   "nodejs-doc", "wireshark-doc"]
_RUST_BOOKS = ("book", "reference", "rust-by-example", "nomicon", "embedded-book", "rustc", "cargo", "edition-guide",
               "unstable-book", "rustdoc")
_SCALE_GLOBS = ["usr/share/gimp/2.0/help/en/**/*.html", "usr/share/doc/python-pandas-doc/html/**/*.html",
                "usr/share/doc/python-scipy-doc/html/**/*.html", "usr/share/doc/python-sympy-doc/html/**/*.html",
                "usr/share/doc/libboost1.81-doc/doc/html/**/*.html",
                *[f"usr/share/doc/rust-doc/html/{b}/**/*.html" for b in _RUST_BOOKS],
                "usr/share/doc/linux-doc-6.1/html/**/*.html", "usr/share/doc/erlang-doc/**/*.html",
                "usr/share/doc/gnucash-docs/**/*.html", "usr/share/doc/nodejs/api/*.html",
                "usr/share/doc/wireshark/**/*.html"]
_BLOCK_TAGS = {"p", "li", "dd", "dt", "h1", "h2", "h3", "h4", "blockquote", "td"}
_SKIP_TAGS = {"script", "style", "nav", "header", "footer", "pre", "code"}


@dataclass
class Chunk:
    page: str      # relative path of the HTML page (split unit: chunks of one page stay together)
    index: int
    lang: str
    text: str


def fetch(scratch: str, packages: list[str] = PACKAGES) -> str:
    """Download and unpack the packages under scratch/root (skipped if already there); returns root."""
    root = os.path.join(scratch, "root")
    debs = os.path.join(scratch, "debs")
    os.makedirs(debs, exist_ok=True)
    missing = [p for p in packages if not glob.glob(os.path.join(debs, f"{p}_*.deb"))]
    if missing:
        subprocess.run(["apt-get", "download", *missing], cwd=debs, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    done = os.path.join(root, ".packages")
    if not os.path.isdir(root) or not os.path.exists(done) or set(open(done).read().split()) != set(packages):
        # (re)extract when the package list changed since the last extraction
        tmp = root + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp, exist_ok=True)
        for deb in sorted(glob.glob(os.path.join(debs, "*.deb"))):
            if os.path.basename(deb).split("_")[0] in packages:
                subprocess.run(["dpkg", "-x", deb, tmp], check=True)
        with open(os.path.join(tmp, ".packages"), "w") as f:
            f.write("\n".join(sorted(packages)))
        shutil.rmtree(root, ignore_errors=True)
        os.replace(tmp, root)
    return root


def html_pages(root: str) -> list[str]:
    pages = glob.glob(os.path.join(root, "usr/share/doc/python3.11/html/**/*.html"), recursive=True)
    pages += glob.glob(os.path.join(root, "usr/share/debian-reference/*.html"))
    for pattern in _BENCH_GLOBS:  # present only where BENCH_PACKAGES were fetched
        pages += glob.glob(os.path.join(root, pattern), recursive=True)
    first = _usable(pages)
    seen = set(first)
    more = [p for pattern in _SCALE_GLOBS for p in glob.glob(os.path.join(root, pattern), recursive=True)]
    return first + [p for p in _usable(more) if p not in seen]  # present only where SCALE_PACKAGES were fetched


def _usable(pages: list[str]) -> list[str]:
    return sorted({p for p in pages if "/_static/" not in p and "/_sources/" not in p and os.path.isfile(p)})


def page_language(path: str) -> str:
    name = os.path.basename(path)
    if "/debian-handbook/html/" in path:  # .../html/<ll-CC>/page.html
        return os.path.basename(os.path.dirname(path)).split("-")[0]
    parts = name.split(".")
    return parts[-2] if "debian-reference" in path and len(parts) >= 3 else "en"


def page_blocks(path: str) -> list[str]:
    """Text blocks of one HTML page, in order."""
    with open(path, "rb") as f:
        tree = lxml.html.fromstring(f.read())
    for bad in tree.iter(*_SKIP_TAGS):
        bad.drop_tree() if bad.getparent() is not None else None
    for cls in ("related", "sphinxsidebar", "footer", "navheader", "navfooter"):
        for el in tree.find_class(cls):
            if el.getparent() is not None:
                el.drop_tree()
    out = []
    for el in tree.iter(*_BLOCK_TAGS):
        if any(a.tag in _BLOCK_TAGS for a in el.iterancestors()):
            continue  # nested block: its text is in the outer one
        t = " ".join(el.text_content().split())
        if t:
            out.append(t)
    return out


def page_chunks(path: str, root: str, words: int = 250, min_words: int | None = None) -> list[Chunk]:
    """Chunks of about `words` words; a page's last chunk is kept from `min_words` (default words/4)."""
    rel = os.path.relpath(path, root)
    lang = page_language(path)
    cjk = lang in ("ja", "zh-cn", "zh")
    chunks, cur, n = [], [], 0
    for b in page_blocks(path):
        cur.append(b)
        n += len(b) // 2 if cjk else len(b.split())
        if n >= words:
            chunks.append(Chunk(rel, len(chunks), lang, "\n\n".join(cur)))
            cur, n = [], 0
    if cur and n >= (words // 4 if min_words is None else min_words):
        chunks.append(Chunk(rel, len(chunks), lang, "\n\n".join(cur)))
    return chunks


def documents(root: str, words: int = 250, include_index_pages: bool = False,
              min_words: int | None = None) -> list[Chunk]:
    out = []
    for p in html_pages(root):
        if not include_index_pages and is_index_page(p):
            continue
        out.extend(page_chunks(p, root, words, min_words))
    return out


def is_index_page(path: str) -> bool:
    b = os.path.basename(path)
    return b.startswith(("genindex", "py-modindex", "search", "contents")) or b in ("index.html",)
