"""Training and evaluation samples from PAIRS rows and INTERLEAVED documents.

A sample is a token sequence with image placeholders plus the images for them, in order:

    pair caption     [img]*n "Caption: <sentence>" EOS
    pair QA          [img]*n "Question: <q> Answer: <a>" EOS         (charts, tables, scenes)
    scene grounding  [img]*n "Question: Where is <phrase>? Box: x0 y0 x1 y1" EOS
                     (integers 0-99: the item's box in the model's letterboxed frame, in percent)
    interleaved doc  its text items in order, each image item replaced by [img]*n

Rows with a ``drop_reason`` or without an image are not used. A sample whose image breaks the
policy (training.vision.image_policy) is dropped with that reason; one whose placeholders
outnumber the images it can supply (an interleaved image whose bytes are not in the image store)
with ``placeholders_exceed_images``. A sample longer than ``seq_len + 1`` tokens is cut; images
whose placeholders fall past the cut go with it (counted as ``images_cut_by_seq_len``), and a
sample left with no text to learn is dropped as ``too_long``. ``DropReport`` counts all of it.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

from training.vision.image_policy import ImageRejected, load_image

BOX_BINS = 100


@dataclass
class Sample:
    ids: np.ndarray                 # int64 [L] with placeholder runs
    images: list[np.ndarray]        # float32 [3, S, S], one per placeholder run
    source: str                     # dataset name
    kind: str                       # caption | qa | grounding | interleaved


@dataclass
class EvalItem:
    prompt: np.ndarray              # placeholders + question tokens (ends with "Answer:" / "Box:")
    image: np.ndarray
    answer: str                     # exact answer (QA) or "x0 y0 x1 y1" (grounding)
    kind: str                       # chart | table | scene
    task: str                       # qa | grounding


@dataclass
class DropReport:
    rows: int = 0
    samples: int = 0
    dropped: Counter = field(default_factory=Counter)
    converted: Counter = field(default_factory=Counter)
    examples: dict = field(default_factory=dict)

    def drop(self, reason: str, where: str) -> None:
        self.dropped[reason] += 1
        self.examples.setdefault(reason, where)

    def to_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "samples": self.samples, "dropped": dict(sorted(self.dropped.items())),
                "converted_to_rgb": dict(sorted(self.converted.items())), "examples": self.examples}


class SampleBuilder:
    """Tokenises sample text and checks images; ``placeholder`` is the LM's image token id."""

    def __init__(self, tokenizer, placeholder: int, n_image_tokens: int, image_size: int, seq_len: int):
        self.tok, self.ph, self.n, self.size, self.seq_len = tokenizer, placeholder, n_image_tokens, image_size, seq_len
        self.eos = tokenizer.token_to_id("<|endoftext|>")
        self.report = DropReport()

    def encode(self, text: str) -> list[int]:
        ids = self.tok.encode(text).ids
        if any(i >= self.ph for i in ids):
            raise ValueError(f"tokenizer id {max(ids)} collides with the image placeholder {self.ph}")
        return ids

    def image(self, data: bytes | None, where: str):
        """(array, letterbox) or None after recording the drop reason."""
        try:
            arr, lb = load_image(data or b"", self.size)
        except ImageRejected as e:
            self.report.drop(e.reason, where)
            return None
        if lb.source_mode != "RGB":
            self.report.converted[lb.source_mode] += 1
        return arr, lb

    def assemble(self, parts: list[tuple[str, Any]], source: str, kind: str, where: str) -> Sample | None:
        """parts: ("text", str) | ("image", array or None). Checks counts and length."""
        ids: list[int] = []
        images: list[np.ndarray] = []
        runs = 0
        for typ, val in parts:
            if typ == "text":
                ids.extend(self.encode(val))
            else:
                runs += 1
                ids.extend([self.ph] * self.n)
                if val is not None:
                    images.append(val)
        if runs > len(images):
            self.report.drop("placeholders_exceed_images", where)
            return None
        ids.append(self.eos)
        limit = self.seq_len + 1
        if len(ids) > limit:
            # keep the images whose placeholder runs lie wholly inside the input (the first
            # limit - 1 tokens); cut before a run that straddles the end, drop the images after it
            cut, kept, i = limit, 0, 0
            while i < len(ids):
                if ids[i] == self.ph:
                    if i + self.n > limit - 1:
                        cut = min(cut, i)
                        break
                    kept += 1
                    i += self.n
                else:
                    i += 1
            ids, images = ids[:cut], images[:kept]
            if len(ids) < 2 or all(t == self.ph for t in ids[1:]):
                self.report.drop("too_long", where)
                return None
            if runs > kept:
                self.report.dropped["images_cut_by_seq_len"] += runs - kept
        self.report.samples += 1
        return Sample(np.asarray(ids, np.int64), images, source, kind)


