"""Email addresses spelled out to fool harvesters: `jane at example dot org`, `jane (at)
example.org`, `jane [at] example [dot] org`, `jane AT example DOT org`, and Mailman's pipermail
archives, which print every address as `jane at example.org`.

`@` never appears, so filters/pii.py's address pattern misses them, and mail archives, READMEs and
changelogs are where they are most common. The hard case is the plain form: "jane at example.org"
reads like "available at python.org" or "looks at core.ignorestat", so a plain ` at ` counts only
with evidence that it is an address:
- the last label is a plausible top-level domain (two letters, or a common generic one), for
  every form;
- then a spelled-out marker ((at), [at], {at}, <at>, AT, or any spelled-out dot) is enough;
- a plain ` at ` with dotted domain needs one of: angle brackets around it (`Name <jane at
  example.org>`, a mail header's shape), a local part that no English word has (a digit or one of
  `._%+-` beside letters), a reply attribution right after it (`... wrote:`), a mail header line
  (`From:`, `Cc:`, `Contact:` ...), or the address alone on its line in lower case (a signature);
- a document where one plain address has the archiver's shape (in angle brackets, or before
  `wrote:`) was rewritten address by address (pipermail does it to all of them), so there every
  plain `name at domain.tld` counts.
On 12,000 Debian documentation documents (read while the rules were written) they find 14 of the
16 spelled addresses there ("thanks to huddlej at wwu.edu" has no evidence) and none of the prose
("file at Wikipedia.org", "available at docs.python.org", "stored at sys.path").
"""
from __future__ import annotations

import re
from typing import Iterator

from filters.text_lines import TextLines

# "at" between local part and domain: bracketed, or a word
_AT = re.compile(r"\s*[(\[{<]\s*at\s*[)\]}>]\s*|\s+(?:at|AT)\s+")
_LOCAL_BEFORE = re.compile(r"(?<![\w.+%-])([A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,62}[A-Za-z0-9_])?)$")
_DOT = r"(?:\.|\s*[(\[{<]\s*dot\s*[)\]}>]\s*|\s+(?:dot|DOT)\s+)"
_DOMAIN_AFTER = re.compile(rf"[A-Za-z0-9][A-Za-z0-9-]{{0,62}}(?:{_DOT}[A-Za-z0-9][A-Za-z0-9-]{{0,62}})+\b")
_SPELLED_DOT = re.compile(r"\s|[(\[{<]")
_LABELS = re.compile(_DOT)
_ATTRIBUTION = re.compile(r"\s*[>)\]]?\s*,?\s*(?:wrote|writes|said|a écrit|schrieb|escribió|scrisse|schreef|"
                          r"написал)\b", re.I)
_HEADER = re.compile(r"\s*(?:>\s*)*(?:From|To|Cc|Bcc|Reply-To|Sender|Author|Authors|Contact|Maintainer|"
                     r"Maintainers|Uploaders|E-?mail|Mail)\s*:", re.I)   # at a line's start (match at it)
_BLANKISH = re.compile(r"[ \t<>]*")
_ODD_LOCAL = re.compile(r"[0-9._%+-]")
# "worked at a dot com", "money at the dot com boom": prose, not a host
_NOT_A_HOST = frozenset("a an the this that these those my our your his her their its one some any every each no"
                        .split())
GENERIC_TLDS = frozenset(
    "com org net edu gov mil int info biz name pro aero coop museum mobi asia jobs tel travel cat post "
    "io dev app ai xyz online site tech cloud email mail page blog news club shop store top live space "
    "website digital network systems solutions company group foundation institute academy".split())


def _plausible_tld(label: str) -> bool:
    low = label.lower()
    return low.isascii() and low.isalpha() and (len(low) == 2 or low in GENERIC_TLDS)


