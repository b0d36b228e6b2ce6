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

import html as html_lib
import re
from datetime import datetime
from email.utils import parsedate_to_datetime

_MARK = re.compile(r"<!--\s*(beginarticle|endarticle|x-body-of-message(?:-end)?|body=\"(?:start|end)\")\s*-->",
                   re.I)
_END_OF = {"beginarticle": "endarticle", "x-body-of-message": "x-body-of-message-end",
           'body="start"': 'body="end"'}
MAX_LINE = 65_000   # libxml2 may cap line numbers at 65,535: past that a line says nothing


def body_lines(html: str) -> tuple[int, int] | None:
    """(line of the start mark, line of the end mark), 1-based, of the first complete pair, or None."""
    want, start, at = None, None, 0
    for m in _MARK.finditer(html):
        name = m.group(1).lower()
        if want is None and name in _END_OF:
            want, start, at = _END_OF[name], html.count("\n", 0, m.start()) + 1, m.start()
        elif want is not None and name == want:
            end = start + html.count("\n", at, m.start())  # newlines counted once, not from the top again
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


# where each archiver writes the sender and the date (pipermail: <B>name</B> and <I>date</I> under
# the subject; MHonArc: its message head list; Hypermail: comments in the page)
_SENDER_DATE = (
    (re.compile(r"</h1>\s*<b>(.*?)</b>", re.I | re.S), re.compile(r"</h1>.*?<i>(.*?)</i>", re.I | re.S)),
    (re.compile(r"<!--X-Head-of-Message-->.*?<em>From</em>:\s*(.*?)</li>", re.I | re.S),
     re.compile(r"<!--X-Head-of-Message-->.*?<em>Date</em>:\s*(.*?)</li>", re.I | re.S)),
    (re.compile(r'<!--\s*name="([^"]*)"\s*-->', re.I), re.compile(r'<!--\s*sent="([^"]*)"\s*-->', re.I)),
)
_TAG = re.compile(r"<[^>]*>")
_ADDRESS = re.compile(r"\s*[<(][^<>()]*@[^<>()]*[>)]\s*")
_CTIME = re.compile(r"([A-Z][a-z]{2})\s+(\d{1,2})\s+\d\d:\d\d:\d\d(?:\s+\S+)?\s+(\d{4})")
HEAD_CHARS = 20_000   # sender and date sit in the page's head part


def _text(fragment: str) -> str:
    return " ".join(html_lib.unescape(_TAG.sub(" ", fragment)).split())


def iso_date(raw: str) -> str | None:
    """YYYY-MM-DD of an RFC 2822 date ("Tue, 10 Jan 2023 14:02:11 -0500") or a ctime-like one
    ("Tue Jan 10 14:02:11 EST 2023"), or None."""
    try:
        return parsedate_to_datetime(raw).date().isoformat()
    except (TypeError, ValueError, IndexError):
        pass
    m = _CTIME.search(raw)
    if not m:
        return None
    try:
        return datetime.strptime(" ".join(m.groups()), "%b %d %Y").date().isoformat()
    except ValueError:
        return None


def sender_and_date(html: str) -> tuple[str | None, str | None]:
    """(sender's name, YYYY-MM-DD) of an archived message (a page with body marks, body_lines), as
    its archiver printed them; None for what is not found."""
    head = html[:HEAD_CHARS]
    for sender_re, date_re in _SENDER_DATE:
        sender, date = sender_re.search(head), date_re.search(head)
        if sender or date:
            name = _ADDRESS.sub(" ", _text(sender.group(1))).strip() if sender else ""
            return name or None, iso_date(_text(date.group(1))) if date else None
    return None, None
