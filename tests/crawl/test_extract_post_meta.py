"""A discussion's per-post metadata is dropped (crawl/extract_post_meta.py): short lines of repeated
posts that trafilatura does not read as main text; the messages, and short lines outside a
discussion (a shop's prices), stay."""
from crawl.extract import parse_html
from crawl.extract_blocks import segment
from crawl.extract_post_meta import drop_post_meta

MESSAGES = ["The press at the cooperative handles about two tonnes of apples a day once the belt is set right.",
            "We run ours slower in the first week so the crew learns to clean it between the batches at night.",
            "Keep the pomace away from the juice line, or the cider takes a bitter taste that never leaves it."]


def _thread(cls: str) -> str:
    posts = "".join(f"<div class='{cls}'><div class='author'><a href='/u/{i}'>grower{i}</a></div>"
                    f"<div class='meta'>Posts: {100 + i}</div><div class='body'><p>{m}</p></div></div>"
                    for i, m in enumerate(MESSAGES))
    return f"<html><body><div class='topic'>{posts}</div></body></html>"


def test_short_unvoted_lines_of_posts_go_and_the_messages_stay():
    blocks = segment(parse_html(_thread("post"))).blocks
    texts = [b.text for b in blocks]
    votes = [t in MESSAGES for t in texts]                     # trafilatura reads the messages only
    out = drop_post_meta(blocks, [True] * len(blocks), votes)
    assert [t for t, k in zip(texts, out) if k] == MESSAGES
    votes_all = [True] * len(blocks)                           # a line trafilatura reads stays
    assert drop_post_meta(blocks, [True] * len(blocks), votes_all) == [True] * len(blocks)


def test_outside_a_discussion_short_lines_of_items_stay():
    blocks = segment(parse_html(_thread("product-card"))).blocks   # no discussion class above
    votes = [b.text in MESSAGES for b in blocks]
    assert drop_post_meta(blocks, [True] * len(blocks), votes) == [True] * len(blocks)
