"""Mail archives in (`cidermill crawl --mbox`): each message one page, its own words only."""
import gzip
import json
import os
from collections import Counter
from email.message import EmailMessage

from corpus.reader import ShardDataset
from corpus.report import read_report
from crawl.mbox import iter_mbox_pages, mail_text
from pipelines.cli import main as cli_main

OWN = ("I agree that nested classes need a paragraph of their own. The current draft evaluates the "
       "annotation in the scope of the enclosing function, which surprises people who expect class scope.")
FOOTER = ("_______________________________________________\nPython-Dev mailing list\npython-dev@python.org\n"
          "https://mail.python.org/mailman/listinfo/python-dev\n")


def _plain(mid: str, body: str, subject="Re: PEP 999", sender="Jane Orchard <jane@example.org>", **headers) -> bytes:
    m = EmailMessage()
    m["From"], m["Subject"], m["Message-ID"] = sender, subject, mid
    m["Date"] = "Tue, 03 Mar 2020 14:02:11 -0500"
    m["List-Id"] = "Python core development <python-dev.python.org>"
    for k, v in headers.items():
        m[k.replace("_", "-")] = v
    m.set_content(body)
    return bytes(m)


def _mbox(messages: list[bytes]) -> bytes:
    """Mailman's monthly archive layout: an envelope "From " line before each message, the
    sender written "jane at example.org", and "From " at a body line's start escaped as ">From "."""
    out = b""
    for raw in messages:
        body = raw.replace(b"\nFrom the", b"\n>From the")
        out += b"From jane at example.org  Tue Mar  3 14:02:11 2020\n" + body.rstrip(b"\n") + b"\n\n"
    return out


def _messages() -> list[bytes]:
    reply = ("On Mon, Mar 2, 2020 at 9:14 AM Tom Press <tom@example.com> wrote:\n"
             "> I think the deferred evaluation approach is the right one.\n> Nested classes trip people up.\n\n"
             f"{OWN}\n\nFrom the sprint notes: we follow the rules for default values.\n\n"
             "Cheers,\nJane\n-- \nJane Orchard | orchard.example.org\n" + FOOTER)
    alt = EmailMessage()
    alt["From"], alt["Message-ID"] = "=?iso-8859-1?q?Ren=E9e_Cidre?= <renee@example.fr>", "<alt@example.fr>"
    alt["Subject"] = "=?utf-8?b?Q2lkcmUgYm91Y2jDqQ==?="
    alt["Date"] = "Wed, 04 Mar 2020 09:00:00 +0100"
    alt.set_content("Le cidre bouché coûte environ six euros la bouteille dans le village.", charset="iso-8859-1",
                    cte="quoted-printable")
    alt.add_alternative("<html><body><p>Le cidre <b>bouché</b> coûte environ six euros.</p></body></html>",
                        subtype="html")
    html_only = EmailMessage()
    html_only["From"], html_only["Message-ID"] = "Web Form <form@example.com>", "<html@example.com>"
    html_only["Subject"] = "Harvest report"
    html_only.set_content("<html><body><article><p>The harvest report says the orchard gave forty barrels of "
                          "cider apples this autumn, more than any year since the press was rebuilt.</p>"
                          "</article></body></html>", subtype="html", cte="base64")
    attachment_only = EmailMessage()
    attachment_only["From"], attachment_only["Message-ID"] = "Bot <bot@example.com>", "<att@example.com>"
    attachment_only.add_attachment(b"\x89PNG\r\n\x1a\n" + bytes(32), maintype="image", subtype="png",
                                   filename="chart.png")
    outlook = ("Thanks, that fixes the build on our side too.\n\n-----Original Message-----\n"
               "From: Tom Press\nSent: Monday\nSubject: build\n\nThe build fails on the old compiler.\n")
    signed = ("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nThe release is tagged and uploaded.\n"
              "- -- \nRelease manager (dash-escaped, as clearsigned text writes it)\n-----BEGIN PGP SIGNATURE-----\n\niQIzBAEBCAAdFiEE\n"
              "-----END PGP SIGNATURE-----\n")
    return [
        _plain("<reply@example.org>", reply),
        bytes(alt),
        bytes(html_only),
        _plain("<private@example.org>", "Please do not archive this one.", X_No_Archive="yes"),
        bytes(attachment_only),
        _plain("<outlook@example.org>", outlook),
        _plain("<signed@example.org>", signed),
    ]


