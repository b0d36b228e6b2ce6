"""Mail archives in: mbox files (gzip-compressed or not, as mailing-list software exports them:
Mailman's monthly `2020-March.txt.gz`) and folders of single messages (maildir, .eml) become
PAGES rows, one per message, like a crawl's pages.

- The text is the message's own words: the plain-text body (the HTML one through the page
  extractor when there is no plain one), without what other messages already hold or what every
  message repeats: quoted lines (`> ...`) and the line that introduces them ("On ... wrote:"),
  an Outlook "Original Message" tail, the signature after the `-- ` line, a mailing list's footer
  and PGP armour. `keep_quotes` keeps the quotes.
- The row's URL is the message's `mid:` URL (RFC 2392), so a message posted to two lists is one
  row; a message without a Message-ID gets one from its bytes. `host` is the list (List-Id), else
  the sender's domain.
- `X-No-Archive: yes` is the author's opt-out: the row is kept for the audit with no text and
  training_allowed=false, as a noindex page.
- A message too large, or one that does not parse, is counted in `skipped` and the next one read.
"""
from __future__ import annotations

import email
import email.policy
import gzip
import hashlib
import os
import re
from collections import Counter
from datetime import datetime, timezone
from email.utils import parseaddr, parsedate_to_datetime
from typing import Any, BinaryIO, Iterator
from urllib.parse import quote

from crawl.urls import url_id

MAX_MESSAGE_BYTES = 10 * 1024 * 1024
MAILDIR_METADATA = ("dovecot", "courierimap", "maildirfolder", "maildirsize", "subscriptions", ".uidvalidity",
                    ".mh_sequences", ".ds_store")
SPLIT_BYTES = 16 << 20      # the span of a plain mbox one worker reads (mbox_ranges): messages are small
GZIP_MAGIC = b"\x1f\x8b"
_FROM_ESCAPED = re.compile(rb"^>+From ", re.M)          # mboxrd: ">From " in a body, one ">" added
# An envelope line: "From sender date", the date with a clock time ("Tue Mar  3 14:02:11 2020");
# a body line that merely starts with "From " (unescaped, as mboxcl2 writes them) has none.
_ENVELOPE = re.compile(rb"^From \S+.*\b\d{1,2}:\d{2}(:\d{2})?\b")
_QUOTED = re.compile(r"^[ \t]*>")
_SIG = re.compile(r"^--[ \t]?$")
_FOOTER_RULE = re.compile(r"^_{20,}[ \t]*$")
_ORIGINAL = re.compile(r"^[ \t]*-{3,}[ \t]*(original message|ursprüngliche nachricht|message d'origine|"
                       r"mensaje original|messaggio originale)[ \t]*-{3,}[ \t]*$", re.I)
_PGP_HEAD = "-----BEGIN PGP SIGNED MESSAGE-----"
_PGP_SIG = re.compile(r"^-----BEGIN PGP SIGNATURE-----$.*?^-----END PGP SIGNATURE-----$", re.M | re.S)
TAIL_LINES = 12     # a signature or a footer is this short; a longer tail is the message


def iter_mbox_pages(path: str, skipped: Counter | None = None, keep_quotes: bool = False,
                    span: tuple[int, int | None] = (0, None)) -> Iterator[dict[str, Any]]:
    """PAGES rows from one mbox file (plain or gzip) or a folder of one-message files; of a plain
    mbox, only the messages whose envelope line starts in `span` (mbox_ranges)."""
    skipped = skipped if skipped is not None else Counter()
    fallback_date = datetime.fromtimestamp(os.path.getmtime(path), timezone.utc).isoformat(timespec="seconds")
    for raw in _raw_messages(path, skipped, span):
        try:
            row, why = message_row(raw, fallback_date, keep_quotes, os.path.basename(path.rstrip("/")))
        except Exception as e:  # noqa: BLE001  (one broken message: counted, the next one is read)
            row, why = None, f"mail_unparseable:{type(e).__name__}"
        if row is None:
            skipped[why] += 1
            continue
        yield row


def mbox_ranges(path: str, split_bytes: int | None = None) -> list[tuple[int, int | None]]:
    """Byte ranges of an mbox file that workers can read apart: fixed spans of `split_bytes` in a
    plain (not gzip) file larger than that, the same whatever the worker count; the whole file or
    folder otherwise. A range holds the messages whose envelope line starts in it."""
    split = SPLIT_BYTES if split_bytes is None else split_bytes
    if os.path.isdir(path) or (size := os.path.getsize(path)) <= split:
        return [(0, None)]
    with open(path, "rb") as f:
        if f.read(2) == GZIP_MAGIC:
            return [(0, None)]
    return [(a, min(a + split, size)) for a in range(0, size, split)]


