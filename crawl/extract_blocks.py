"""A page cut into text blocks, each described by the numbers a content classifier needs.

A block is the visible text owned by one block-level element (a paragraph, list item, heading, table
row, a div's own text...); inline markup (links, emphasis, spans) stays inside its block, and table
cells join their row with " | ". Hidden subtrees (crawl/visibility.py) and figure captions (they
travel with their image) give no block. Images and tables are noted with the index of the block
that follows them, so the extractor can give them a place in the text it keeps.

Each block gets a feature vector (FEATURES, in that order): its size and link density, its tag and
the landmarks around it (nav, header, footer, aside, article, main, ...), class/id words of its
ancestors that usually mean boilerplate or content, its position in the page, punctuation, the
same figures for its neighbours and containers, the votes of trafilatura (whether its main text
or its comments contain the block), and where it sits in the page's layout (crawl/extract_layout.py). The walk is iterative: 10,000 levels of nesting are fine.
"""
from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from itertools import repeat

from crawl.extract_layout import LAYOUT_FEATURES, ancestors, layout_features
from crawl.visibility import is_hidden

BLOCK_TAGS = frozenset({"p", "div", "li", "ul", "ol", "dl", "dd", "dt", "h1", "h2", "h3", "h4", "h5", "h6", "pre",
                        "blockquote", "section", "article", "main", "header", "footer", "nav", "aside", "table",
                        "tr", "thead", "tbody", "tfoot", "caption", "figure", "form", "fieldset", "legend",
                        "address", "details", "summary", "center", "hr", "body", "html", "menu", "dialog",
                        "figcaption"})
_TAG_GROUPS = {"p": "p", "div": "div", "li": "li", "tr": "tr", "pre": "pre", "blockquote": "quote", "dd": "dl",
               "dt": "dl", "h1": "h", "h2": "h", "h3": "h", "h4": "h", "h5": "h", "h6": "h", "td": "tr", "th": "tr"}
_OWN_TAGS = ("p", "div", "li", "tr", "pre", "quote", "dl", "h")
_LANDMARKS = {"nav": "nav", "header": "header", "footer": "footer", "aside": "aside", "form": "form", "li": "li",
              "table": "table", "article": "article", "main": "main", "h1": "h", "h2": "h", "h3": "h", "h4": "h",
              "h5": "h", "h6": "h", "pre": "pre", "code": "pre", "blockquote": "quote", "ul": "list", "ol": "list",
              "a": "a", "button": "form", "label": "form"}
_LANDMARK_NAMES = ("nav", "header", "footer", "aside", "form", "li", "table", "article", "main", "h", "pre",
                   "quote", "list", "a")
_ROLES = {"navigation": "nav", "banner": "header", "contentinfo": "footer", "complementary": "aside",
          "main": "main", "article": "article", "menu": "nav", "menubar": "nav"}
_NEG = re.compile(r"nav|menu|foot|header|sidebar|widget|breadcrumb|crumb|social|share|sharing|related|recommend|"
                  r"promo|advert|(?:^|[\W_])ads?(?:$|[\W_])|banner|cookie|consent|popup|modal|newsletter|subscri|"
                  r"login|signin|signup|register|copyright|pagination|pager|skip|toolbar|masthead|topbar|sponsor|"
                  r"outbrain|taboola|disclaimer|legal|hidden|overlay|search|tags?(?:$|[\W_])|author-bio|byline")
_POS = re.compile(r"content|article|post|entry|main|body|text|story|prose|markdown|description|detail|summary|"
                  r"review|product|answer|question|thread|message|comment|reply|docs?(?:$|[\W_])|readme|wiki|"
                  r"document|chapter|page-body|itemprop")
_TALK = re.compile(r"comment|reply|replies|answer|discussion|forum|thread|message|review|post(?:$|[\W_]|s)")
_WORD = re.compile(r"\w+")
_WS = re.compile(r"[ \t\r\f\v\u00a0]+")
_BR = "\u2028"   # a <br> in the block buffer; a newline there is only the HTML source's line wrap
_PUNCT = re.compile(r"[.,;:!?]")

