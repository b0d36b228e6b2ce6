"""Mail-archive pages (crawl/mail_archive.py): the body between the archiver's marks is the content,
the navigation printed around it is not, and pages without marks are read as before."""
from pathlib import Path

from crawl.extract import extract_page
from crawl.mail_archive import body_lines, iso_date

BODY = ("I have posted the second draft of the proposal after the discussion at the summit. The main "
        "changes are in the section on reference counting, which now covers objects shared between threads.\n\n"
        "The benchmarks in the appendix were rerun on the new build and single threaded performance is about "
        "six percent slower than the default build on the usual suite of programs.\n\n"
        "Comments are welcome on the discussion thread before the steering council review.\n\nThanks,\nJane")
NAV_WORDS = ("Previous message", "Next message", "sorted by", "Prev by Date", "Next by thread", "Reply:", "Index")


def _pipermail() -> str:
    nav = """<P><UL>
        <LI>Previous message: <A HREF="074562.html">[Dev] Re: Deprecating the old buffer protocol
</A></li>
        <LI>Next message: <A HREF="074564.html">[Dev] Re: Proposal: second draft
</A></li>
         <LI> <B>Messages sorted by:</B>
              <a href="date.html#74563">[ date ]</a>
              <a href="thread.html#74563">[ thread ]</a>
              <a href="subject.html#74563">[ subject ]</a>
              <a href="author.html#74563">[ author ]</a>
         </LI>
       </UL>
"""
    return f"""<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">
<HTML>
 <HEAD>
   <TITLE> [Dev] Proposal: second draft
   </TITLE>
   <META http-equiv="Content-Type" content="text/html; charset=us-ascii">
 </HEAD>
 <BODY BGCOLOR="#ffffff">
   <H1>[Dev] Proposal: second draft</H1>
    <B>Jane Developer</B>
    <A HREF="mailto:dev%40example.org?Subject=Re" TITLE="[Dev] Proposal">jane at example.org
       </A><BR>
    <I>Tue Jan 10 14:02:11 EST 2023</I>
{nav}    <HR>
<!--beginarticle-->
<PRE>{BODY}
</PRE>

<!--endarticle-->
    <HR>
{nav}
<hr>
<a href="https://lists.example.org/mailman/listinfo/dev">More information about the Dev
mailing list</a><br>
</body></html>
"""


def _mhonarc() -> str:
    nav = """<!--X-TopPNI-->
<hr>
[<a href="msg00041.html">Date Prev</a>][<a href="msg00043.html">Date Next</a>][<a href="msg00040.html">Thread Prev</a>][<a href="msg00044.html">Thread Next</a>][<a href="maillist.html#00042">Date Index</a>][<a href="threads.html#00042">Thread Index</a>]
<!--X-TopPNI-End-->
"""
    paras = "".join(f"<p>{p}</p>\n" for p in BODY.split("\n\n"))
    return f"""<!-- MHonArc v2.6.19 -->
<html>
<head>
<title>Proposal: second draft</title>
</head>
<body>
{nav}<!--X-MsgBody-->
<!--X-Subject-Header-Begin-->
<h1>Proposal: second draft</h1>
<hr>
<!--X-Subject-Header-End-->
<!--X-Head-of-Message-->
<ul>
<li><em>From</em>: Jane Developer &lt;jane@example.org&gt;</li>
<li><em>Date</em>: Tue, 10 Jan 2023 14:02:11 -0500</li>
</ul>
<!--X-Head-of-Message-End-->
<!--X-Head-Body-Sep-Begin-->
<hr>
<!--X-Head-Body-Sep-End-->
<!--X-Body-of-Message-->
{paras}
<!--X-Body-of-Message-End-->
<!--X-MsgBody-End-->
<!--X-Follow-Ups-->
<hr>
<ul><li><strong>Follow-Ups</strong>:
<ul>
<li><strong><a name="00044" href="msg00044.html">Re: Proposal: second draft</a></strong>
<ul><li><em>From:</em> Sam Reviewer</li></ul></li>
</ul></li></ul>
<!--X-Follow-Ups-End-->
<ul><li>Prev by Date:
<strong><a href="msg00041.html">Re: Deprecating the old buffer protocol</a></strong>
</li>
<li>Next by Date:
<strong><a href="msg00043.html">Re: Release schedule for the autumn</a></strong>
</li>
<li>Prev by thread:
<strong><a href="msg00040.html">Re: Deprecating the old buffer protocol</a></strong>
</li>
<li>Next by thread:
<strong><a href="msg00044.html">Re: Proposal: second draft</a></strong>
</li>
<li>Index(es):
<ul><li><a href="maillist.html#00042"><strong>Date</strong></a></li>
<li><a href="threads.html#00042"><strong>Thread</strong></a></li></ul></li>
</ul>
</body>
</html>
"""


