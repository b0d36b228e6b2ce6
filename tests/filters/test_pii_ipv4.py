"""IPv4 in mail archives: addresses in headers and prose are scrubbed, version strings are not.
The fixture is written for this test in the shape of a list-archive page (headers of real MTAs,
a git patch signature, a Debian changelog excerpt, a manual's numbered headings)."""
from collections import Counter

from filters.base import Doc
from filters.pii import PiiScrubber, find_pii
from tests.capped_run import run_capped

ARCHIVE_PAGE = """From linux-nfs-owner@vger.example.org Mon Nov 15 09:12:01 2010
Return-Path: <linux-nfs-owner@vger.example.org>
Received: from vger.example.org ([209.132.180.67]:53120 "EHLO vger.example.org")
\tby mail.example.net with ESMTP id S1751234AbKKOQMB (ORCPT <rfc822;list@example.net>);
Received: from mailout.example.com (mailout.example.com [64.71.131.4])
\tby smtp.example.org (Postfix) with ESMTP id 2F1C61E0
Received: from [10.0.0.13] (c-76-89-133-205.hsd1.example.net [76.89.133.205])
\tby mx.example.com with ESMTPSA id x7sm1234wfa.11;
Received: from nugget.scr.example.com (206.100.186.2) by SEGATE.EXAMPLE.SE (8.7.5/8.7.3) with SMTP
Received: from localhost (HELO mail) (127.0.0.1) by 0 with SMTP; 15 Nov 2010 14:00:00 -0000
Received: from cdptpa-omtalb.example.com ([71.70.153.3:49036] helo=mail.example.net)
\tby cdptpa-oedge01.example.com (envelope-from <jl@example.org>)
\t(ecelerity 2.2.2.39 r(Core 2.2.2.45)) with ESMTP id 8B/29-07015-2F2B1DC4
Received: from EXHUB.example.local (10.22.226.87) by EXCAS.example.local
\t(10.22.226.12) with Microsoft SMTP Server (TLS) id 8.2.254.0; Mon, 15 Nov 2010
Received-SPF: pass (example.com: domain of jl@example.org designates 80.68.177.35 as permitted sender)
X-Originating-IP: [173.55.12.10]
X-Barracuda-Connect: mail.example.com[173.55.12.11]
Message-Id: <v0421010eb70653b14e06@[208.192.102.193]>
X-Mailer: git-send-email 1.7.3.1.g432b3.dirty
User-Agent: Mozilla/5.0 (X11; U; Linux x86_64; en-US; rv:1.9.1.16) Gecko/20101226 Thunderbird/3.1.2.1
X-Mailer: Thunderbird 2.0.0.22 (X11/20090625)
X-Scanned-By: MIMEDefang 2.67 on 10.5.11.18
Subject: [PATCH] nfs: fix mount over IPv4 on 1.7 kernels

Our NFS server moved to 192.0.2.44 last week; mounts from 198.51.100.7 time out.
The gateway is still 192.168.1.254 and the old box answers ping at 203.0.113.9.
See 203.0.113.80 for the mirror. Upgrade from 1.2.99.2 to 1.2.99.4 fixed the lock-up.
Bump the build-dep on x11proto-randr-dev to (>= 1.2.99.3), and Standards-Version to 3.9.8.0.
The cert's keyUsage (object identifier 2.5.29.15) is unchanged.

xft (2.1.8.2-5) unstable; urgency=low
debianutils (4.8.6.3) unstable; urgency=medium

6.2.4.1. The configuration of exim4
12.6.2.1.\xa0Compile and install a program

-- 
1.7.3.1.g432b3.dirty
"""

ADDRESSES = ["209.132.180.67", "64.71.131.4", "10.0.0.13", "76.89.133.205", "206.100.186.2", "127.0.0.1",
             "71.70.153.3", "10.22.226.87", "10.22.226.12", "80.68.177.35", "173.55.12.10", "173.55.12.11",
             "208.192.102.193", "10.5.11.18", "192.0.2.44", "198.51.100.7", "192.168.1.254", "203.0.113.9",
             "203.0.113.80"]
VERSIONS = ["2.2.2.39", "2.2.2.45", "8.2.254.0", "1.7.3.1", "1.9.1.16", "3.1.2.1", "2.0.0.22", "1.2.99.2",
            "1.2.99.4", "1.2.99.3", "3.9.8.0", "2.5.29.15", "2.1.8.2", "4.8.6.3", "6.2.4.1", "12.6.2.1"]


def _found(text):
    return {text[a:b] for a, b, k in find_pii(text) if k == "ipv4"}


def test_addresses_in_headers_and_prose_are_found_and_versions_are_not():
    found = _found(ARCHIVE_PAGE)
    assert [ip for ip in ADDRESSES if ip not in found] == []
    assert [v for v in VERSIONS if v in found] == []
    assert found == set(ADDRESSES)