def _raw_messages(path: str, skipped: Counter, span: tuple[int, int | None] = (0, None)) -> Iterator[bytes]:
    if os.path.isdir(path):
        for root, dirs, files in os.walk(path):
            dirs.sort()
            if "cur" in dirs and "new" in dirs and "tmp" in dirs:
                dirs.remove("tmp")     # a maildir's tmp/ holds messages still being delivered
            for name in sorted(files):
                if name.lower().startswith(MAILDIR_METADATA):
                    continue           # a mail server's index and state files, not messages
                full = os.path.join(root, name)
                try:
                    if not os.path.isfile(full):       # a socket, a FIFO, a dangling link
                        skipped["mail_not_a_file"] += 1
                        continue
                    if os.path.getsize(full) > MAX_MESSAGE_BYTES:
                        skipped["mail_too_large"] += 1
                        continue
                    with open(full, "rb") as f:
                        raw = f.read(MAX_MESSAGE_BYTES + 1)
                except OSError as e:
                    skipped[f"mail_unreadable:{type(e).__name__}"] += 1
                    continue
                yield raw
        return
    with open(path, "rb") as f:
        gz = f.read(2) == GZIP_MAGIC
    if gz:
        with gzip.open(path, "rb") as f:
            yield from split_mbox(f, skipped)
        return
    with open(path, "rb") as f:
        yield from split_mbox(f, skipped, *span)


def _line_start_at_or_after(f: BinaryIO, pos: int) -> tuple[int, bool]:
    """(offset of the first line that starts at or after `pos`, whether the line before it is
    blank); the file is left positioned there."""
    f.seek(pos - 1)
    while True:       # to the end of the line holding pos - 1 (long lines come in pieces)
        piece = f.readline(1 << 16)
        pos = f.tell()
        if not piece or piece.endswith(b"\n"):
            break
    f.seek(max(0, pos - 3))
    before = f.read(pos - max(0, pos - 3))
    f.seek(pos)
    return pos, before.endswith((b"\n\n", b"\n\r\n")) or before in (b"\n", b"\r\n")


def split_mbox(f: BinaryIO, skipped: Counter, start: int = 0, end: int | None = None) -> Iterator[bytes]:
    """The messages of an mbox stream: each begins at a "From " envelope line (sender and date)
    that starts the file or follows a blank line; the envelope is not part of the message. A message
    over MAX_MESSAGE_BYTES is counted as mail_too_large and skipped without being held. Of a
    seekable file, `start`/`end` keep the messages whose envelope starts in [start, end): the last
    one is read past `end` to its own end, and what precedes the first envelope after a `start`
    past 0 is the previous range's."""
    parts: list[bytes] = []      # bytes before the first envelope are a message too (a lone .eml)
    size, too_large, blank_before, started = 0, False, True, start == 0
    pos = 0
    if start > 0:
        pos, blank_before = _line_start_at_or_after(f, start)
    while True:
        line = f.readline(1 << 16)
        at, pos = pos, pos + len(line)
        if not line or (blank_before and _ENVELOPE.match(line)):
            if too_large:
                skipped["mail_too_large"] += 1
            elif parts:
                yield _FROM_ESCAPED.sub(lambda m: m.group(0)[1:], b"".join(parts))
            if not line or (end is not None and at >= end):
                return
            parts, size, too_large, blank_before, started = [], 0, False, False, True
            continue
        blank_before = line in (b"\n", b"\r\n")
        if not started:
            continue
        size += len(line)
        if size > MAX_MESSAGE_BYTES:
            too_large, parts = True, []
        elif not too_large:
            parts.append(line)


