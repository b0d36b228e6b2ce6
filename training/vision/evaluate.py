"""CPU evaluation of a vision-language model: exact-answer QA, box grounding, text-only loss.

- QA accuracy: greedy answer to "Question: ... Answer:" equals the synthetic answer exactly
  (after stripping spaces), on held-out charts, tables and scenes.
- Grounding accuracy: the answer "x0 y0 x1 y1" (percent of the frame) parses and its box has
  IoU >= 0.5 with the item's measured box, on held-out scenes.
- Text loss: mean held-out cross-entropy of the LM alone on token shards (same batches every time).
"""
from __future__ import annotations

from collections import defaultdict

import torch

from training.data.loader import PackedLoader
from training.vision.samples import EvalItem


def iou(a, b) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    area = lambda r: max(0.0, r[2] - r[0]) * max(0.0, r[3] - r[1])  # noqa: E731
    union = area(a) + area(b) - inter
    return inter / union if union > 0 else 0.0


def parse_box(text: str):
    parts = text.split()
    if len(parts) != 4 or not all(p.isdigit() for p in parts):
        return None
    return tuple(float(p) for p in parts)


def answer_correct(item: EvalItem, predicted: str) -> bool:
    if item.task == "grounding":
        got, want = parse_box(predicted), parse_box(item.answer)
        return got is not None and want is not None and iou(got, want) >= 0.5
    return predicted.strip() == item.answer.strip()


@torch.no_grad()
def answer_accuracy(vlm, items: list[EvalItem], tokenizer, eos: int, max_new: int = 14) -> dict:
    """{"qa": acc, "grounding": acc, "qa_n", "grounding_n", "qa_by_kind": {chart: acc, ...}}."""
    was = vlm.training
    vlm.eval()
    hits: dict = defaultdict(int)
    tot: dict = defaultdict(int)
    for it in items:
        out = vlm.greedy(it.prompt.tolist(), torch.from_numpy(it.image), max_new, eos)
        ok = answer_correct(it, tokenizer.decode(out))
        for key in (it.task, f"{it.task}:{it.kind}"):
            tot[key] += 1
            hits[key] += int(ok)
    vlm.train(was)
    res = {}
    for task in ("qa", "grounding"):
        res[task] = hits[task] / tot[task] if tot[task] else None
        res[f"{task}_n"] = tot[task]
    res["qa_by_kind"] = {k.split(":", 1)[1]: hits[k] / tot[k] for k in sorted(tot) if k.startswith("qa:")}
    return res


@torch.no_grad()
def text_loss(lm, eval_sources, seq_len: int, batch_size: int, batches: int) -> float | None:
    if not eval_sources or batches < 1:
        return None
    ld = PackedLoader(eval_sources, seq_len, batch_size, seed=12345)
    was = lm.training
    lm.eval()
    tot = 0.0
    for _ in range(batches):
        b = ld.next_batch()
        tot += float(lm(b["input_ids"], targets=b["targets"], doc_ids=b["doc_ids"]).loss)
    lm.train(was)
    return tot / batches