FEATURES: tuple[str, ...] = (
    "log_words", "log_chars", "link_density", "avg_word_len", "digit_share", "upper_start_share", "punct_per_word",
    "ends_sentence", "depth", "rel_index", "rel_chars_before", "title_overlap",
    *(f"tag_{t}" for t in _OWN_TAGS),
    *(f"in_{m}" for m in _LANDMARK_NAMES),
    "neg_class", "pos_class", "talk_class", "neg_dist", "pos_dist", "talk_dist",
    "vote_main", "vote_main_words", "vote_comments",
    "prev_vote", "next_vote", "prev2_vote", "next2_vote", "prev_log_words", "next_log_words",
    "prev_link_density", "next_link_density",
    "c1_log_words", "c1_link_density", "c1_vote", "c1_log_blocks",
    "c2_log_words", "c2_link_density", "c2_vote", "c2_log_blocks",
    "c3_log_words", "c3_link_density", "c3_vote",
    "page_log_words", "page_vote_share", "page_link_density", "page_log_blocks",
    *LAYOUT_FEATURES,
)
_FI = {n: i for i, n in enumerate(FEATURES)}


@dataclass(slots=True)
class _Ctx:
    """What an element inherits from its ancestors."""
    depth: int = 0
    marks: frozenset = frozenset()
    neg: int = 0
    pos: int = 0
    talk: int = 0
    neg_at: int = -1000           # depth of the nearest ancestor with a boilerplate class/id
    pos_at: int = -1000
    talk_at: int = -1000
    ws: str = ""                  # inline white-space: "pre" keeps the layout, "line" the line breaks


@dataclass
class Block:
    text: str
    el: object                    # the block-level element that owns the text
    ctx: _Ctx
    link_chars: int = 0
    words: list[str] = field(default_factory=list)
    norm: str = ""
    shown: str | None = None      # the text as emitted when it differs from `text`: a <pre> keeps its layout
    _up: list | None = field(default=None, repr=False, compare=False)

    def ancestors(self) -> list:
        """`el` and its ancestors, nearest first (crawl/extract_layout.py ancestors), walked once per
        block: the layout features and the region steps each climb from every block. Read only."""
        if self._up is None:
            self._up = ancestors(self.el)
        return self._up


@dataclass
class Segmented:
    blocks: list[Block]
    images: list[tuple[int, object, _Ctx]]   # (index of the next block, <img>, context)
    tables: list[tuple[int, int, object]]    # (first block index, end block index, <table>)


def _child_ctx(parent: _Ctx, el, tag: str) -> _Ctx:
    marks = parent.marks
    mark = _LANDMARKS.get(tag) or _ROLES.get((el.get("role") or "").lower())
    if mark and mark not in marks:
        marks = marks | {mark}
    d = parent.depth + 1
    ws = parent.ws
    style = el.get("style")
    if style and "white-space" in style.lower():
        m = _WHITE_SPACE.search(style)
        if m and m.group(1).lower() != "inherit":
            ws = _WS_MODES.get(m.group(1).lower(), "")
    c = _Ctx(d, marks, parent.neg, parent.pos, parent.talk, parent.neg_at, parent.pos_at, parent.talk_at, ws)
    cls, ide = el.get("class"), el.get("id")
    if cls or ide:
        neg, pos, talk = _ident_words(f"{cls or ''} {ide or ''}")
        if neg:
            c.neg, c.neg_at = c.neg + 1, d
        if pos:
            c.pos, c.pos_at = c.pos + 1, d
        if talk:
            c.talk, c.talk_at = c.talk + 1, d
    return c


@functools.lru_cache(maxsize=65536)
def _ident_words(ident: str) -> tuple[bool, bool, bool]:
    """(boilerplate, content, discussion) words in a class/id string; pages repeat a few such strings.
    The patterns are lower case and the string is lowered once: matching the three alternations
    case-insensitively took five times as long (about 4 ms of a page's CPU)."""
    ident = ident.lower()
    return bool(_NEG.search(ident)), bool(_POS.search(ident)), bool(_TALK.search(ident))


_WHITE_SPACE = re.compile(r"white-space\s*:\s*([a-z-]+)", re.I)
_WS_MODES = {"pre": "pre", "pre-wrap": "pre", "break-spaces": "pre", "pre-line": "line"}


