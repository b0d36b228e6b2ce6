"""A discussion that declares its posts in schema.org microdata is read the way it declares them.

Forum and Q&A software (Discourse, NodeBB, XenForo, vBulletin, Invision, the Stack Exchange sites)
marks each post as an item (`itemscope itemtype=".../DiscussionForumPosting"`, `.../Comment`,
`.../Question`, `.../Answer`) and its message as a property of that item (`itemprop="text"` or
`"articleBody"`). Everything else inside a post item is about the post: author, rank, join date,
post count, vote buttons, "Share", the signature. That is a statement by the page, not a guess:

- a block inside a post's declared message is main content, even where the classifier dropped it
  (a one-line reply, a code listing);
- a block inside a post item that declares a message, but outside that message, is dropped;
- on a Q&A page, the comments under a question or an answer are dropped: the question and its
  answers are the page's content, the comments are remarks about them (the benchmark's truth and
  trafilatura leave them out as well).

Only on a page that declares a discussion: a DiscussionForumPosting or SocialMediaPosting item, or
a Question inside a QAPage (an FAQ section of a shop or service page declares Question/Answer too,
and is not touched). A post item that declares no message (some forums mark only the first post's
author and date), or whose message is under a tenth of its words (an item wrapping a whole thread
that declares only the opening post's body), leaves its other blocks to the classifier. A thread's
replies are posts, whichever type (Comment or DiscussionForumPosting) they are declared with.

On the tuning part of the development pages this moved only forum pages (34 of 83 declare their
posts in microdata): forum F1 0.769 to 0.784 with the shipped model (25 pages up, 7 down, the most by 0.065); on the
held-out part, checked with the rule fixed, 0.767 to 0.797 (8 pages up, none down;
docs/extraction-experiments.md, round 23). JSON-LD declarations were tried as well and are not
used: the `text` they carry is often cut short or reworded, so it does not locate the page's blocks.
"""
from __future__ import annotations

POSTS = True          # switchable for experiments
QA_COMMENTS = False   # True: a Question's or Answer's comments are read as posts, not dropped
MESSAGE_SHARE = 0.1   # a post item's message must hold this share of its words for the rest to go
MIN_WORDS = 50        # declared message words the page must hold before its declaration is trusted

_TEXT_PROPS = frozenset({"text", "articleBody"})
_TITLE_PROPS = frozenset({"name", "headline"})
TEXT, TITLE, OTHER = "text", "title", "other"   # where a block sits in its post (_place)
_THREAD = frozenset({"DiscussionForumPosting", "SocialMediaPosting"})
_QA = frozenset({"Question", "Answer"})
_POST = _THREAD | _QA | {"Comment"}


def _type(el) -> str:
    """The last path segment of an item's first itemtype URL ("" when it has none)."""
    t = (el.get("itemtype") or "").split()
    return t[0].rstrip("/").rsplit("/", 1)[-1] if t else ""


def _place(block, qa_page: bool):
    """(the nearest post item above the block, where in it the block is: TEXT inside its declared
    message, TITLE inside its declared name or headline, OTHER elsewhere), or (None, OTHER). A
    property belongs to the nearest item above it, so one passed on the way up counts only if no
    other item (an author's Person, a quoted CreativeWork) comes between it and the post."""
    mark = OTHER
    for a in block.ancestors():
        if a.get("itemscope") is not None:
            t = _type(a)
            if t in _POST and (qa_page or t not in _QA):
                return a, mark
            mark = OTHER
        props = (a.get("itemprop") or "").split()
        if mark != TEXT and _TEXT_PROPS.intersection(props):
            mark = TEXT
        elif mark == OTHER and _TITLE_PROPS.intersection(props):
            mark = TITLE
    return None, OTHER


def _qa_page(blocks) -> bool:
    """An element above the first block declares a QAPage (Stack Exchange sets it on <body>)."""
    if not blocks:
        return False
    return any(a.get("itemscope") is not None and _type(a) == "QAPage" for a in blocks[0].ancestors())


def _in_discussion(item, qa_page: bool) -> bool:
    """The post item is, or sits inside, a thread's post or a QAPage's question."""
    for a in (item, *item.iterancestors()):
        if a.get("itemscope") is not None:
            t = _type(a)
            if t in _THREAD or (qa_page and t == "Question"):
                return True
    return False


def _qa_comment(item) -> bool:
    """The Comment item's nearest item above is a Question or an Answer."""
    for a in item.iterancestors():
        if a.get("itemscope") is not None:
            return _type(a) in _QA
    return False


def declared_posts(blocks, keep: list[bool]) -> list[bool]:
    """`keep` with the page's declared post messages kept and their posts' other blocks dropped (a
    new list); unchanged on a page that declares no discussion or too little message text."""
    out = list(keep)
    if not POSTS or not blocks:
        return out
    qa_page = _qa_page(blocks)
    places = [_place(b, qa_page) for b in blocks]
    items = {id(item): item for item, _ in places if item is not None}
    if not any(_in_discussion(item, qa_page) for item in items.values()):
        return out
    words: dict[int, list[int]] = {}   # per post item: [its message words, all its words]
    for b, (item, mark) in zip(blocks, places):
        if item is not None:
            w = words.setdefault(id(item), [0, 0])
            w[0] += len(b.words) if mark == TEXT else 0
            w[1] += len(b.words)
    if sum(msg for msg, _ in words.values()) < MIN_WORDS:
        return out
    declared = {k for k, (msg, total) in words.items() if msg and msg >= MESSAGE_SHARE * total}
    qa_comments = set() if QA_COMMENTS else {k for k, it in items.items() if _type(it) == "Comment" and _qa_comment(it)}
    for i, (item, mark) in enumerate(places):
        if item is not None and id(item) in qa_comments:
            out[i] = False
        elif mark == TEXT:
            out[i] = True
        elif mark == OTHER and item is not None and id(item) in declared:
            out[i] = False
    return out
