"""Mail-archive pages mark where the message body is: the selection follows the mark.

The programs that turn mailing lists into web pages write the body of each message between two
HTML comments of their own, with the navigation around it (previous and next message, "sorted by
date / thread / subject / author", often printed both above and below the body):

- Mailman 2's pipermail: `<!--beginarticle-->` ... `<!--endarticle-->`;
- MHonArc (and archives built on it, such as Sympa's): `<!--X-Body-of-Message-->` ...
  `<!--X-Body-of-Message-End-->`;
- Hypermail: `<!-- body="start" -->` ... `<!-- body="end" -->`.

Mailman 3's HyperKitty writes no comments; its pages (footer "Powered by HyperKitty", assets under
/static/hyperkitty/) hold each message's text in `<div class="email-body">`, which its stylesheet
lays out `white-space: pre-line` (`pre` for a message shown in fixed font). On such a page that
style is applied to the static tree, so the text keeps the message's line breaks, and the
selection is every block inside a message body plus the first <h1> (the subject); the sender and
the date come from the first message's header.

public-inbox (lore.kernel.org and other archives of patch lists) prints a message as one
`<pre id=b>`: the mail headers, a blank line, the body; the thread overview, the reply
instructions and the mirroring notes follow in other `<pre>`s. On a page that says it is served by
public-inbox (its footer links the code, public-inbox.org/public-inbox.git), the text is the
Subject line and the body as laid out, and the sender and date come from the From and Date headers;
the other headers (addresses, message ids) are not text.

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
    body = [start < (getattr(b.el, "sourceline", None) or 0) < end for b in blocks]
    return _with_subject(body, keep, next((i for i, b in enumerate(blocks) if b.el.tag == "h1"), None))


def _with_subject(body: list[bool], keep: list[bool], subject: int | None) -> list[bool]:
    """The message body's blocks and the subject's block (the archiver's heading), or `keep` (a
    copy) when the body holds no block."""
    if not any(body):
        return list(keep)
    if subject is not None:
        body[subject] = True
    return body


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


# HyperKitty (Mailman 3): where a page says it was written by it, and its message bodies
_HK_SIGNS = ("hyperkitty.readthedocs", "/static/hyperkitty/")
_DAY_MONTH_YEAR = re.compile(r"(\d{1,2})\s+([A-Z][a-z]+)\s+(\d{4})")
_MONTH_DAY_YEAR = re.compile(r"([A-Z][a-z]{2})[a-z]*\.?\s+(\d{1,2}),\s+(\d{4})")


def hyperkitty_page(html: str) -> bool:
    """Whether a page was written by HyperKitty and holds a message body."""
    return 'class="email-body' in html and any(sign in html for sign in _HK_SIGNS)


def _classes(el) -> list[str]:
    return (el.get("class") or "").split()


def lay_out_hyperkitty(doc) -> int:
    """Apply HyperKitty's stylesheet rule for message bodies to the static tree (white-space:
    pre-line, or pre in fixed font), so the text keeps the lines as written; returns how many."""
    n = 0
    for el in doc.iter("div"):
        cls = _classes(el)
        if "email-body" in cls:
            mode = "pre" if "fixed" in cls else "pre-line"
            el.set("style", f"{el.get('style') or ''};white-space: {mode}".lstrip(";"))
            n += 1
    return n


def hyperkitty_body(blocks, keep: list[bool]) -> list[bool]:
    """The blocks inside a message body, and the subject: the page's first <h1> (a message page) or
    the thread header's <h3> (a thread page); `keep` itself (a copy) when no block lies in a body."""
    def under(el, cls: str) -> bool:   # an element above el has class `cls`
        return any(cls in _classes(a) for a in el.iterancestors())

    subject = next((i for i, b in enumerate(blocks) if b.el.tag == "h1" or (
        b.el.tag == "h3" and under(b.el, "thread-header"))), None)
    return _with_subject([("email-body" in _classes(b.el) or under(b.el, "email-body")) for b in blocks], keep,
                         subject)


