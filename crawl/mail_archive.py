"""Mail-archive pages mark where the message body is: the selection follows the mark.

The programs that turn mailing lists into web pages write the body of each message between two
HTML comments of their own, with the navigation around it (previous and next message, "sorted by
date / thread / subject / author", often printed both above and below the body):

- Mailman 2's pipermail: `<!--beginarticle-->` ... `<!--endarticle-->`;
- MHonArc (and archives built on it, such as Sympa's): `<!--X-Body-of-Message-->` ...
  `<!--X-Body-of-Message-End-->`;
- Hypermail: `<!-- body="start" -->` ... `<!-- body="end" -->`.

A page that carries such a pair declares its content the way an article declares itself with
og:type (crawl/page_kind.py), so it is read as declared: every block between the marks, plus the
page's first <h1> (the subject line), and nothing else. A page with no
pair, or with marks that hold no block, keeps the classifier's selection.

The parser drops comments, so the marks are found in the page's source and compared with the
source line of each block's element (lxml's `sourceline`): these archives write one tag per line,
and a block that starts on a mark's own line is not counted inside (the marks then hold no block
on a page squeezed onto one line, which keeps the classifier's reading).
"""
from __future__ import annotations

import re

_MARK = re.compile(r"<!--\s*(beginarticle|endarticle|x-body-of-message(?:-end)?|body=\"(?:start|end)\")\s*-->",
                   re.I)
_END_OF = {"beginarticle": "endarticle", "x-body-of-message": "x-body-of-message-end",
           'body="start"': 'body="end"'}
MAX_LINE = 65_000   # libxml2 may cap line numbers at 65,535: past that a line says nothing


def body_lines(html: str) -> tuple[int, int] | None:
    """(line of the start mark, line of the end mark), 1-based, of the first complete pair, or None."""
    want, start = None, None
    for m in _MARK.finditer(html):
        name = m.group(1).lower()
        if want is None and name in _END_OF:
            want, start = _END_OF[name], html.count("\n", 0, m.start()) + 1
        elif want is not None and name == want:
            end = html.count("\n", 0, m.start()) + 1
            return (start, end) if end < MAX_LINE else None
    return None


def declared_body(blocks, keep: list[bool], lines: tuple[int, int] | None) -> list[bool]:
    """The blocks whose element starts strictly between the marks' lines, and the page's first <h1>
    (the archivers print the subject there); `keep` itself (a copy) when there are no marks or no
    block lies between them."""
    if lines is None:
        return list(keep)
    start, end = lines
    out = [start < (getattr(b.el, "sourceline", None) or 0) < end for b in blocks]
    if not any(out):
        return list(keep)
    subject = next((i for i, b in enumerate(blocks) if b.el.tag == "h1"), None)
    if subject is not None:
        out[subject] = True
    return out