def test_octets_and_neighbours():
    assert _found("host 256.1.1.1 and 01.2.3.4") == set()          # not an address at all
    assert _found("connect to 10.1.2.3:8080 or 172.16.0.0/12") == {"10.1.2.3", "172.16.0.0"}
    assert _found("127.0.0.1 localhost\n") == {"127.0.0.1"}
    assert _found("dhcp range 192.168.1.100-192.168.1.200") == {"192.168.1.100", "192.168.1.200"}
    assert _found("Mozilla/5.0.1.2 and v1.2.3.4 and gcc-2.7.2.1 and 1.2.3.4-1 and 1.2.3.4~rc1") == set()


def test_borderline_count_is_a_score_column():
    stats = Counter()
    find_pii("the mirror, see 203.0.113.80", stats)  # little evidence either way: a close call
    assert stats["ipv4_borderline"] >= 1
    doc = Doc(id="d", text="mounts from 198.51.100.7 time out, see 8.8.8.8")
    scores, keep, _ = PiiScrubber()(doc)
    assert "pii_ipv4_borderline" in scores and keep
    assert "198.51.100.7" not in doc.text


def test_a_release_history_is_scored_in_linear_time():
    """A dotted quad in parentheses followed by long words and no "; urgency=" (a release history,
    not a Debian changelog header) once sent the header pattern into exponential backtracking over the
    40 characters it reads after the quad: a minute for one real page, hours for one long word. Run in
    a child process with a time cap, so a regression fails instead of hanging the suite."""
    out = run_capped("from filters.pii import find_pii\n"
                     "text = '2015-07-29 (3.8.11.1) ' + 'x' * 60 + ' of PRAGMA; xft (2.1.8.2-5) unstable; urgency=low'\n"
                     "print(sorted(text[a:b] for a, b, k in find_pii(text)))\n", timeout=60)
    assert "2.1.8.2" not in out      # the changelog header still reads as a version


def test_a_long_line_of_dotted_quads_is_scored_in_linear_time():
    """Each quad once read its whole line (and the header lines above it); a 320 KB line of
    parenthesised versions took minutes. Now a quad reads a bounded tail of its line; the scores
    are unchanged (the fixture test above). Capped child process, as above."""
    out = run_capped("from filters.pii import find_pii\n"
                     "text = ''.join(f'({i % 9}.{i % 8}.{i % 7}.{i % 6}) Restorexx ' for i in range(16000))\n"
                     "text += 'Host: 10.0.0.1 ' * 8000\n"
                     "print(sum(k == 'ipv4' for a, b, k in find_pii(text)))\n", timeout=90)
    assert int(out) >= 8000      # the addresses after "Host:" are still found


# Written for this test in the shape of the documents where quads were versions or section numbers
# and read as addresses: a release history, and a handbook's numbered headings in five scripts.
RELEASE_HISTORY = """Release History

2015-07-29 (3.8.11.1)
Restore an undocumented side-effect of PRAGMA cache_size.

2015-07-27 (3.8.11)
Added the experimental RBU extension. Fix performance regressions relative to 3.6.23.1 on some joins.

2010-03-26 (3.6.23.1)
Fix a bug in the offsetof macro.

2010-03-09 (3.6.23)
Added the secure_delete pragma.
"""
HANDBOOK_HEADINGS = """14.5.3. Managing an SELinux System
14.5.3.1. Managing SELinux Modules
14.5.3.2. Управление идентификаторами
14.5.3.3. إدارة سياقات الملفات والمنافذ
11.5.2. Samba 客户端
11.5.2.1. 程序
11.5.2.2. 挂载 Windows 共享
12.6.2. Autotools 12.6.2.1. プログラムをコンパイルとインストール 12.6.2.2. プログラムのアンインストール
The gateway of the lab moved to 192.168.1.254; mounts from 198.51.100.7 time out.
"""


def test_versions_and_section_numbers_of_a_family_are_not_addresses():
    assert _found(RELEASE_HISTORY) == set()
    assert _found(HANDBOOK_HEADINGS) == {"192.168.1.254", "198.51.100.7"}
    # the family rule needs the parent to stand alone: a network written "192.168.1/24" is no parent,
    # and a first part above 99 is never a version's
    assert _found("hosts 10.1.2.3 and 10.1.2.9 of 10.1.2/24") == {"10.1.2.3", "10.1.2.9"}
    assert _found("the 192.168.1 lab: printer 192.168.1.20") == {"192.168.1.20"}


def test_a_heading_title_in_any_script_marks_a_section_number():
    for title in ("Предварительные требования", "准备步骤", "إنشاء ملف التغذية", "The configuration"):
        assert _found(f"Intro.\n\n15.4.2.1. {title}\n\nBody text.") == set(), title
    assert _found("Intro.\n\n127.0.0.1 localhost\n") == {"127.0.0.1"}      # a hosts-file line is not a heading