def _separators(text: str) -> list[re.Match]:
    """The "at" separators of `text`, in text order: found by plain substring search (C speed: most
    English text has " at " somewhere, and a regex tried at every position costs 10x more), then
    matched in full where they start."""
    seen: dict[int, re.Match] = {}
    for needle, back in ((" at ", 0), (" AT ", 0), ("at)", 8), ("at]", 8), ("at}", 8), ("at>", 8)):
        i = text.find(needle)
        while i >= 0:
            k = i
            while k > 0 and text[k - 1].isspace():
                k -= 1
            for start in range(max(0, k - back), k + 1) if back else (k,):
                m = _AT.match(text, start)
                if m and m.end() > i + 1:
                    seen.setdefault(m.start(), m)
                    break
            i = text.find(needle, i + 1)
    return [seen[k] for k in sorted(seen)]


def spelled_emails(text: str, lines: TextLines | None = None) -> Iterator[tuple[int, int]]:
    """(start, end) of each spelled-out address in `text`. A document that writes one
    address the archiver's way (`<jane at example.org>` in brackets, or before `wrote:`) had every
    address rewritten so: there, every plain `name at domain.tld` is one. `lines`: the text's line
    index, shared with the other detectors (filters/pii.py)."""
    plain: list[tuple[int, int, str]] = []   # plain-at candidates without evidence of their own
    archived = False
    lines = lines or TextLines(text)
    for m in _separators(text):
        local = _LOCAL_BEFORE.search(text, max(0, m.start() - 64), m.start())
        if local is None:
            continue
        dom = _DOMAIN_AFTER.match(text, m.end())
        if dom is None:
            continue
        labels = _LABELS.split(dom.group(0))
        if not _plausible_tld(labels[-1]) or any(lab.isdigit() for lab in labels):
            continue
        name = local.group(1)
        if not any(c.isalpha() for c in name):
            continue   # "3.11 at python.org": a version, not a mailbox
        at = m.group(0).strip()
        spelled_dot = any(_SPELLED_DOT.search(sep) for sep in _LABELS.findall(dom.group(0)))
        if at[0] in "([{<":
            pass   # the writer spelled it out on purpose
        elif spelled_dot:
            if labels[0].lower() in _NOT_A_HOST:
                continue
        elif at == "AT":
            if not (any(c.islower() for c in name) or _ODD_LOCAL.search(name)):
                continue   # "AVAILABLE AT PYTHON.ORG": a shouted heading
        else:
            evidence = _plain_at_evidence(text, local.start(1), dom.end(), name, lines)
            if evidence is None:
                plain.append((local.start(1), dom.end(), name))
                continue
            archived = archived or evidence == "archive"
        yield local.start(1), dom.end()
    if archived:
        for start, end, name in plain:
            if name.lower() not in _NOT_A_HOST:
                yield start, end


def _line_facts(lines: TextLines, pos: int) -> tuple[int, int]:
    """(end of a mail-header prefix at the start of `pos`'s line, or -1; where the line's first
    character other than space, tab, '<' or '>' is), worked out once per line."""
    ls = lines.starts[lines.line_of(pos)]

    def facts() -> tuple[int, int]:
        m = _HEADER.match(lines.text, ls)
        header_end = m.end() if m is not None and "\n" not in lines.text[ls:m.end()] else -1
        return header_end, _BLANKISH.match(lines.text, ls).end()

    return lines.once(("spelled-address line", ls), facts)


def _plain_at_evidence(text: str, start: int, end: int, name: str, lines: TextLines) -> str | None:
    """The evidence a plain `name at domain.tld` needs (module docstring): "archive" for the two
    shapes an archiver's rewrite leaves (angle brackets, a reply attribution), "address" for the
    others, None without any."""
    if start > 0 and text[start - 1] == "<" and text[end:end + 1] == ">":
        return "archive"
    if _ATTRIBUTION.match(text, end):
        return "archive"
    if _ODD_LOCAL.search(name):
        return "address"
    header_end, first_text = _line_facts(lines, start)
    if 0 <= header_end <= start:   # a mail header line ("From:", "Cc:" ...) holds it
        return "address"
    after = _BLANKISH.match(text, end).end()
    alone = first_text >= start and (after == len(text) or text[after] == "\n")
    return "address" if alone and not any(c.isupper() for c in text[start:end]) else None  # a signature line