def _kind(row: dict[str, Any]) -> str:
    ts = row.get("text_source") or ""
    return ts.split(":")[1] if ts.startswith("synthetic:") and ts.count(":") >= 2 else "pair"


def grounding_items(row: dict[str, Any], lb) -> list[tuple[str, str]]:
    """(question, answer) per scene item a position question names uniquely ("Where is the X in
    the image?", its operands in meta_json's qa_args); the answer is the item's measured box in
    percent of the model's frame."""
    meta = json.loads(row.get("meta_json") or "{}")
    items = (meta.get("scene") or {}).get("items") or []
    out = []
    for qa, args in zip(row.get("qa") or [], meta.get("qa_args") or []):
        q = qa["question"]
        if qa.get("type") != "position" or not q.startswith("Where is ") or not q.endswith(" in the image?"):
            continue
        i = (args or {}).get("item")
        if not isinstance(i, int) or not 0 <= i < len(items) or not items[i].get("box_px"):
            continue
        x0, y0, x1, y1 = lb.to_frame(tuple(items[i]["box_px"]))
        pct = lambda v: str(min(BOX_BINS - 1, max(0, int(v * BOX_BINS))))  # noqa: E731
        phrase = q[len("Where is "):-len(" in the image?")]
        out.append((f"Question: Where is {phrase}? Box:", f" {pct(x0)} {pct(y0)} {pct(x1)} {pct(y1)}"))
    return out


def pair_samples(b: SampleBuilder, row: dict[str, Any], source: str, max_qa: int = 4) -> list[Sample]:
    b.report.rows += 1
    where = f"{source}:{row.get('id')}"
    got = b.image(row.get("image"), where)
    if got is None:
        return []
    arr, lb = got
    img = ("image", arr)
    out = []
    text = (row.get("text") or "").strip()
    if text:
        out.append(b.assemble([img, ("text", f"Caption: {text}")], source, "caption", where))
    for qa in (row.get("qa") or [])[:max_qa]:
        out.append(b.assemble([img, ("text", f"Question: {qa['question']} Answer: {qa['answer']}")], source, "qa", where))
    if _kind(row) == "caption":
        for qtext, ans in grounding_items(row, lb):
            out.append(b.assemble([img, ("text", qtext + ans)], source, "grounding", where))
    return [s for s in out if s is not None]


def pair_eval_items(b: SampleBuilder, row: dict[str, Any], max_qa: int = 4) -> list[EvalItem]:
    """Held-out QA (charts, tables, scenes) and grounding (scenes) questions of one row."""
    got = b.image(row.get("image"), f"eval:{row.get('id')}")
    if got is None:
        return []
    arr, lb = got
    kind = _kind(row)
    head = [b.ph] * b.n
    out = []
    for qa in (row.get("qa") or [])[:max_qa]:
        p = np.asarray(head + b.encode(f"Question: {qa['question']} Answer:"), np.int64)
        out.append(EvalItem(p, arr, qa["answer"].strip(), kind, "qa"))
    if kind == "caption":
        for qtext, ans in grounding_items(row, lb):
            out.append(EvalItem(np.asarray(head + b.encode(qtext), np.int64), arr, ans.strip(), kind, "grounding"))
    return out


def interleaved_sample(b: SampleBuilder, doc: dict[str, Any], images: dict[str, bytes], source: str) -> Sample | None:
    """One INTERLEAVED row; image items are looked up by sha256 in ``images`` (the image store)."""
    b.report.rows += 1
    where = f"{source}:{doc.get('id')}"
    parts: list[tuple[str, Any]] = []
    for it in doc.get("items") or []:
        if it.get("type") == "image":
            data = images.get(it.get("image_sha256") or "")
            if data is None:
                parts.append(("image", None))
                continue
            got = b.image(data, where)
            if got is None:
                return None
            parts.append(("image", got[0]))
        elif (it.get("text") or "").strip():
            parts.append(("text", it["text"].strip() + "\n"))
    if not parts:
        b.report.drop("empty_document", where)
        return None
    return b.assemble(parts, source, "interleaved", where)


def image_store(rows: Iterable[dict[str, Any]]) -> dict[str, bytes]:
    """sha256 -> encoded bytes, from PAIRS rows (the interleaved docs' image store)."""
    return {r["sha256"]: r["image"] for r in rows if r.get("sha256") and r.get("image")}
