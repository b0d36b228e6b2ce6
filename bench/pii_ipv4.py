"""IPv4 PII on real mail, changelogs and manuals: recall on addresses, false positives on versions.

Dev cases (not in the repository; third-party data): every dotted quad in
- mail: RFC 822 messages and mbox files, e.g. notmuch's `test/corpora` and MimeKit's
  `UnitTests/TestData/{mbox,messages}` (git repositories' test corpora: mailing-list mail with
  real Received chains, X-Originating-IP, X-Mailer and git patch signatures), and SpamAssassin's
  sample mails (`apt-get download spamassassin && dpkg -x spamassassin_*.deb d`:
  `usr/share/doc/spamassassin/examples/sample-*.txt`);
- changelogs: `/usr/share/doc/*/changelog.Debian.gz` (version strings that look like addresses);
- prose: the Debian Reference (`apt-get download debian-reference-en`, its `*.en.html`: networking
  chapters with addresses in text, tables and config files, and numbered headings).

Labels come from where a quad sits, not from the detector: in a mail header, the field decides
(X-Mailer / User-Agent name software; Received and the other address fields carry addresses,
except the MTA build ids in Received written `id N.N.N.N` or after the MTA's name); changelogs hold
versions; body text and the manual were labelled by hand (the few exceptions are listed below).
Sources are split by a hash of their path: one third held back, reported separately from the
two thirds the rules were tuned on. Items are distinct (source, quad) pairs.

    python bench/pii_ipv4.py --mail DIR... --changelogs '/usr/share/doc/*/changelog.Debian.gz' \\
        --prose 'DIR/usr/share/debian-reference/*.en.html'
"""
from __future__ import annotations

import argparse
import glob
import gzip
import hashlib
import html
import ipaddress
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from filters.pii import find_pii  # noqa: E402
from filters.pii_ipv4 import IPV4_RE  # noqa: E402

SOFTWARE = {"x-mailer", "user-agent"}
MTA_BUILD = re.compile(r"(?:\bid|ecelerity|IMC)\s+$")      # Received: ... id 15.20.218.12 / (ecelerity 2.2.2.39)
# hand labels: the quads in body text / changelogs that ARE addresses (everything else there is not)
BODY_ADDRESSES = {("feedback-report", "192.0.2.2"), ("openssh", "192.168.0.0")}
# hand labels: the quads in the manual that are NOT addresses (numbered headings)
PROSE_NOT_ADDRESSES = {"6.2.4.1", "6.2.4.2", "6.2.4.3", "6.2.4.4", "12.6.2.1", "12.6.2.2"}