def message_row(raw: bytes, fallback_date: str, keep_quotes: bool = False,
                origin: str = "") -> tuple[dict[str, Any] | None, str | None]:
    """(the PAGES row of one RFC 5322 message, None) or (None, why there is none)."""
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    if not any(_header(msg, h) for h in ("From", "Date", "Message-ID", "Subject")):
        return None, "mail_not_a_message"          # no header a message has: some other file
    mid = _header(msg, "Message-ID").strip().strip("<>").strip()
    if not mid:
        mid = "sha1-" + hashlib.sha1(raw).hexdigest() + "@cidermill.invalid"
    url = "mid:" + quote(mid, safe="@!$&'()*+,;=:-._~")
    subject = " ".join(_header(msg, "Subject").split()) or None
    name, addr = parseaddr(_header(msg, "From"))
    list_id = re.search(r"<([^<>\s]+)>", _header(msg, "List-Id"))
    host = list_id.group(1) if list_id else (addr.rpartition("@")[2].lower() or origin)
    date = _iso_date(_header(msg, "Date")) or fallback_date
    no_archive = _header(msg, "X-No-Archive").strip().lower().startswith("yes")
    text = None
    if not no_archive:
        body, ctype = _body(msg)
        text = (mail_text(body, keep_quotes) if ctype == "text/plain" else _html_text(body, url)) if body else None
        if not text:
            return None, "mail_no_text"
    lang = _header(msg, "Content-Language").split(",")[0].strip() or None
    return {
        "id": url_id(url), "url": url, "final_url": url, "host": host, "depth": 0, "status": 200,
        "fetched_at": date, "fetch_ms": None, "content_type": "message/rfc822", "encoding": "utf-8",
        "headers": [], "raw_html_zstd": None, "rendered_html_zstd": None, "rendered": False,
        "robots_noindex": no_archive, "robots_nofollow": True, "training_allowed": not no_archive,
        "title": subject, "text": text, "language_hint": lang,
        "author": " ".join(name.split()) or None,   # the display name: the address is not kept
        "date": date, "canonical_url": None, "images": [], "tables": [], "outlinks": [], "source": "mbox",
    }, None


def _header(msg, name: str) -> str:
    try:
        return str(msg.get(name) or "")
    except Exception:  # noqa: BLE001  (a header that does not decode reads as absent)
        return ""


def _iso_date(value: str) -> str | None:
    try:
        d = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if d.tzinfo is None:
        d = d.replace(tzinfo=timezone.utc)
    return d.astimezone(timezone.utc).isoformat(timespec="seconds")


def _body(msg) -> tuple[str | None, str]:
    """The message's main body (plain text preferred) and its type; attachments are not read."""
    part = msg.get_body(preferencelist=("plain", "html"))
    if part is None:
        return None, ""
    ctype = part.get_content_type()
    try:
        return part.get_content(), ctype
    except (LookupError, UnicodeError, ValueError, AssertionError):
        payload = part.get_payload(decode=True) or b""   # an unknown or wrong charset label
        return payload.decode("utf-8", "replace"), ctype


def _html_text(html: str, url: str) -> str | None:
    from crawl.extract import extract_page  # noqa: PLC0415  (the page extractor: only for HTML-only mail)
    return extract_page(html, "http://mail.invalid/" + url_id(url)).text


def mail_text(body: str, keep_quotes: bool = False) -> str:
    """A plain-text body without quotes, their attribution line, an Outlook "Original Message"
    tail, the signature, a list footer and PGP armour; blank runs cut to one empty line."""
    body = _PGP_SIG.sub("", body.replace("\r\n", "\n").replace("\r", "\n"))
    lines = body.split("\n")
    if lines and lines[0].strip() == _PGP_HEAD:      # "Hash: ..." header lines up to the first blank
        end = next((i for i, ln in enumerate(lines) if not ln.strip()), len(lines))
        lines = lines[end + 1:]
    lines = [ln[2:] if ln.startswith("- -") else ln for ln in lines]   # PGP dash-escaping
    for i, ln in enumerate(lines):     # Outlook's reply header: the whole original follows, unquoted
        if _ORIGINAL.match(ln) or (_FOOTER_RULE.match(ln) and i + 1 < len(lines) and lines[i + 1].startswith("From:")):
            lines = lines[:i]
            break
    lines = _cut_tail(lines, _FOOTER_RULE)
    lines = _cut_tail(lines, _SIG)
    if not keep_quotes:
        lines = _without_quotes(lines)
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(ln.rstrip() for ln in lines))
    return text.strip()


def _cut_tail(lines: list[str], rule: re.Pattern) -> list[str]:
    """Lines before the last one matching `rule`, where at most TAIL_LINES follow it."""
    for i in range(len(lines) - 1, max(-1, len(lines) - TAIL_LINES - 2), -1):
        if rule.match(lines[i]):
            return lines[:i]
    return lines


def _without_quotes(lines: list[str]) -> list[str]:
    """Lines that are not quoted, less the short paragraph ending in ":" right before a quote
    ("On Mon, Jane <jane@...> wrote:", wrapped or not, in whatever language)."""
    out: list[str] = []
    for ln in lines:
        if not _QUOTED.match(ln):
            out.append(ln)
            continue
        end = len(out)
        while end and not out[end - 1].strip():
            end -= 1
        start = end
        while start and out[start - 1].strip():
            start -= 1
        para = out[start:end]
        if para and len(para) <= 3 and para[-1].rstrip().endswith(":") and sum(map(len, para)) < 300:
            del out[start:end]
    return out