def _hypermail() -> str:
    body = "".join(f"<p>\n{p.replace(chr(10), '<br>' + chr(10))}\n<br>\n" for p in BODY.split("\n\n"))
    return f"""<html>
<head>
<title>Dev: Proposal: second draft</title>
<!-- received="Tue Jan 10 14:02:11 2023" -->
<!-- sent="Tue, 10 Jan 2023 14:02:11 -0500" -->
<!-- name="Jane Developer" -->
<!-- subject="Proposal: second draft" -->
</head>
<body>
<h1>Proposal: second draft</h1>
<!-- received="Tue Jan 10 14:02:11 2023" -->
<strong>From:</strong> Jane Developer (<a href="mailto:jane@example.org?Subject=Re">jane@example.org</a>)<br>
<strong>Date:</strong> Tue Jan 10 2023 - 14:02:11 EST
<p>
<!-- next="start" -->
<ul>
<li><strong>Next message:</strong> <a href="0043.html">Sam Reviewer: "Re: Release schedule for the autumn"</a>
<li><strong>Previous message:</strong> <a href="0041.html">Ann Other: "Re: Deprecating the old buffer protocol"</a>
<!-- nextthread="start" -->
<li><strong>Reply:</strong> <a href="0044.html">Sam Reviewer: "Re: Proposal: second draft"</a>
<!-- reply="end" -->
</ul>
<hr>
<!-- body="start" -->
{body}<!-- body="end" -->
<hr>
<ul>
<li><strong>Next message:</strong> <a href="0043.html">Sam Reviewer: "Re: Release schedule for the autumn"</a>
<li><strong>Previous message:</strong> <a href="0041.html">Ann Other: "Re: Deprecating the old buffer protocol"</a>
<li><strong>Reply:</strong> <a href="0044.html">Sam Reviewer: "Re: Proposal: second draft"</a>
</ul>
<hr>
<p><small><em>This archive was generated by hypermail 2.1.6 : Tue Jan 10 2023 - 14:05:00 EST</em></small>
</body>
</html>
"""


def _words(text: str) -> list[str]:
    return text.split()


def test_each_archiver_yields_the_body_and_subject_without_its_navigation():
    for make in (_pipermail, _mhonarc, _hypermail):
        html = make()
        assert body_lines(html) is not None, make.__name__
        ex = extract_page(html, "https://lists.example.org/archive/msg00042.html")
        text = ex.text
        assert (ex.author, ex.date) == ("Jane Developer", "2023-01-10"), make.__name__
        assert _words(BODY) == _words(text)[-len(_words(BODY)):], make.__name__   # the whole body, last
        assert "Proposal: second draft" in text.splitlines()[0], make.__name__      # the subject line
        for nav in NAV_WORDS:
            assert nav not in text, (make.__name__, nav)


def test_pages_without_a_complete_pair_of_marks_are_read_as_before():
    html = _pipermail()
    assert body_lines(html.replace("<!--endarticle-->", "")) is None              # start without end
    assert body_lines(html.replace("<!--beginarticle-->", "")) is None            # end without start
    assert body_lines("<html><body><!-- body=\"end\" --><p>x</p></body></html>") is None
    # marks on one line hold no block that starts between them: the classifier's reading stands
    flat = html.replace("\n", " ")
    assert body_lines(flat) == (1, 1)
    assert extract_page(flat, "https://lists.example.org/a.html").text
    demo = sorted((Path(__file__).resolve().parents[2] / "pipelines" / "demo_site").rglob("*.html"))
    assert len(demo) > 50
    assert not [p.name for p in demo if body_lines(p.read_text(encoding="utf-8", errors="replace"))]


