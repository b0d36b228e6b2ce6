"""Captions of a synthetic scene at several levels, grounded captions with boxes, and scene QA.

Levels: keywords; one sentence; a paragraph with positions; grounded (each noun phrase followed
by `<box>x0,y0,x1,y1</box>` in normalised coordinates). Templates vary so a small CLIP sees the
same facts phrased many ways.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from synth.rng import choice
from synth.scene_draw import COLORS, SHAPES


def noun(it: dict[str, Any]) -> str:
    """The item's noun phrase without article: 'large red circle', 'yellow house with a red roof'."""
    size = f"{it['size']} " if it.get("size") else ""
    k = it["kind"]
    if k == "shape":
        return f"{size}{it['color']} {it['shape']}"
    if k == "object":
        o, p = it["object"], it["parts"]
        if o == "house":
            return f"{size}{p['walls']} house with a {p['roof']} roof"
        if o == "flower":
            return f"{size}{p['petals']} flower"
        if o == "tree":
            return f"{size}tree"
        return f"{size}{it['color']} {o}"
    if k == "text":
        return f"word \"{it['text']}\" in {it['color']} letters"
    return f"{'large' if it.get('size') == 'large' else 'small'} {it['chart']} chart with {len(it['values'])} {it['color']} {'bars' if it['chart'] == 'bar' else 'points'}"


def bare(it: dict[str, Any]) -> str:
    """The noun phrase without its size word (what a question can name unambiguously)."""
    p = noun(it)
    for w in ("small ", "large "):
        p = p.removeprefix(w)
    return p


def article(phrase: str) -> str:
    if phrase.startswith("word"):
        return "the " + phrase
    return ("an " if phrase[0] in "aeiou" else "a ") + phrase


def position(it: dict[str, Any]) -> str:
    cx, cy = it["center"]
    h = "left" if cx < 0.36 else "right" if cx > 0.64 else ""
    v = "top" if cy < 0.36 else "bottom" if cy > 0.64 else ""
    if not h and not v:
        return "in the center"
    if not v:
        return f"on the {h}"
    if not h:
        return f"at the {v}"
    return f"in the {v} {h}"


def box_tag(it: dict[str, Any], width: int, height: int) -> str:
    """`<box>x0,y0,x1,y1</box>`: the measured pixel box over the image size, two decimals."""
    x0, y0, x1, y1 = it["box_px"]
    return f"<box>{x0 / width:.2f},{y0 / height:.2f},{x1 / width:.2f},{y1 / height:.2f}</box>"


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def scene_captions(scene: dict[str, Any], rng: np.random.Generator) -> dict[str, str]:
    items, bg = scene["items"], scene["background"]
    phrases = [article(noun(it)) for it in items]
    kw = [bare(it) for it in items] + [bg]
    if not items:
        sentence = f"An empty {bg}."
        return {"keywords": bg, "sentence": sentence, "paragraph": sentence + " Nothing else is shown.",
                "grounded": sentence}
    listed = _join(phrases)
    tmpl = choice(rng, ("{L} on a {B}.", "A {B} with {L}.", "This image shows {L} against a {B}.",
                        "{L}, drawn on a {B}.", "A simple picture of {L} on a {B}."))
    sentence = tmpl.replace("{L}", listed).replace("{B}", bg)
    sentence = sentence[0].upper() + sentence[1:]
    grounded_list = _join([f"{p} {box_tag(it, scene['width'], scene['height'])}" for p, it in zip(phrases, items)])
    grounded = tmpl.replace("{L}", grounded_list).replace("{B}", bg)
    grounded = grounded[0].upper() + grounded[1:]
    sents = [f"The picture has a {bg}."]
    for p, it in zip(phrases, items):
        pos = position(it)
        form = choice(rng, ("{P} is {W}.", "{W} there is {p}.", "{P} sits {W}."))
        s = form.replace("{P}", p[0].upper() + p[1:]).replace("{p}", p).replace("{W}", pos)
        sents.append(s[0].upper() + s[1:])
    sents.append(f"There {'is one item' if len(items) == 1 else f'are {len(items)} items'} in total.")
    return {"keywords": ", ".join(kw), "sentence": sentence, "paragraph": " ".join(sents), "grounded": grounded}


def scene_qa(scene: dict[str, Any], rng: np.random.Generator, max_qa: int = 6) -> list[dict[str, Any]]:
    """Counting, colour, position and existence questions with their operands in `args`."""
    items = scene["items"]
    out: list[dict[str, Any]] = [{"question": "How many items are in the image?", "answer": str(len(items)),
                                  "type": "count", "args": {"op": "count_items"}}]
    shapes = sorted({it["shape"] for it in items if it["kind"] == "shape"})
    for s in shapes:
        same = [it for it in items if it["kind"] == "shape" and it["shape"] == s]
        out.append({"question": f"How many {s}s are there?", "answer": str(len(same)), "type": "count",
                    "args": {"op": "count_shape", "shape": s}})
        if len(same) == 1:
            out.append({"question": f"What colour is the {s}?", "answer": same[0]["color"], "type": "attribute",
                        "args": {"op": "color_of", "shape": s}})
    for i, it in enumerate(items):
        nm = bare(it)
        if sum(1 for o in items if bare(o) == nm) == 1:
            out.append({"question": f"Where is the {nm} in the image?", "answer": position(it), "type": "position",
                        "args": {"op": "position", "item": i}})
    c, s = choice(rng, tuple(COLORS)), choice(rng, SHAPES)
    yes = any(it["kind"] == "shape" and it["shape"] == s and it["color"] == c for it in items)
    out.append({"question": f"Is there a {c} {s} in the image?", "answer": "yes" if yes else "no",
                "type": "existence", "args": {"op": "exists", "shape": s, "color": c}})
    keep = sorted(int(i) for i in rng.permutation(len(out))[:max_qa])
    return [out[i] for i in keep]
