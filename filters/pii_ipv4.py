"""Is this dotted quad an IPv4 address or a version string? An evidence score, not a guess.

`1.7.3.1` after a mailer name is a version; `[1.7.3.1]` in a Received: header is an address.
The score adds up evidence from both sides of the match and from the mail header field it sits
in (if any), each a rule a reviewer can read:

- the octets: four numbers 0-255 without leading zeros, or it is no address at all;
- header knowledge: fields that carry addresses (Received, X-Originating-IP, Received-SPF, ...)
  versus fields that name software (X-Mailer, User-Agent, ...);
- the shape around it: `[a.b.c.d]`, `a.b.c.d:port`, `a.b.c.d/24`, `host (a.b.c.d)`, `x=a.b.c.d`
  read as addresses; `Name/1.2.3.4`, `v1.2.3.4`, `gcc-2.7.2.1`, `1.2.3.4-1`, `1.2.3.4~rc1`,
  `1.7.3.1.g432b3` (git describe), a Debian changelog header, a git patch signature, a numbered
  heading read as versions;
- the words near it: network words (host, server, ping, gateway, ...) for an address, version
  words (version, release, Standards-Version, ...) or a product name just before it for a version;
- the numbers: all parts below 10 reads as a version, a first part above 99 as an address;
- the family: a quad whose first three parts also stand alone in the text ("3.8.11" beside
  "3.8.11.1" in a release history, the section "14.5.3." above "14.5.3.3. Managing ...") is a
  version or a section number (not for a first part above 99: "192.168.1" is a network).

`ipv4_score(text, match) > IPV4_THRESHOLD` (0) is an address. The PII filter stores how many
candidates scored close to the threshold (`pii_ipv4_borderline`), so reviewers can find the
pages a different threshold would change.
"""
from __future__ import annotations

import bisect
import re

from filters.text_lines import TextLines

# "(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}..." written to open with the digit it consumes (same matches;
# re skips ahead to digits instead of testing the look-behind at every position)
IPV4_RE = re.compile(r"\d(?<![\w.]\d)\d{0,2}\.(?:\d{1,3}\.){2}\d{1,3}(?![\w]|\.\d)")
IPV4_THRESHOLD = 0.0
BORDERLINE = 1.0  # |score - threshold| below this: a close call

# mail header fields (lower case) whose dotted quads are addresses / software versions
ADDRESS_FIELDS = re.compile(r"received|received-spf|authentication-results|arc-authentication-results|"
                            r"x-originating-ip|x-forwarded-for|x-real-ip|x-remote-addr|x-remote-ip|"
                            r"x-sender-ip|x-source-ip|source-ip|x-client-ip|x-posting-host|nntp-posting-host|"
                            r"x-trace|x-barracuda-[\w-]+|x-forefront-antispam-report|x-spam-[\w-]+|x-assp-[\w-]+|"
                            r"x-scanned-by|x-ms-exchange-[\w-]*ip[\w-]*|message-id|x-originating-host|"
                            r"x-apparently-from|x-sender-host|x-mailgun-sending-ip|x-ironport-[\w-]+")
SOFTWARE_FIELDS = re.compile(r"x-mailer|user-agent|x-newsreader|x-mimeole|mime-version|x-spam-checker-version|"
                             r"x-mailman-version|x-pgp-agent|x-virus-scanned|x-generator|x-pipermail-version|"
                             r"x-ms-tnef-correlator|x-ms-has-attach|thread-index|x-ms-office365-[\w-]+|"
                             r"x-exchange-[\w-]+|x-library|x-powered-by|x-php-version|x-priority")

_NET_WORDS = re.compile(r"(?i)\b(ip|ips|ipv4|address|addresses|addr|inet|host|hosts|hostname|server|servers|"
                        r"client|clients|connect|connected|connection|connecting|ping|pinged|gateway|gw|subnet|"
                        r"netmask|mask|dns|nameserver|resolver|proxy|route|router|listen|listening|bind|"
                        r"helo|ehlo|smtp|mx|relay|relayed|sender|peer|remote|localhost|lan|wan|dhcp|vpn|nat|"
                        r"firewall|iptables|blocked|banned|blacklisted|whitelist|ssh|telnet|designates|from|by|via)\b")
_VERSION_WORDS = re.compile(r"(?i)\b(v|ver|version|versions|release|released|rel|kernel|firmware|build|"
                            r"upgrade|upgraded|update|updated|changelog|package|policy|standards|bump|bumped|"
                            r"since|revision|rev|patch|series|branch|tag|tagged|git|svn|debian|ubuntu|"
                            r"oid|object\s+identifier|section|chapter|specifier|rfc)\b[^\n]{0,24}$")
_CONNECTORS = {"from", "by", "on", "at", "to", "is", "was", "via", "and", "or", "for", "of", "in", "with", "as",
               "ip", "addr", "address", "host", "server", "unknown", "localhost", "loopback", "gateway", "mask",
               "netmask", "dns", "ping", "inet", "helo", "ehlo", "peer", "client", "route", "src", "dst", "designates"}