def test_archive_dates_in_both_of_their_forms():
    assert iso_date("Tue, 10 Jan 2023 14:02:11 -0500") == "2023-01-10"
    assert iso_date("Tue Jan 10 14:02:11 EST 2023") == "2023-01-10"
    assert iso_date("Mon Feb  3 09:00:00 2020") == "2020-02-03"
    assert iso_date("sometime last week") is None
    assert iso_date("Tue Feb 31 14:02:11 EST 2023") is None


def _hyperkitty(bodies=(BODY,), fixed=False) -> str:
    """A message page laid out as Mailman 3's HyperKitty writes one: navigation bar, months list,
    subject <h1>, each message with its header, body, attachments and reply link, a right column."""
    emails = []
    for k, body in enumerate(bodies):
        quote = ('<div class="quoted-switch"><a href="#">...</a></div><div class="quoted-text"> '
                 'Earlier draft text that the reply quotes. </div>') if k else ""
        emails.append(f"""<div class="email{' email-first' if not k else ''}">
    <div id="M{k}" class="email-header">
        <div class="gravatar-wrapper">
            <div class="gravatar"><img class="gravatar" src="/avatar/{k}.png" alt="" /></div>
            <div class="email-author">
                <span class="name"><a href="/archives/users/{k}/" title="See the profile">Jane Developer</a></span>
            </div>
        </div>
        <div class="email-date right">
            <span class="date hidden-tn">
                Tuesday, 10 January
                    2023
            </span>
            <div class="time"><span title="Sender's time: Jan. 10, 2023, 2:02 p.m.">7:02 p.m.</span></div>
        </div>
        <div class="messagelink right">
            <a href="/archives/list/dev@lists.example.org/message/M{k}/" title="Permalink for this message"><i class="fa fa-link"></i></a>
        </div>
    </div> <!-- /email-header -->
    <div class="email-body {'fixed' if fixed else ''}">
{quote}{body}
    </div>
    <div class="attachments">
        <p class="attachments">Attachments:</p>
        <ul class="attachments-list list-unstyled"><li><a href="/a/{k}/bench.txt">bench.txt</a> (text/plain &mdash; 2 KB)</li></ul>
    </div>
    <div class="email-info">
        <a class="reply reply-mailto" title="Sign in to reply online" href="mailto:dev@lists.example.org">Reply</a>
    </div>
</div>""")
    months = "".join(f'<li><a href="/archives/list/dev@lists.example.org/2023/{m}/">{name}</a></li>'
                     for m, name in ((1, "January"), (2, "February"), (3, "March")))
    return f"""<!DOCTYPE HTML>
<html>
    <head>
        <meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />
        <title>[Dev] Proposal: second draft - dev - Example Lists</title>
        <link rel="shortcut icon" href="/static/hyperkitty/img/favicon.ico" />
    </head>
    <body>
    <nav class="navbar sticky-top navbar-light bg-light navbar-expand-md">
        <div class="container">
            <a class="navbar-brand" href="/archives/">Example Lists</a>
            <form name="search" method="get" action="/archives/search" role="search">
                <input name="q" type="text" class="form-control" placeholder="Search this list" />
            </form>
            <ul class="nav navbar-nav auth">
                <li class="nav-item"><a href="/accounts/login/" class="nav-link">Sign In</a></li>
                <li class="nav-item"><a href="/accounts/signup/" class="nav-link">Sign Up</a></li>
            </ul>
        </div>
    </nav>
    <div class="container">
<div class="row">
<div class="d-none d-md-block col-sm-2">
    <div class="col-12 accordion" id="months-list">
        <div class="card"><div class="card-header"><h3 class="card-title"><a>2023</a></h3></div>
            <div class="card-body"><ul class="list-unstyled">{months}</ul></div></div>
    </div>
</div>
    <div class="col-12 col-md-10">
        <div class="message-header row">
        <div class="col-tn-2 message-back"><a href="/archives/list/dev@lists.example.org/thread/T1/">thread</a></div>
        <div class="col-10"><h1>[Dev] Proposal: second draft</h1></div>
        </div>
        <div class="row">
            <div class="col-lg-9"><section id="thread-content">
{"".join(emails)}
            </section></div>
            <div class="col-lg-3">
<section id="message-overview-info">
    <p><a href="/archives/list/dev@lists.example.org/thread/T1/">Back to the thread</a></p>
    <p><a href="/archives/list/dev@lists.example.org/">Back to the list</a></p>
</section>
            </div>
        </div>
    </div>
</div>
    </div>
    <footer class="footer"><div class="container"><p class="text-muted">
        Powered by <a href="http://hyperkitty.readthedocs.org">HyperKitty</a> version 1.3.9.
    </p></div></footer>
    </body>
</html>
"""