def line_broken(raw: str) -> str:
    """Text under `white-space: pre-line` as the browser shows it: spaces collapse within a line,
    line breaks stay (a paragraph break is one blank line)."""
    lines = [" ".join(x.split()) for x in raw.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    out: list[str] = []
    for x in lines:
        if x or (out and out[-1]):
            out.append(x)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)


def preformatted(raw: str) -> str:
    """A <pre> block's text as the browser shows it: indentation, alignment and blank lines kept
    (code and patches mean nothing without them); only line ends and trailing spaces normalised."""
    lines = [x.replace("\u00a0", " ").rstrip() for x in raw.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def segment(doc, max_blocks: int = 20_000) -> Segmented:
    """Cut the body of an lxml document into blocks (document order)."""
    body = doc.find("body") if doc.tag == "html" else doc
    if body is None:
        body = doc
    blocks: list[Block] = []
    images: list[tuple[int, object, _Ctx]] = []
    tables: list[tuple[int, int, object]] = []
    table_open: dict[object, int] = {}
    buf: list[str] = []
    link = [0, 0]                 # [open <a> count, link chars in buf]
    owners: list[tuple[object, _Ctx]] = [(body, _Ctx())]

    def add(s: str | None) -> None:
        if s:
            buf.append(s)
            if link[0] > 0:
                link[1] += len(s.strip())

    def flush() -> None:
        raw = "".join(buf)
        if raw and not raw.isspace():   # most flushes hold only the markup's indentation
            text = _WS.sub(" ", raw.replace("\n", " ").replace(_BR, "\n")).strip()
            text = "\n".join(x.strip() for x in text.split("\n") if x.strip())
            if text and _WORD.search(text) and len(blocks) < max_blocks:
                el, ctx = owners[-1]
                words = _WORD.findall(text.lower())
                if "pre" in ctx.marks or ctx.ws == "pre":
                    shown = preformatted(raw.replace(_BR, "\n"))
                else:
                    shown = line_broken(raw.replace(_BR, "\n")) if ctx.ws == "line" else None
                blocks.append(Block(text, el, ctx, min(link[1], len(text)), words, " ".join(words),
                                    shown if shown != text else None))
        buf.clear()
        link[1] = 0

    stack: list[tuple[object, _Ctx | None, bool]] = [(c, None, False) for c in reversed(body)]
    add(body.text)
    while stack:
        el, ctx, closing = stack.pop()
        tag = el.tag.lower() if isinstance(el.tag, str) else ""
        if closing:
            if tag in BLOCK_TAGS:
                flush()
                owners.pop()
            if tag == "a":
                link[0] -= 1
            if tag == "table" and el in table_open:
                tables.append((table_open.pop(el), len(blocks), el))
            add(el.tail)
            continue
        if is_hidden(el, noscript_visible=True) or tag == "figcaption":
            add(el.tail)
            continue
        kids = len(el)
        # the context is read by the element's children, its blocks and its images: a childless
        # inline element (a link, an <em>, a <br>) needs none
        my = _child_ctx(owners[-1][1] if ctx is None else ctx, el, tag) \
            if kids or tag in BLOCK_TAGS or tag == "img" else None
        if tag in BLOCK_TAGS:
            flush()
            owners.append((el, my))
        elif tag in ("td", "th"):
            if buf and "".join(buf).strip():
                buf.append(" | ")
        elif tag == "br":
            buf.append(_BR)
        elif tag == "img":
            images.append((len(blocks), el, my))
        elif tag == "a":
            link[0] += 1
        if tag == "table":
            table_open[el] = len(blocks)
        add(el.text)
        stack.append((el, my, True))
        if kids:
            stack.extend(zip(reversed(el), repeat(my), repeat(False)))
    flush()
    return Segmented(blocks, images, tables)


def _norm_words(text: str | None) -> str:
    return " ".join(_WORD.findall((text or "").lower()))


def _log(x: float) -> float:
    return math.log1p(max(0.0, x))


def _ancestor_sums(blocks, nwords: list[int], votes: list[float]) -> tuple[dict[object, list[float]], list[list[object]]]:
    """Subtree sums over the 3 nearest ancestors of each block's owner (words, link chars, chars,
    voted words, blocks), and each block's ancestors. Keyed by the element objects themselves
    (held here), never id(): lxml makes a new proxy object each time an element is reached, and
    the id of a freed proxy is reused by the next one."""
    agg: dict[object, list[float]] = {}
    anc_ids: list[list[object]] = []
    for i, b in enumerate(blocks):
        ids = []
        a = b.el
        for _ in range(3):
            a = a.getparent() if a is not None else None
            if a is None:
                break
            ids.append(a)
            s = agg.setdefault(a, [0.0, 0.0, 0.0, 0.0, 0.0])
            s[0] += nwords[i]
            s[1] += b.link_chars
            s[2] += len(b.text)
            s[3] += nwords[i] * votes[i]
            s[4] += 1
        anc_ids.append(ids)
    return agg, anc_ids


def ends_sentence(text: str) -> bool:
    """Whether `text` ends as a sentence does (the `ends_sentence` feature)."""
    return text.rstrip()[-1:] in ".!?:;"


def _block_own(r: list[float], b, i: int, n: int, chars_before: int, total_chars: int, link_density: float,
               title_n: str) -> None:
    """The block's own text statistics, position and markup context."""
    w = b.words
    nw = len(w)
    r[0] = _log(nw)
    r[1] = _log(len(b.text))
    r[2] = link_density
    r[3] = (len(b.norm) - nw + 1 if nw else 0) / max(1, nw)   # b.norm: the words joined by single spaces
    r[4] = sum(map(str.isdigit, w)) / max(1, nw)
    toks = b.text.split()
    r[5] = sum(1 for t in toks if t[0].isupper()) / max(1, len(toks))
    r[6] = len(_PUNCT.findall(b.text)) / max(1, nw)
    r[7] = 1.0 if ends_sentence(b.text) else 0.0
    c = b.ctx
    r[8] = min(c.depth, 100)
    r[9] = i / n
    r[10] = chars_before / total_chars
    r[11] = 1.0 if nw and (" " + b.norm + " ") in title_n else 0.0
    tag = b.el.tag.lower() if isinstance(b.el.tag, str) else ""
    g = _TAG_GROUPS.get(tag)
    if g:
        r[_FI["tag_" + g]] = 1.0
    for m in c.marks:
        r[_FI["in_" + m]] = 1.0
    r[_FI["neg_class"]] = min(c.neg, 5)
    r[_FI["pos_class"]] = min(c.pos, 5)
    r[_FI["talk_class"]] = min(c.talk, 5)
    r[_FI["neg_dist"]] = min(c.depth - c.neg_at, 30)
    r[_FI["pos_dist"]] = min(c.depth - c.pos_at, 30)
    r[_FI["talk_dist"]] = min(c.depth - c.talk_at, 30)


def _block_votes(r: list[float], b, i: int, n: int, votes: list[float], nwords: list[int], ld: list[float],
                 main_set: set[str], com_votes: list[float]) -> None:
    """The peer's vote on this block and on its neighbours, with the neighbours' size and links."""
    w = b.words
    nw = len(w)
    r[_FI["vote_main"]] = votes[i]
    r[_FI["vote_main_words"]] = sum(map(main_set.__contains__, w)) / max(1, nw)
    r[_FI["vote_comments"]] = com_votes[i] if nw else 0.0
    r[_FI["prev_vote"]] = votes[i - 1] if i > 0 else -1.0
    r[_FI["next_vote"]] = votes[i + 1] if i + 1 < n else -1.0
    r[_FI["prev2_vote"]] = votes[i - 2] if i > 1 else -1.0
    r[_FI["next2_vote"]] = votes[i + 2] if i + 2 < n else -1.0
    r[_FI["prev_log_words"]] = _log(nwords[i - 1]) if i > 0 else -1.0
    r[_FI["next_log_words"]] = _log(nwords[i + 1]) if i + 1 < n else -1.0
    r[_FI["prev_link_density"]] = ld[i - 1] if i > 0 else -1.0
    r[_FI["next_link_density"]] = ld[i + 1] if i + 1 < n else -1.0


def _block_containers(r: list[float], agg: dict[object, list[float]], ancestors: list[object]) -> None:
    """Words, link density, vote share and block count of the block's 3 nearest containers."""
    for k, key in enumerate(("c1", "c2", "c3")):
        if k < len(ancestors):
            s = agg[ancestors[k]]
            r[_FI[key + "_log_words"]] = _log(s[0])
            r[_FI[key + "_link_density"]] = s[1] / max(1.0, s[2])
            r[_FI[key + "_vote"]] = s[3] / max(1.0, s[0])
            if key != "c3":
                r[_FI[key + "_log_blocks"]] = _log(s[4])
        else:
            r[_FI[key + "_vote"]] = -1.0


def _peer_votes(blocks, peer_n: str, peer_words: set[str]) -> list[float]:
    """1.0 for each block whose words occur, in order and together, in a peer's text (`peer_n`: its
    words space-joined and space-padded; `peer_words`: the same words as a set), else 0.0: the test
    `" " + block.norm + " " in peer_n`, done on the word sequence. A block the peer kept has every
    word in that text (a cheap test most blocks fail); the peer keeps blocks in page order, so the
    words right after the last block found are tried first; otherwise only the places of the
    block's rarest word are. Searching the whole text for every block made a long page quadratic."""
    seq = peer_n.split()
    places: dict[str, list[int]] | None = None   # word -> its positions in seq, built on the first miss
    votes = []
    at = 0
    for b in blocks:
        w = b.words
        k = len(w)
        hit = False
        if k == 0:
            hit = not seq            # the needle "  " is only in the empty text's "  "
        elif all(map(peer_words.__contains__, w)):   # peer_words is set(seq): every word has places
            if seq[at:at + k] == w:
                start = at
            else:
                if places is None:
                    places = {}
                    for i, x in enumerate(seq):
                        places.setdefault(x, []).append(i)
                j = min(range(k), key=lambda j: len(places[w[j]]))
                start = next((p - j for p in places[w[j]] if p >= j and seq[p - j:p - j + k] == w), -1)
            if start >= 0:
                hit, at = True, start + k
        votes.append(1.0 if hit else 0.0)
    return votes


def features(seg: Segmented, main_text: str | None, comments_text: str | None, title: str | None) -> list[list[float]]:
    """One feature row per block (FEATURES order); main_text / comments_text are a peer's output."""
    blocks = seg.blocks
    n = len(blocks)
    if n == 0:
        return []
    main_n = " " + _norm_words(main_text) + " "
    main_set = set(main_n.split())
    com_n = " " + _norm_words(comments_text) + " "
    title_n = " " + _norm_words(title) + " "
    votes = _peer_votes(blocks, main_n, main_set)
    com_votes = _peer_votes(blocks, com_n, set(com_n.split()))
    nwords = [len(b.words) for b in blocks]
    ld = [b.link_chars / max(1, len(b.text)) for b in blocks]
    total_words = sum(nwords) or 1
    total_chars = sum(len(b.text) for b in blocks) or 1
    agg, anc_ids = _ancestor_sums(blocks, nwords, votes)
    page = {"page_log_words": _log(total_words),
            "page_vote_share": sum(w * v for w, v in zip(nwords, votes)) / total_words,
            "page_link_density": sum(b.link_chars for b in blocks) / total_chars,
            "page_log_blocks": _log(n)}
    layout = layout_features(blocks, votes)
    lay0 = _FI[LAYOUT_FEATURES[0]]
    rows = []
    chars_before = 0
    for i, b in enumerate(blocks):
        r = [0.0] * len(FEATURES)
        r[lay0:lay0 + len(LAYOUT_FEATURES)] = layout[i]
        _block_own(r, b, i, n, chars_before, total_chars, ld[i], title_n)
        chars_before += len(b.text)
        _block_votes(r, b, i, n, votes, nwords, ld, main_set, com_votes)
        _block_containers(r, agg, anc_ids[i])
        for name, v in page.items():
            r[_FI[name]] = v
        rows.append(r)
    return rows