_PRODUCT_BEFORE = re.compile(r"([A-Za-z][\w!+-]*)[ \t]+$")       # "Thunderbird 2.0.0.22", "ecelerity 2.2.2.39"
# distribution words separated by spaces, written so that each text has one way to match: the nested
# form "(?:[a-z][\w.-]*\s*)+" backtracks exponentially on a long word with no ";" after it
# ("(3.8.11.1)\nRestore an undocumented side-effect..." in a release history took a minute)
_CHANGELOG_HEAD = re.compile(r"\)\s+[a-z][\w.-]*(?:\s+[a-z][\w.-]*)*\s*;\s*urgency=", re.I)
_GIT_SIG_BEFORE = re.compile(r"(?:^|\n)(?:> ?)*--(?: |=20)?\n(?:> ?)*$")


LINE_WINDOW = 240   # characters of a quad's own line read before it: the rules need only the line's tail
HEADER_FOLDS = 64   # folded continuation lines walked back to find the header field a quad sits in
_COLON = re.compile(r":")
# a dotted triple that is not part of a longer dotted number nor a network ("10.1.2/24"): "3.8.11",
# "14.5.3." (a section number)
_TRIPLE = re.compile(r"(?<![\w.])(\d{1,3}\.\d{1,3}\.\d{1,3})(?![\w/]|\.\w)")
_HEADING_GAP = re.compile(r"\.?[^\S\n]+")
_HEADER_NAME = re.compile(r"([A-Za-z][A-Za-z0-9-]{0,60}):")
_BLANK = re.compile(r"\s*")


def _colon_between(lines: TextLines, lo: int, hi: int) -> bool:
    """A ':' at some position in [lo, hi) of the text (its colons found once)."""
    colons = lines.once("colons", lambda: [m.start() for m in _COLON.finditer(lines.text)])
    i = bisect.bisect_left(colons, lo)
    return i < len(colons) and colons[i] < hi


def _field(lines: TextLines, k: int) -> str | None:
    """The mail header field holding line k (folded lines included), when the line is in a header
    block: a run of `Name: value` lines at the start of the text or after an mbox `From ` line /
    blank line."""
    text, starts = lines.text, lines.starts
    folds = 0
    while k > 0 and text[starts[k]:starts[k] + 1] in (" ", "\t") and folds < HEADER_FOLDS:
        k -= 1   # a folded continuation: walk back to its field
        folds += 1
    ls = starts[k]
    m = _HEADER_NAME.match(text[ls:ls + 64])
    if not m:
        return None
    # the line above must be another header line, a mbox separator, or the start of the text
    if ls - 1 <= 0:
        return m.group(1).lower()
    ps, prev_end = starts[k - 1], ls - 1
    prev = text[ps:min(prev_end, ps + 64)]   # enough for the three tests below
    if prev.startswith("From ") or _HEADER_NAME.match(prev) or prev[:1] in (" ", "\t"):
        return m.group(1).lower()
    if _BLANK.match(text, ps, prev_end).end() == prev_end:   # a blank line above: after a mbox `From ` line?
        if ps == 0:
            return m.group(1).lower()
        j = k - 2
        while j >= 0 and lines.end(j) == starts[j]:   # empty lines
            j -= 1
        if j >= 0 and text.startswith("From ", starts[j], lines.end(j)):
            return m.group(1).lower()
    return None


def _capital_after(after: str) -> bool:
    """A numbered heading's title follows: blanks (after an optional period), then a letter that is
    not lower case: "6.2.4.1. The", "15.4.2.1. Предварительные", "11.5.2.2. 挂载", "9.2.1.4 إنشاء"."""
    m = _HEADING_GAP.match(after)
    ch = after[m.end():m.end() + 1] if m else ""
    return ch.isalpha() and not ch.islower()


def octets_ok(quad: str) -> bool:
    parts = quad.split(".")
    return len(parts) == 4 and all(p.isdigit() and int(p) <= 255 and (len(p) == 1 or p[0] != "0") for p in parts)


