"""Synthetic long documents built from real text that target retrieval and tracking.

The report's long-context stage mixes natural long documents with "synthetic long-form data
designed to target specific capabilities". Each builder here takes real documents (curated web
text, manuals) as the haystack, reaches ``target_words`` by concatenating whole sentences of
them, and hides facts in it at drawn depths, then asks about them at the end:

- ``needle``: one fact ("The special code of X is N.") at a drawn depth; asked at the end.
- ``key_value``: many ``key: value`` records spread over the text; one key is asked.
- ``variable_tracking``: ``VAR a = 4711``, later ``VAR b = VAR a``, ... a chain of assignments
  (multi-hop: each hop refers to the previous variable) spread over the text; asked: which
  variables hold the value.

Rows are ``{"id", "kind", "text", "question", "answer", "depths"}``; ``text`` is the whole
training document (context, question and answer). ``depths`` are the relative positions (0-1)
of the inserted facts, so an evaluation can score by depth. Document ``index`` with ``seed`` is
the same whatever else is drawn.
"""
from __future__ import annotations

import re

import numpy as np

KINDS = ("needle", "key_value", "variable_tracking")
_SENT = re.compile(r"(?<=[.!?])\s+")


def _sentences(texts: list[str]) -> list[str]:
    out = [s.strip() for t in texts for s in _SENT.split(t) if len(s.split()) >= 3]
    if not out:
        raise ValueError("no sentences of 3 words or more in the haystack texts")
    return out


def _haystack(sents: list[str], rng: np.random.Generator, words: int) -> list[str]:
    """Consecutive sentences from a drawn start (wrapping), until ``words`` words."""
    i, got, n = int(rng.integers(len(sents))), [], 0
    while n < words:
        s = sents[i % len(sents)]
        got.append(s)
        n += len(s.split())
        i += 1
    return got


def _insert(hay: list[str], facts: list[str], rng: np.random.Generator) -> tuple[list[str], list[float]]:
    slots = sorted(int(x) for x in rng.integers(0, len(hay) + 1, len(facts)))
    out, depths, k = [], [], 0
    for i in range(len(hay) + 1):
        while k < len(facts) and slots[k] == i:
            depths.append(round(i / max(1, len(hay)), 3))
            out.append(facts[k])
            k += 1
        if i < len(hay):
            out.append(hay[i])
    return out, depths


def _key(rng: np.random.Generator) -> str:
    return "".join(rng.choice(list("abcdefghjkmnpqrstuvwxyz23456789"), 8))


def make_long_document(texts: list[str], kind: str, index: int, target_words: int = 2000, seed: int = 0,
                       records: int = 20, hops: int = 4) -> dict:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    rng = np.random.default_rng([seed, KINDS.index(kind), index])
    hay = _haystack(_sentences(texts), rng, target_words)
    if kind == "needle":
        name, code = _key(rng), int(rng.integers(10**5, 10**6))
        facts = [f"The special code of {name} is {code}."]
        question, answer = f"What is the special code of {name}?", str(code)
    elif kind == "key_value":
        keys = list(dict.fromkeys(_key(rng) for _ in range(records)))
        vals = [_key(rng) for _ in keys]
        facts = [f"Record {k}: {v}." for k, v in zip(keys, vals)]
        q = int(rng.integers(len(keys)))
        question, answer = f"What is the value of record {keys[q]}?", vals[q]
    else:
        names = list(dict.fromkeys(_key(rng)[:5].upper() for _ in range(hops + 1)))
        value = int(rng.integers(1000, 10000))
        facts = [f"VAR {names[0]} = {value}."] + [f"VAR {b} = VAR {a}." for a, b in zip(names, names[1:])]
        question, answer = f"Which variables hold the value {value}?", " ".join(names)
    if kind == "variable_tracking":   # the chain must stay in order: sorted slots keep facts in order
        body, depths = _insert(hay, facts, rng)
    else:
        order = rng.permutation(len(facts))
        body, depths = _insert(hay, [facts[i] for i in order], rng)
    context = " ".join(body)
    return {"id": f"{kind}-{seed}-{index}", "kind": kind, "question": question, "answer": answer,
            "depths": depths, "text": f"{context}\n\nQuestion: {question}\nAnswer: {answer}"}