HK_NAV = ("Sign In", "Search", "January", "February", "Back to the thread", "Attachments", "bench.txt", "Reply",
          "Powered by", "Permalink", "Back to the list")


def test_hyperkitty_pages_yield_each_message_body_with_its_lines():
    """Mailman 3 writes no body marks: its message bodies (laid out white-space: pre-line by its
    stylesheet) are the content, with the subject; the navigation and message chrome are not."""
    url = "https://lists.example.org/archives/list/dev@lists.example.org/message/M0/"
    ex = extract_page(_hyperkitty(), url)
    lines = ex.text.split("\n")
    assert lines[0] == "[Dev] Proposal: second draft"
    assert "\n".join(lines[1:]) == BODY           # paragraphs, the sign-off's line breaks
    assert (ex.author, ex.date) == ("Jane Developer", "2023-01-10")
    for nav in HK_NAV:
        assert nav not in ex.text, nav
    # a thread page: every message in order, a reply's visible quote with it
    reply = "Thanks Jane, the appendix numbers match what I measured.\n\n  -- Omar"
    # a thread page prints the subject as the thread header's <h3>, with newer/older links beside it
    thread_page = _hyperkitty((BODY, reply)).replace(
        '<div class="message-header row">', '<div class="thread-header row"><div class="col-tn-2">'
        '<a id="next-thread" href="/t/T2/">newer</a></div><div class="col-tn-8"><h3>[Dev] Proposal: second draft'
        '</h3></div></div><div class="message-header row">').replace(
        '<div class="col-10"><h1>[Dev] Proposal: second draft</h1></div>', '')
    thread = extract_page(thread_page, url).text
    assert thread.startswith("[Dev] Proposal: second draft\n") and "newer" not in thread
    assert thread.endswith("Earlier draft text that the reply quotes.\nThanks Jane, the appendix numbers match "
                           "what I measured.\n\n-- Omar")        # pre-line: a line's leading spaces collapse
    assert thread.index("six percent slower") < thread.index("Thanks Jane")
    # a message shown in fixed font (white-space: pre) keeps its indentation
    patch = "--- a/press.c\n+++ b/press.c\n@@ -1,2 +1,2 @@\n     int turns = 2;\n-    int wait = 5;\n+    int wait = 6;"
    assert patch in extract_page(_hyperkitty((patch,), fixed=True), url).text
    # the same layout without HyperKitty's signs is an ordinary page
    plain = _hyperkitty().replace("/static/hyperkitty/", "/static/x/").replace("hyperkitty.readthedocs", "x")
    assert extract_page(plain, url).text != ex.text


PI_BODY = ("The pomace needs six minutes to settle on quinces, not five: with five the\n"
           "juice keeps running after the next turn and the basket overflows.\n\n"
           "<span\nclass=\"q\">&gt; Why not make it configurable?\n</span>\n"
           "Because nobody changes it; the constant is documented in press.h.\n\n"
           "Signed-off-by: Jane Developer &lt;jane@example.org&gt;\n---\n"
           " press.c | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n\n"
           "diff --git a/press.c b/press.c\n--- a/press.c\n+++ b/press.c\n@@ -1,2 +1,2 @@\n"
           "     int turns = 2;\n-    int wait = 5;\n+    int wait = 6;\n")


def _public_inbox() -> str:
    """A message page as public-inbox writes one: the search form, the message in <pre id=b>
    (headers, a blank line, the body), the thread overview, the reply instructions, the mirror notes."""
    return (PI_HEAD + PI_BODY + PI_TAIL)