def ipv4_score(text: str, m: re.Match, lines: TextLines | None = None) -> float:
    """Evidence that the dotted quad `m` (from IPV4_RE) is an IPv4 address: > 0 address, <= 0 not.
    `lines`: the text's line index (filters/text_lines.py), when several matches of one text are
    scored (filters/pii.py): each quad finds its line by bisection, each line's header field is
    worked out once.
    A quad's line is read back LINE_WINDOW characters at most: on a longer line, a tail of that many
    blank characters before the quad counts as the line's start."""
    quad = m.group(0)
    if not octets_ok(quad):
        return -10.0
    if lines is None:
        lines = TextLines(text)
    a, b = m.start(), m.end()
    before, after = text[max(0, a - 40):a], text[b:b + 40]
    k = lines.line_of(a)
    line_start = lines.starts[k]
    line_before = text[max(line_start, a - LINE_WINDOW):a]
    score = 0.5  # a valid dotted quad with no other evidence: more often an address than not

    pm = _PRODUCT_BEFORE.search(line_before)
    word = pm.group(1) if pm else ""
    named = bool(word) and word.lower() not in _CONNECTORS and not _NET_WORDS.fullmatch(word)
    # a product-looking name (Thunderbird, git-send-email, IMC, "(ecelerity" in an MTA comment), or a plain word
    head = line_before[:pm.start()] if pm else ""
    sentence_start = head.strip(" \t>") == "" or re.search(r"[.!?:]\s+$", head) is not None
    product = named and ((not word.islower() and not (sentence_start and word.istitle()))
                         or re.search(r"[\d!+-]", word) is not None or head.endswith("("))

    # -- header knowledge
    field = (lines.once(("header field", k), lambda: _field(lines, k))
             if _colon_between(lines, max(0, line_start - 2000), a + 1) else None)
    if field is not None:
        if re.fullmatch(SOFTWARE_FIELDS, field):
            score -= 3.0
        elif re.fullmatch(ADDRESS_FIELDS, field) and not named:
            score += 2.0                           # not "(ecelerity 2.2.2.39)" inside a Received: line

    # -- shape on both sides
    if before.endswith("[") or before.endswith("[IPv6:") or re.match(r"\]|:\d{1,5}\]", after):
        score += 2.0                               # [a.b.c.d] (mail headers, IRC, logs)
    if re.match(r":\d{1,5}(?!\d|\.\d)", after):
        score += 1.5                               # a.b.c.d:port
    if re.match(r"/(?:3[0-2]|[12]?\d)(?!\d)", after):
        score += 1.5                               # CIDR
    if re.search(r"(?<![<>!=])[@=]\"?$", before) or re.search(r"\b[\w.-]+\.[a-z]{2,}\s*\($", before, re.I) \
            or re.search(r"\(\s*$", before) and re.search(r"\b(from|by|unknown|localhost|PING)\b[^\n]{0,60}$", before):
        score += 1.5                               # root@[..], IP="..", host.example.org (a.b.c.d), from x (a.b.c.d)
    if line_before.strip() == "" and re.match(r"[ \t]+[a-z][\w.-]*(?:\s|$)", after):
        score += 1.0                               # a hosts-file line: "127.0.0.1 localhost"
    if re.search(r"/$|(?<![\w])[vV]$|(?<![\w])rv:$|[A-Za-z]-$", before):
        score -= 3.0                               # Product/1.2.3.4, v1.2.3.4, rv:1.9.1.5, gcc-2.7.2.1
    if re.match(r"(?:[-~+](?:\d|[a-z]))(?!\d{0,2}\.\d{1,3}\.\d{1,3}\.\d)|\.g[0-9a-f]{4,}|\.(?:dirty|rc\d|beta|alpha)", after):
        score -= 3.0                               # 1.2.3.4-1, 1.2.3.4~rc1, 1.7.3.1.g432b3 (git describe)
    if re.search(r"\(\s*(?:\d+:)?$", before) and _CHANGELOG_HEAD.match(after):
        score -= 4.0                               # "pkg (1.2.3.4) unstable; urgency=low"
    if _GIT_SIG_BEFORE.search(text, max(0, a - 12), a):
        score -= 4.0                               # a git format-patch signature: "-- \n1.7.3.1"
    if line_before.strip(" \t>") == "" and _capital_after(after):
        score -= 1.0 if not after.startswith(".") else 2.5   # a numbered heading: "6.2.4.1. The configuration"
    if re.search(r"(?:>=|<=|<<|>>|==|[<>]|(?<=[\s(])=)\s*(?:\d+:)?$", before):
        score -= 3.0                               # a dependency relation: "(>= 1:1.0.99.4)"
    if re.search(r"\bid\s+$", before):
        score -= 3.0                               # an MTA's queue / build id: "with ESMTP id 15.20.218.12"
    if re.search(r"\d+(?:\.\d+)+\S*\s+(?:to|->|=>)\s+$", before) or re.match(r"\s+(?:to|->|=>)\s+\d+\.\d", after):
        score -= 2.0                               # a version range: "from 1.2.99.2 to 1.2.99.4"

    # -- words near it
    if _VERSION_WORDS.search(before[-30:]):
        score -= 2.5
    near = text[max(0, a - 60):b + 40]
    if _NET_WORDS.search(near):
        score += 1.0
    if named:
        score -= 2.5 if product else 1.0   # "Thunderbird 2.0.0.22": a name right before the number
    return score + _number_evidence(text, quad, lines)


def _number_evidence(text: str, quad: str, lines: TextLines) -> float:
    """What the numbers say: their sizes, and the family the quad belongs to in the text."""
    score = 0.0
    parts = [int(p) for p in quad.split(".")]
    if all(p < 10 for p in parts):
        score -= 1.0                               # 1.2.3.4-like: small parts read as a version
    elif parts[0] >= 100:
        score += 1.0                               # 203.0.113.7: no major version is that large
    if parts[0] < 100 and quad.rsplit(".", 1)[0] in lines.once("standalone triples",
                                                               lambda: set(_TRIPLE.findall(text))):
        score -= 2.0                               # its parent "3.8.11" / "14.5.3." stands alone in the text
    return score