def _header_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each message's header block: from the text start or an mbox `From ` line to the
    first blank line."""
    spans, starts = [], [0] + [m.end() for m in re.finditer(r"(?m)^From .*\n", text)]
    for s in starts:
        e = text.find("\n\n", s)
        spans.append((s, len(text) if e < 0 else e))
    return spans


def _field_at(text: str, pos: int) -> str:
    ls = text.rfind("\n", 0, pos) + 1
    while ls > 0 and text[ls] in " \t":
        ls = text.rfind("\n", 0, ls - 1) + 1
    m = re.match(r"([A-Za-z][\w-]*):", text[ls:])
    return m.group(1).lower() if m else ""


def mail_items(path: str, text: str):
    spans = _header_spans(text)
    for m in IPV4_RE.finditer(text):
        a = m.start()
        field = next((_field_at(text, a) for s, e in spans if s <= a < e), None)
        if field is None and _field_at(text, a) == "received":
            field = "received"   # the Received chain of a message quoted in a bounce or digest
        if field:
            is_ip = field not in SOFTWARE and not (field == "received" and MTA_BUILD.search(text[max(0, a - 12):a]))
        else:
            is_ip = any(tag in path and q == m.group(0) for tag, q in BODY_ADDRESSES)
        yield m, is_ip


def _split(path: str) -> str:
    return "held-out" if int(hashlib.sha1(path.encode()).hexdigest(), 16) % 3 == 0 else "tuning"


def documents(args):
    for d in args.mail:
        for p in sorted(glob.glob(os.path.join(d, "**", "*"), recursive=True)):
            if os.path.isfile(p) and not p.endswith(("README", ".json", ".html")):
                with open(p, "rb") as f:
                    text = f.read().decode("utf-8", "replace")
                yield "mail", p, text, list(mail_items(p, text))
    for p in sorted(glob.glob(args.changelogs)) if args.changelogs else []:
        with gzip.open(p) as f:
            text = f.read(args.changelog_chars).decode("utf-8", "replace")
        items = [(m, any(tag in p and q == m.group(0) for tag, q in BODY_ADDRESSES)) for m in IPV4_RE.finditer(text)]
        yield "changelog", p, text, items
    for p in sorted(glob.glob(args.prose)) if args.prose else []:
        with open(p, encoding="utf-8") as f:
            raw = f.read()
        text = html.unescape(re.sub(r"<[^>]+>", "", re.sub(r"(?s)<(script|style).*?</\1>", " ", raw)))
        yield "prose", p, text, [(m, m.group(0) not in PROSE_NOT_ADDRESSES) for m in IPV4_RE.finditer(text)]


def evaluate(args) -> dict:
    items: dict[tuple[str, str, str], dict] = {}  # (split, source, quad) -> {ip, public, kind, removed}
    n_docs = {"tuning": 0, "held-out": 0}
    cpu0 = time.process_time()
    for kind, path, text, cands in documents(args):
        split = _split(path)
        n_docs[split] += 1
        removed = {(a, b) for a, b, k in find_pii(text) if k == "ipv4"}
        for m, is_ip in cands:
            key = (split, path, m.group(0))
            it = items.setdefault(key, {"ip": is_ip, "kind": kind, "removed": True, "any_removed": False,
                                        "example": ""})
            it["ip"] = it["ip"] or is_ip
            if (m.start(), m.end()) in removed:
                it["any_removed"] = True
                if not is_ip:
                    it["example"] = text[max(0, m.start() - 50):m.end() + 20]
            else:                                     # an address counts as caught only if every occurrence is
                it["removed"] = False
                if is_ip:
                    it["example"] = text[max(0, m.start() - 50):m.end() + 20]
    cpu = time.process_time() - cpu0
    out = {}
    for split in ("tuning", "held-out"):
        sel = [(k, v) for k, v in items.items() if k[0] == split]
        ips = [(k, v) for k, v in sel if v["ip"]]
        pub = [(k, v) for k, v in ips if ipaddress.ip_address(k[2]).is_global]
        neg = [(k, v) for k, v in sel if not v["ip"]]
        fp = [(k, v) for k, v in neg if v["any_removed"]]  # a version counts as removed if any occurrence was
        out[split] = {
            "documents": n_docs[split], "ipv4_items": len(ips), "public_ipv4_items": len(pub),
            "version_items": len(neg),
            "ipv4_recall": round(sum(v["removed"] for _, v in ips) / max(len(ips), 1), 4),
            "public_ipv4_recall": round(sum(v["removed"] for _, v in pub) / max(len(pub), 1), 4),
            "versions_removed": len(fp),
            "versions_removed_per_118": round(118 * len(fp) / max(len(neg), 1), 2),
            "missed": [f"{k[2]} in {os.path.basename(k[1])}: {v['example']!r}" for k, v in ips if not v["removed"]][:15],
            "false_positives": [f"{k[2]} in {os.path.basename(k[1])}: {v['example']!r}" for k, v in fp][:15],
        }
    out["cpu_s"] = round(cpu, 2)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mail", nargs="*", default=[], help="folders of RFC 822 messages / mbox files")
    ap.add_argument("--changelogs", default="", help="glob of gzipped changelogs")
    ap.add_argument("--changelog-chars", type=int, default=20000, help="bytes read from each changelog")
    ap.add_argument("--prose", default="", help="glob of HTML manual pages")
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args(argv)
    from bench.results import save_result, start_conditions  # noqa: PLC0415
    start = start_conditions()
    res = evaluate(args)
    for split in ("tuning", "held-out"):
        r = res[split]
        print(f"{split:>9}: {r['documents']} documents, {r['ipv4_items']} IPv4 items ({r['public_ipv4_items']} public), "
              f"{r['version_items']} version-like items | IPv4 recall {r['ipv4_recall']:.3f}, public "
              f"{r['public_ipv4_recall']:.3f} | versions removed {r['versions_removed']} of {r['version_items']} "
              f"({r['versions_removed_per_118']} per 118)")
        for line in r["missed"]:
            print("   missed:", line)
        for line in r["false_positives"]:
            print("   removed version:", line)
    if not args.no_save:
        h = res["held-out"]
        save_result("pii_ipv4", {**res, "headline": [
            {"what": f"PII IPv4 recall, held-out dev cases ({h['ipv4_items']} items from mail, changelogs, a manual)",
             "figure": f"{h['ipv4_recall']:.3f} (public {h['public_ipv4_recall']:.3f})", "target": ">= 0.99"},
            {"what": f"version strings scrubbed as IPv4, held-out ({h['version_items']} items)",
             "figure": f"{h['versions_removed']} ({h['versions_removed_per_118']} per 118)", "target": "<= 5 per 118"}],
            "not_covered": ["dev cases only (mail test corpora, Debian changelogs, one manual), mostly mail "
                            "headers; little prose; the review's list-archive pages are scored separately",
                            "the held-out third is not untouched: an earlier split (by file name) showed a few of "
                            "its misses while the rules were written"]},
            start=start)
    return 0


if __name__ == "__main__":
    sys.exit(main())
