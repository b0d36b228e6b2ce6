"""PII scrubbing: every type, checksums and context, and the demo site's labelled PII pages."""
import json
import os

import pytest

from filters.base import Doc
from filters.pii import PiiScrubber, find_pii, iban_ok, luhn_ok, scrub

GT = os.path.join(os.path.dirname(__file__), "..", "..", "pipelines", "demo_site", "ground_truth.json")
SCRUBBED = {"email", "phone", "ipv4", "ipv6", "credit_card", "iban", "ssn"}


def kinds(text):
    return [k for _, _, k in find_pii(text)]


def test_each_type_with_placeholders():
    text = ("Mail anna.k@example.org, call +44 20 7946 0958 or (555) 123-4567, server 192.168.10.20, "
            "v6 2001:db8::8a2e:370:7334, card 4111 1111 1111 1111, SSN 123-45-6789, IBAN GB82 WEST 1234 5698 7654 32.")
    out, counts = scrub(text)
    assert counts == {"email": 1, "phone": 2, "ipv4": 1, "ipv6": 1, "credit_card": 1, "ssn": 1, "iban": 1}
    for ph in ("<EMAIL>", "<PHONE>", "<IP_ADDRESS>", "<CREDIT_CARD>", "<SSN>", "<IBAN>"):
        assert ph in out
    assert "4111" not in out and "example.org" not in out


@pytest.mark.parametrize("text", [
    "Upgraded to version 1.2.3.4 of the library.",          # version string, not an IP
    "foo (2.0.1.3-1) unstable; urgency=medium",              # Debian changelog header
    "Standards-Version bumped to 4.6.2.0",
    "card 4111 1111 1111 1112",                              # fails Luhn
    "SSN 000-12-3456 and 666-12-3456",                       # never issued
    "IBAN DE89370400440532013001",                           # bad mod-97 checksum
    "meeting at 12:30:45 on 2023-01-15, order 2024-000-1187",
    "std::vector<int> and a::b",
    # digit runs that pass Luhn with a card's prefix but are no card (read in Debian documentation)
    "https://web.archive.org/web/20180410025338/http://starship.python.net/",   # a URL path, no issuer "20"
    "https://code.facebook.com/posts/313033472212144/debugging-file-corruption",
    "in binary floating point the result is 5.5511151231257827e-017.",          # a decimal's tail
    "5.0 / 2 gives 2.5000000000000000 5",
    "a puzzle like this: 53 7 6 195 98 6 8 6 3 4 8 3 1 7 2 6 6 28",            # not grouped as cards are
])
def test_lookalikes_are_left_alone(text):
    assert kinds(text) == []


@pytest.mark.parametrize("card", ["4111 1111 1111 1111", "5555-5555-5555-4444", "3782 822463 10005", "6011111111111117",
                                  "3530111333300000", "3056 9309 0259 04", "2221 0000 0000 0009", "4222222222222"])
def test_the_networks_test_cards_are_found_as_printed(card):
    assert kinds(f"Charge card {card} today.") == ["credit_card"]


def test_checksums():
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")
    assert iban_ok("DE89 3704 0044 0532 0130 00") and not iban_ok("DE89 3704 0044 0532 0130 01")


def test_demo_site_labelled_pii():
    with open(GT, encoding="utf-8") as f:
        paths = json.load(f)["paths"]
    checked = 0
    for path, e in paths.items():
        text = e.get("main_text") or ""
        if not (e.get("pii") or e.get("not_pii")) or not text:
            continue
        out, _ = scrub(text)
        for typ, values in e.get("pii", {}).items():
            for v in values:
                if v in text:
                    checked += 1
                    assert (v not in out) == (typ in SCRUBBED), (path, typ, v)
        for typ, values in e.get("not_pii", {}).items():
            for v in values:
                if v in text:
                    checked += 1
                    assert v in out, (path, typ, v)
    assert checked >= 20


def test_dense_pii_page_is_dropped_and_counted():
    rows = "\n".join(f"Person {i}: p{i}@example.com, +1 415 555 01{i:02d}" for i in range(12))
    doc = Doc(id="d", text="Volunteer directory.\n" + rows)
    scores, keep, reason = PiiScrubber()(doc)
    assert (keep, reason) == (False, "pii:dense_personal_data")
    assert doc.meta["pii_counts"] == {"email": 12, "phone": 12}
    doc = Doc(id="t", text="Our table of volunteers is below.", meta={"tables_text": rows})
    scores, keep, reason = PiiScrubber()(doc)
    assert scores["pii_table_count"] == 24 and not keep


@pytest.mark.parametrize("text, address", [
    ("On Tue, Mar 4, 2008, Jane Developer <jane at example.org> wrote:", "jane at example.org"),  # pipermail
    ("jane at example.org wrote:\n> the old buffer interface", "jane at example.org"),
    ("From: jane at example.org\nSubject: buffers", "jane at example.org"),
    ("Thanks,\n\nbob at lists.example.net\n", "bob at lists.example.net"),                  # a signature line
    ("Patch by j.doe at example.co.uk, reviewed by Bob.", "j.doe at example.co.uk"),
    ("Debian Reference was started by Osamu <osamu at debian dot org> as a memo", "osamu at debian dot org"),
    ("thanks to jason (at) example.com for the fix", "jason (at) example.com"),
    ("write to jane [at] example [dot] org, or", "jane [at] example [dot] org"),
    ("Contact: jane AT example DOT org", "jane AT example DOT org"),
    ("translated by Davide (dl0315 at example dot it)", "dl0315 at example dot it"),
])
def test_spelled_out_addresses_are_emails(text, address):
    """Addresses written without @ to fool harvesters (mail archives, READMEs, manuals)."""
    out, counts = scrub(text)
    assert counts == {"email": 1} and address not in out and "<EMAIL>" in out


def test_an_archived_message_reads_every_plain_at_as_an_address():
    """pipermail rewrites every address of a message as `name at domain`: once a document shows one
    in the archive's shape, the plain ones in it are addresses too; elsewhere they stay prose."""
    msg = ("On Tue, Jane Developer <jane at example.org> wrote:\n> Would this break NumPy?\n\n"
           "No. Send the port to patches at example.org and copy numpy at example.com.")
    out, counts = scrub(msg)
    assert counts == {"email": 3} and " at example" not in out
    prose = "Send the port to patches at example.org and copy numpy at example.com."
    assert scrub(prose)[1] == {}


@pytest.mark.parametrize("text", [
    "See introductory information at XML.COM.",
    "the mirror at ftp.debian.org is fast",
    "(the full list is available at docs.python.org)",
    "Git looks at core.ignorestat first; the path is stored at sys.path[0]",
    "Python 3.11 at python.org has the fix",
    "I worked at a dot com in 1999",
    "DOWNLOADS AVAILABLE AT EXAMPLE.ORG",
    "web archives of the patches and python-dev lists at python.org.",
    "File at Wikipedia.org",
])
def test_prose_with_at_and_a_domain_is_left_alone(text):
    assert scrub(text)[1] == {}
