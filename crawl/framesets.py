"""Pages built from frames: where their text and links are.

A frameset page holds no content of its own: a browser loads each `<frame src>` as a document of
its own, and `<noframes>` holds what a reader without frames gets instead (old documentation
generators such as Javadoc put a "non-frame version" link there). libxml2 reads a `<noframes>`
element's content as raw text, as a frames-capable browser does, so without a repair the page's
text is literal markup ("<body><p>...") and the links inside it are never seen. A crawler reads
the page as a reader without frames: `open_noframes` parses that content as HTML in place, and
`frame_links` gives the frames' documents as links, so a crawl from a frameset root reaches them.
"""
from __future__ import annotations

from typing import Iterator

import lxml.etree as etree
import lxml.html


def open_noframes(doc) -> int:
    """Parse each `<noframes>` element's raw text as HTML, in place; returns how many were opened.
    Markup that does not parse stays as it was (never an error)."""
    opened = 0
    for el in list(doc.iter("noframes")):
        raw = el.text or ""
        if "<" not in raw or len(el):
            continue
        try:
            parts = lxml.html.fragments_fromstring(raw)
        except (etree.ParserError, ValueError, etree.XMLSyntaxError):
            continue
        el.text = None
        for part in parts:
            if isinstance(part, str):  # text before the first element
                el.text = (el.text or "") + part
            elif part.tag in ("html", "body"):  # a whole document inside: its children
                el.text = (el.text or "") + (part.text or "")
                el.extend(list(part))
            else:
                el.append(part)
        opened += 1
    return opened


def frame_links(doc) -> Iterator[tuple[str, str]]:
    """(src, name) of every `<frame>`: the documents a frameset page is made of. Inline frames
    (`<iframe>`) are not followed: on most pages they hold embeds, ads and trackers."""
    for el in doc.iter("frame"):
        src = (el.get("src") or "").strip()
        if src:
            yield src, (el.get("title") or el.get("name") or "").strip()