def test_mail_text_keeps_the_authors_own_words():
    rows = {r["url"]: r for r in _rows_of(_mbox(_messages()))}
    reply = rows["mid:reply@example.org"]
    assert reply["text"] == (f"{OWN}\n\nFrom the sprint notes: we follow the rules for default values.\n\n"
                             "Cheers,\nJane")
    assert (reply["title"], reply["author"], reply["host"]) == ("Re: PEP 999", "Jane Orchard", "python-dev.python.org")
    assert reply["date"] == "2020-03-03T19:02:11+00:00" and reply["source"] == "mbox"
    assert reply["training_allowed"] and "jane@example.org" not in json.dumps(reply)
    alt = rows["mid:alt@example.fr"]
    assert alt["text"] == "Le cidre bouché coûte environ six euros la bouteille dans le village."
    assert (alt["title"], alt["author"], alt["host"]) == ("Cidre bouché", "Renée Cidre", "example.fr")
    assert "forty barrels" in rows["mid:html@example.com"]["text"]
    private = rows["mid:private@example.org"]
    assert private["text"] is None and private["robots_noindex"] and not private["training_allowed"]
    assert rows["mid:outlook@example.org"]["text"] == "Thanks, that fixes the build on our side too."
    assert rows["mid:signed@example.org"]["text"] == "The release is tagged and uploaded."
    assert "mid:att@example.com" not in rows


def _rows_of(data: bytes, tmp=None):
    import tempfile  # noqa: PLC0415
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "2020-March.txt.gz")
        with open(path, "wb") as f:
            f.write(gzip.compress(data))
        skipped: Counter = Counter()
        rows = list(iter_mbox_pages(path, skipped))
    assert skipped == Counter({"mail_no_text": 1})
    return rows


def test_a_body_line_starting_with_from_does_not_split_the_message(tmp_path):
    body = b"Notes.\n\nFrom the orchard: forty barrels.\n"      # unescaped, as mboxcl2 keeps it
    data = b"From jane@example.org Tue Mar  3 14:02:11 2020\n" + _plain("<one@example.org>", "x").replace(
        b"\nx\n", b"\n" + body)
    path = tmp_path / "cl2.mbox"
    path.write_bytes(data)
    rows = list(iter_mbox_pages(str(path)))
    assert [r["text"] for r in rows] == ["Notes.\n\nFrom the orchard: forty barrels."]


def test_quotes_are_kept_on_request_and_the_cut_tail_is_short():
    body = "On Monday Tom wrote:\n> the old line\n\nMy answer.\n"
    assert mail_text(body) == "My answer."
    assert mail_text(body, keep_quotes=True) == "On Monday Tom wrote:\n> the old line\n\nMy answer."
    wrapped = ("Short answer first.\n\nOn Mon, Mar 2, 2020 at 9:14 AM Tom Press <tom@example.com>\nwrote:\n\n"
               "> the old line\n> and more\n\nAnd a remark after the quote.\n")
    assert mail_text(wrapped) == "Short answer first.\n\nAnd a remark after the quote."
    listing = "Here are the three steps:\n1. press\n2. filter\n3. bottle\nDone.\n"
    assert mail_text(listing) == listing.strip()       # a colon with no quote after it stays
    outlook = ("Agreed.\n\n________________________________\nFrom: Tom Press\nSent: Monday\n\n"
               "The original text, unquoted.\n")
    assert mail_text(outlook) == "Agreed."
    long_tail = "Intro.\n--\n" + "\n".join(f"line {i} of the real message" for i in range(20))
    assert mail_text(long_tail) == long_tail            # a "--" far from the end is not a signature


def test_cli_imports_mbox_files_and_message_folders_once_per_message(tmp_path, capsys):
    msgs = _messages()
    archive = tmp_path / "2020-March.txt.gz"
    archive.write_bytes(gzip.compress(_mbox(msgs)))
    plain = tmp_path / "other-list.mbox"
    plain.write_bytes(_mbox([msgs[0]]))                 # cross-posted: the same Message-ID
    folder = tmp_path / "maildir" / "cur"
    folder.mkdir(parents=True)
    (folder / "1.eml").write_bytes(_plain("<eml@example.org>", "A message kept as a single file."))
    (folder / "2.eml").write_bytes(b"\x00\x01 not a message at all")
    out = str(tmp_path / "out")
    assert cli_main(["crawl", "--mbox", str(archive), str(plain), str(tmp_path / "maildir"), "--out", out,
                     "--quiet"]) == 0
    capsys.readouterr()
    pages = os.path.join(out, "pages")
    urls = sorted(r["url"] for r in ShardDataset(pages).iter_rows(["url"]))
    assert urls == sorted(["mid:reply@example.org", "mid:alt@example.fr", "mid:html@example.com",
                           "mid:private@example.org", "mid:outlook@example.org", "mid:signed@example.org",
                           "mid:eml@example.org"])
    crawl = read_report(pages).info["crawl"]
    assert crawl["skipped_by_reason"] == {"duplicate_url": 1, "mail_no_text": 1, "mail_not_a_message": 1}
    assert cli_main(["crawl", "--mbox", str(tmp_path / "missing.mbox"), "--out", out]) == 1
    assert "mail archive not found" in capsys.readouterr().err