PI_HEAD = """<html><head><title>[PATCH v2] press: wait one more minute between turns - Jane Developer</title><link
rel=alternate
title="Atom feed"
href="../new.atom"
type="application/atom+xml"/><style>pre{white-space:pre-wrap}*{font-size:100%;font-family:monospace}</style></head><body><form
action="../"><pre><b>Cider press development</b>
<input
name=q
type=text />
<input
type=submit
value=search /> <a
href="../_/text/help">help</a> / <a
href="../_/text/color">color</a> / <a
href="../new.atom">Atom feed</a></pre></form><pre
id=b>From: Jane Developer &lt;jane@example.org&gt;
To: press-dev@lists.example.org
Cc: Omar Presser &lt;omar@example.org&gt;
Subject: <a
href="#r"
id=t>[PATCH v2] press: wait one more minute between turns</a>
Date: Tue, 10 Jan 2023 14:02:11 -0500
Message-ID: &lt;20230110190211.4242-1-jane@example.org&gt; (<a
href="raw">raw</a>)
In-Reply-To: &lt;<a
href="../20230109.1111-1-jane@example.org/">20230109.1111-1-jane@example.org</a>&gt;

"""
PI_TAIL = """</pre><hr><pre><a
href="../20230110.5555-1-omar@example.org/"
rel=next>next</a> <a
href="../20230109.1111-1-jane@example.org/"
rel=prev>prev parent</a> <a
href="#R">reply</a> <a
href="../">index</a>

<b>Thread overview: </b>3+ messages / expand[<a
href="T/#u">flat</a>|<a
href="t/#u">nested</a>]  <a
href="t.mbox.gz">mbox.gz</a>  <a
href="t.atom">Atom feed</a>  <a
href="#b">top</a>
2023-01-09 16:11 [PATCH] press: wait longer between turns Jane Developer
2023-01-09 18:30 ` Omar Presser
2023-01-10 19:02 <b>` <a
id=r
href="#t">Jane Developer [this message]</a></b>
2023-01-10 19:30   ` Omar Presser
</pre><hr><pre
id=R><b>Reply instructions:</b>

You may reply publicly to <a
href=#t>this message</a> via plain-text email
using any one of the following methods:

* Save the following mbox file, import it into your mail client,
  and reply-to-all from there: <a
href=raw>mbox</a>

  Avoid top-posting and favor interleaved quoting:
  <a
href="https://en.wikipedia.org/wiki/Posting_style#Interleaved_style">https://en.wikipedia.org/wiki/Posting_style#Interleaved_style</a>

* Reply using the <b>--to</b>, <b>--cc</b>, and <b>--in-reply-to</b>
  switches of git-send-email(1):

  git send-email \\
    --in-reply-to=20230110190211.4242-1-jane@example.org \\
    --to=jane@example.org \\
    --cc=press-dev@lists.example.org \\
    /path/to/YOUR_REPLY

  <a
href="https://kernel.org/pub/software/scm/git/docs/git-send-email.html">https://kernel.org/pub/software/scm/git/docs/git-send-email.html</a>
</pre><hr><pre>Cider press development

Archives are clonable: git clone --mirror https://lists.example.org/press-dev

Example <a
href="../_/text/config/raw">config snippet</a> for mirrors

AGPL code for this site: git clone <a
href="https://public-inbox.org/public-inbox.git">https://public-inbox.org/public-inbox.git</a></pre></body></html>
"""


def test_public_inbox_pages_yield_the_subject_and_body_without_headers_or_thread():
    url = "https://lists.example.org/press-dev/20230110190211.4242-1-jane@example.org/"
    ex = extract_page(_public_inbox(), url)
    lines = ex.text.split("\n")
    assert lines[0] == "[PATCH v2] press: wait one more minute between turns"
    assert lines[1].startswith("The pomace needs six minutes") and "> Why not make it configurable?" in lines
    assert ex.text.endswith("@@ -1,2 +1,2 @@\n     int turns = 2;\n-    int wait = 5;\n+    int wait = 6;")
    assert (ex.author, ex.date) == ("Jane Developer", "2023-01-10")
    for gone in ("To: press-dev", "Cc: Omar", "Message-ID", "In-Reply-To", "Thread overview", "Omar Presser",
                 "Reply instructions", "git send-email", "Archives are clonable", "AGPL", "search"):
        assert gone not in ex.text, gone
    # without public-inbox's footer the same markup is an ordinary page, read as before
    other = _public_inbox().replace("public-inbox.org/public-inbox.git", "example.org/code.git")
    assert "Thread overview" in extract_page(other, url).text