def hyperkitty_sender_and_date(doc) -> tuple[str | None, str | None]:
    """(sender's name, YYYY-MM-DD) from the first message's header, as HyperKitty prints them:
    the name in `.email-author .name`, the date in `.email-date` ("Tuesday, 8 October 2024") or
    the sender's-time tooltip ("Oct. 8, 2024, 9:41 a.m.")."""
    name = date = None
    for el in doc.iter("div"):
        cls = _classes(el)
        if name is None and "email-author" in cls:
            span = next((s for s in el.iter("span") if "name" in _classes(s)), None)
            if span is not None:
                name = " ".join(span.text_content().split()) or None
        if date is None and "email-date" in cls:
            texts = [" ".join(el.text_content().split())] + [s.get("title") or "" for s in el.iter("span")]
            for t in texts:
                date = _hk_date(t)
                if date:
                    break
        if name is not None and date is not None:
            break
    return name, date


def _hk_date(text: str) -> str | None:
    """YYYY-MM-DD of "8 October 2024" or "Oct. 8, 2024" in `text` (Django's English formats), or None."""
    for rx, fmts in ((_DAY_MONTH_YEAR, ("%d %B %Y", "%d %b %Y")), (_MONTH_DAY_YEAR, ("%b %d %Y",))):
        m = rx.search(text)
        for fmt in fmts if m else ():
            try:
                return datetime.strptime(" ".join(m.groups()), fmt).date().isoformat()
            except ValueError:
                continue
    return None


# public-inbox: the message is <pre id=b>, headers then a blank line then the body
_PI_SIGN = "public-inbox.org/public-inbox.git"
_PI_BODY = re.compile(r"""<pre\s+id=["']?b["']?[\s>]""", re.I)
_HEADER_LINE = re.compile(r"^([A-Za-z][A-Za-z-]*):[ \t]*(.*)$")


def public_inbox_page(html: str) -> bool:
    """Whether a page is a message page served by public-inbox."""
    return _PI_SIGN in html and _PI_BODY.search(html) is not None


def public_inbox_message(blocks, keep: list[bool]) -> tuple[list[bool], str | None, str | None]:
    """(selection, sender's name, YYYY-MM-DD): the `<pre id=b>` block alone, its text set to the
    Subject line and the body; `keep` (a copy) and no sender or date when the page has no such block."""
    at = next((i for i, b in enumerate(blocks) if b.el.tag == "pre" and b.el.get("id") == "b"), None)
    if at is None:
        return list(keep), None, None
    head, _, body = (blocks[at].shown or blocks[at].text).partition("\n\n")
    headers: dict[str, str] = {}
    for line in head.split("\n"):
        m = _HEADER_LINE.match(line)
        if m:
            headers.setdefault(m.group(1).lower(), m.group(2).strip())
    subject = headers.get("subject")
    blocks[at].shown = "\n".join(x for x in (subject, body.strip("\n")) if x)
    out = [False] * len(blocks)
    out[at] = True
    sender = _ADDRESS.sub(" ", headers.get("from", "")).strip().strip('"') or None
    return out, sender, iso_date(headers["date"]) if headers.get("date") else None


def archive_kind(html: str, doc) -> str | tuple[int, int] | None:
    """Which archiver wrote the page: the lines of its body marks (pipermail, MHonArc, Hypermail:
    body_lines), "hyperkitty", "public-inbox", or None. A HyperKitty page gets its stylesheet's
    layout here, before the page is cut into blocks."""
    lines = body_lines(html)
    if lines is not None:
        return lines
    if hyperkitty_page(html) and lay_out_hyperkitty(doc):
        return "hyperkitty"
    return "public-inbox" if public_inbox_page(html) else None


def archived_message(kind: str | tuple[int, int] | None, html: str, doc, blocks, keep: list[bool]
                     ) -> tuple[list[bool], str | None, str | None]:
    """(selection, sender's name, YYYY-MM-DD) of a page `archive_kind` named; `keep` (a copy) and
    no sender or date for any other page."""
    if isinstance(kind, tuple):
        return (declared_body(blocks, keep, kind), *sender_and_date(html))
    if kind == "hyperkitty":
        return (hyperkitty_body(blocks, keep), *hyperkitty_sender_and_date(doc))
    if kind == "public-inbox":
        return public_inbox_message(blocks, keep)
    return list(keep), None, None