def test_a_folder_with_unreadable_entries_counts_them(tmp_path):
    folder = tmp_path / "maildir"
    folder.mkdir()
    (folder / "1.eml").write_bytes(_plain("<ok@example.org>", "A message that reads fine."))
    (folder / "dangling").symlink_to(tmp_path / "nowhere")
    os.mkfifo(folder / "pipe")
    skipped: Counter = Counter()
    rows = list(iter_mbox_pages(str(folder), skipped))
    assert [r["url"] for r in rows] == ["mid:ok@example.org"]
    assert skipped == Counter({"mail_not_a_file": 2})


def _many(n: int, crlf: bool = False) -> bytes:
    """n messages of different sizes, with body lines that start with "From " (escaped and not),
    a long line, and blank lines, as a large archive has them."""
    msgs = []
    for i in range(n):
        body = (f"Message {i} about the press.\n\n" + "cider apples " * (i * 7 % 50) +
                "\nFrom the orchard: a body line, unescaped.\n\nFrom here on, more words.\n" +
                ("x" * 70_000 + "\n" if i % 9 == 4 else ""))
        msgs.append(_plain(f"<m{i}@example.org>", body, subject=f"Note {i}"))
    data = b"".join(b"From jane@example.org Tue Mar  3 14:02:%02d 2020\n" % (i % 60) + m.rstrip(b"\n") + b"\n\n"
                    for i, m in enumerate(msgs))
    return data.replace(b"\n", b"\r\n") if crlf else data


def test_ranges_of_a_large_mbox_hold_each_message_once(tmp_path):
    from crawl.mbox import mbox_ranges, split_mbox
    for crlf in (False, True):
        path = tmp_path / f"big{crlf}.mbox"
        path.write_bytes(_many(40, crlf))
        with open(path, "rb") as f:
            whole = list(split_mbox(f, Counter()))
        assert len(whole) == 40
        size = path.stat().st_size
        data = path.read_bytes()
        envelopes = [i for i in range(size) if data.startswith(b"From jane", i)]
        cuts = sorted({c for e in envelopes for c in (e - 2, e - 1, e, e + 1) if 0 < c < size})
        layouts = [mbox_ranges(str(path), split) for split in (97, 1000, 4096, 70_001, 10 ** 9)]
        layouts.append(list(zip([0] + cuts, cuts + [size])))     # a range border next to every envelope
        for ranges in layouts:
            assert ranges[0][0] == 0 and (len(ranges) == 1 or ranges[-1][1] == size)
            got = []
            with open(path, "rb") as f:
                for a, b in ranges:
                    got.extend(split_mbox(f, Counter(), a, b))
            assert got == whole, (crlf, len(ranges))


def test_a_large_mbox_imports_over_ranges_as_one_file(tmp_path, capsys):
    from pipelines.archive_import import run_mbox_import
    path = tmp_path / "big.mbox"
    path.write_bytes(_many(30))
    digests = []
    for split in (None, 5000):
        out = tmp_path / f"out{split}"
        pages, summary = run_mbox_import([str(path)], str(out), ["--direct_num_workers=1"], progress=False,
                                         split_bytes=split)
        rows = sorted((r["url"], r["text"]) for r in ShardDataset(pages).iter_rows(["url", "text"]))
        assert len(rows) == 30 and summary["skipped"] == 0
        digests.append(rows)
    assert digests[0] == digests[1]


def test_a_maildir_skips_messages_in_delivery_and_the_servers_files(tmp_path):
    box = tmp_path / "Maildir"
    for sub in ("cur", "new", "tmp"):
        (box / sub).mkdir(parents=True)
    (box / "cur" / "1700000000.1.host:2,S").write_bytes(_plain("<cur@example.org>", OWN))
    (box / "new" / "1700000001.2.host").write_bytes(_plain("<new@example.org>", OWN + " New."))
    (box / "tmp" / "1700000002.3.host").write_bytes(_plain("<half@example.org>", "half writ"))
    (box / "dovecot.index.log").write_bytes(b"\x01\x02\x00binary index")
    (box / "dovecot-uidlist").write_bytes(b"3 V1700000000 N4\n")
    (box / "maildirfolder").write_bytes(b"")
    skipped: Counter = Counter()
    rows = list(iter_mbox_pages(str(box), skipped))
    assert sorted(r["url"] for r in rows) == ["mid:cur@example.org", "mid:new@example.org"]
    assert not skipped
