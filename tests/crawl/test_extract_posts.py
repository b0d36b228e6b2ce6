"""A discussion that declares its posts in schema.org microdata (crawl/extract_posts.py): the
declared messages are kept, the rest of each post item goes, a Q&A page's comments go; an FAQ
section, or a page that declares too little, is left as the classifier read it. The last test runs
the whole extractor on such a page."""
from crawl.extract import extract_page, parse_html
from crawl.extract_blocks import segment
from crawl.extract_posts import declared_posts

SO = "https://schema.org/"
MESSAGES = ["The press at the cooperative handles about two tonnes of apples a day once the belt is set right "
            "and the crew has learned where the pomace goes after each of the pressings.",
            "We run ours slower in the first week so the crew learns to clean it between the batches at night, "
            "which costs a little juice and saves a lot of trouble later in the season.",
            "Keep the pomace away from the juice line, or the cider takes a bitter taste that never leaves it, "
            "whatever you blend it with afterwards."]
COMMENT = "Which belt do you run on it, the food grade one or the standard?"


def _post(kind: str, i: int, message: str, prop: str = "text", extra: str = "") -> str:
    return (f"<div itemscope itemtype='{SO}{kind}'>"
            f"<div itemprop='author' itemscope itemtype='{SO}Person'><span itemprop='name'>grower{i}</span></div>"
            f"<div class='rank'>Senior member, joined 2019</div>"
            f"<div itemprop='{prop}'><p>{message}</p></div>{extra}"
            f"<div class='tools'>Reply Quote Share</div></div>")


def _thread(first_kind: str = "DiscussionForumPosting", reply_kind: str = "Comment") -> str:
    replies = "".join(_post(reply_kind, i, m) for i, m in enumerate(MESSAGES[1:], 1))
    first = _post(first_kind, 0, MESSAGES[0], prop="articleBody")
    return f"<html><body><h1>Pressing schedule</h1><div id='thread'>{first}{replies}</div></body></html>"


def _run(html: str, keep=None):
    blocks = segment(parse_html(html)).blocks
    keep = [True] * len(blocks) if keep is None else keep(blocks)
    out = declared_posts(blocks, keep)
    return [b.text for b, k in zip(blocks, out) if k], blocks


def test_a_thread_keeps_its_messages_and_drops_each_posts_other_lines():
    kept, blocks = _run(_thread())
    assert kept == ["Pressing schedule"] + MESSAGES          # the heading is outside every post: untouched
    assert any("joined 2019" in b.text for b in blocks)      # the lines that went were there


def test_a_declared_message_the_classifier_dropped_comes_back():
    kept, _ = _run(_thread(), keep=lambda bl: [b.text != MESSAGES[2] for b in bl])
    assert MESSAGES[2] in kept


def test_replies_declared_as_postings_count_too():
    kept, _ = _run(_thread(reply_kind="DiscussionForumPosting"))
    assert kept == ["Pressing schedule"] + MESSAGES


def test_a_qa_page_drops_the_comments_under_its_answers():
    comment = (f"<ul><li itemprop='comment' itemscope itemtype='{SO}Comment'>"
               f"<span itemprop='text'>{COMMENT}</span> <a class='user'>reader7</a></li></ul>")
    answers = "".join(_post("Answer", i, m, extra=comment) for i, m in enumerate(MESSAGES[1:], 1))
    html = (f"<html><body itemscope itemtype='{SO}QAPage'><div id='question' itemprop='mainEntity' itemscope "
            f"itemtype='{SO}Question'><h1 itemprop='name'>Pressing schedule</h1>"
            f"<div itemprop='text'><p>{MESSAGES[0]}</p></div></div>{answers}</body></html>")
    kept, blocks = _run(html)
    assert any(COMMENT in b.text for b in blocks)
    assert kept == ["Pressing schedule"] + MESSAGES           # the question's declared name is left to the classifier


def test_an_faq_section_outside_a_qa_page_is_left_alone():
    faq = "".join(f"<div itemscope itemtype='{SO}Question'><h3 itemprop='name'>Question {i}?</h3>"
                  f"<div itemscope itemprop='acceptedAnswer' itemtype='{SO}Answer'><div itemprop='text'>"
                  f"<p>{m}</p></div></div><p class='note'>Updated last spring</p></div>"
                  for i, m in enumerate(MESSAGES))
    html = f"<html><body><div itemscope itemtype='{SO}FAQPage'>{faq}</div></body></html>"
    kept, blocks = _run(html, keep=lambda bl: [False] * len(bl))
    assert kept == []


def test_too_little_declared_text_is_not_trusted():
    html = f"<html><body>{_post('DiscussionForumPosting', 0, 'Short one.')}</body></html>"
    kept, blocks = _run(html)
    assert kept == [b.text for b in blocks]


def test_the_extractor_reads_a_declared_thread_without_its_post_metadata():
    html = _thread().replace("<html><body>", "<html><head><title>Pressing schedule</title></head><body>"
                             "<nav><a href='/'>Home</a> <a href='/forum'>Forum</a></nav>")
    text = extract_page(html, "https://forum.example.org/t/1").text
    for m in MESSAGES:
        assert m in text
    assert "joined 2019" not in text and "Reply Quote Share" not in text


def test_an_item_wrapping_a_whole_thread_keeps_the_replies_it_does_not_declare():
    """Only the opening post's body is declared; the replies inside the same item are undeclared
    text (nine tenths of its words): they are not that post's metadata, so they stay."""
    replies = "".join(f"<div class='reply'><p>{i}: {m} {m}</p></div>" for i, m in enumerate(MESSAGES * 6))
    opening = "".join(f"<p>{m}</p>" for m in MESSAGES)
    html = (f"<html><body><div itemscope itemtype='{SO}DiscussionForumPosting'><h1 itemprop='headline'>Presses</h1>"
            f"<div class='who'>grower0, Senior member</div><div itemprop='articleBody'>{opening}</div>{replies}"
            f"</div></body></html>")
    kept, blocks = _run(html)
    assert kept == [b.text for b in blocks]
