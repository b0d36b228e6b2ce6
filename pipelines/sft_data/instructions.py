"""Instruction data: exact questions over synthetic tables and chart data, and document tasks
(summarise, extract, rewrite) whose answer is in the document's language."""
from __future__ import annotations

import hashlib
import json
import re
from typing import Iterator

from pipelines.sft_data.sources import MAX_ROWS, small_table, split_of, table_text
from synth.chart_data import data_table, make_chart_data
from synth.chart_qa import chart_qa
from synth.rng import choice, item_rng
from synth.table_qa import table_qa

SYSTEM = "You answer from the data given. Reply with the answer only."
QA_TYPES = ("value_lookup", "count", "max", "min", "comparison")


def _row(rid: str, kind: str, split: str, lang: str, messages: list[dict], task: dict) -> dict:
    return {"id": rid, "kind": kind, "split": split, "language": lang,
            "messages": json.dumps(messages, ensure_ascii=False), "task": json.dumps(task, ensure_ascii=False)}


def qa_conversations(seed: int, n_items: int, per_item: int = 2, max_rows: int = MAX_ROWS) -> Iterator[dict]:
    """Table QA (even items) and chart QA (odd items); answers are the generators' exact strings."""
    for i in range(n_items):
        if i % 2 == 0:
            grid, title, rng = small_table(seed, i, max_rows=max_rows)
            qas = table_qa(grid, rng, max_qa=8)
            kind = "table_qa"
        else:
            rng = item_rng(seed, "sft-chart", i)
            d = make_chart_data(rng, choice(rng, ("grouped_bar", "line", "pie")), "en")
            d["categories"] = d["categories"][:max_rows]
            for s in d["series"]:
                s["values"] = s["values"][:max_rows]
            d["series"] = d["series"][:2]
            grid, title = data_table(d), d["title"]
            grid[0] = [h or "Item" for h in grid[0]]
            qas = chart_qa(d, rng, max_qa=8)
            kind = "chart_qa"
        qas = [q for q in qas if q["type"] in QA_TYPES][:per_item]
        for k, q in enumerate(qas):
            msgs = [{"role": "system", "content": SYSTEM},
                    {"role": "user", "content": f"{table_text(grid, title)}\nQuestion: {q['question']}"},
                    {"role": "assistant", "content": q["answer"]}]
            yield _row(f"{kind}-{seed}-{i:06d}-{k}", kind, split_of(i), "en", msgs,
                       {"type": "exact", "answer": q["answer"], "qa_type": q["type"]})


# prompt templates per language; the answer is cut from the document itself, so it is in the
# document's (and so the prompt's) language
DOC_PROMPTS = {
    "summarise": {"en": "Summarise the text in one sentence.", "fr": "Résume le texte en une phrase.",
                  "de": "Fasse den Text in einem Satz zusammen.", "es": "Resume el texto en una frase."},
    "extract": {"en": "List the numbers that appear in the text, in order.",
                "fr": "Liste les nombres du texte, dans l'ordre.",
                "de": "Nenne die Zahlen im Text der Reihe nach.", "es": "Enumera los números del texto, en orden."},
    "rewrite": {"en": "Rewrite the text with one sentence per line.", "fr": "Réécris le texte, une phrase par ligne.",
                "de": "Schreibe den Text mit einem Satz pro Zeile.", "es": "Reescribe el texto, una frase por línea."},
}
# the mixed-language option: the instruction in another language, naming the answer's language
LANGUAGE_NAMES = {"en": {"en": "English", "fr": "French", "de": "German", "es": "Spanish"},
                  "fr": {"en": "anglais", "fr": "français", "de": "allemand", "es": "espagnol"},
                  "de": {"en": "Englisch", "fr": "Französisch", "de": "Deutsch", "es": "Spanisch"},
                  "es": {"en": "inglés", "fr": "francés", "de": "alemán", "es": "español"}}
ANSWER_IN = {"en": "Answer in {}.", "fr": "Réponds en {}.", "de": "Antworte auf {}.", "es": "Responde en {}."}
_SENT = re.compile(r"(?<=[.!?])\s+")
_NUM = re.compile(r"\d+(?:[.,]\d+)?")


def _mixed_language(doc_id: str, lang: str, mixed: float) -> str | None:
    """The instruction's language for a mixed-language row (a seeded ``mixed`` share of documents
    whose language has a template), or None: instruction in the document's language."""
    if mixed <= 0 or lang not in ANSWER_IN:
        return None
    h = int.from_bytes(hashlib.blake2b(doc_id.encode(), digest_size=8).digest(), "big")
    if (h % 10_000) >= mixed * 10_000:
        return None
    others = [x for x in sorted(ANSWER_IN) if x != lang]
    return others[(h // 10_000) % len(others)]


def document_conversations(docs: list[dict], max_chars: int = 400, mixed: float = 0.0) -> Iterator[dict]:
    """``docs``: ``{"id", "text", "language"}``. Summarise = the lead sentence (extractive),
    extract = the numbers in order, rewrite = one sentence per line. Languages without a template
    are skipped by the caller's report (reason ``language_without_template``). By default the
    instruction is in the document's language, so the answer's language is the prompt's; with
    ``mixed`` > 0 that share of documents gets its instruction in another language, which names
    the answer's language (the document's) explicitly."""
    for d in docs:
        lang = (d.get("language") or "").split("-")[0]
        ask = _mixed_language(str(d["id"]), lang, mixed)
        text = " ".join(d["text"].split())[:max_chars].rsplit(" ", 1)[0]
        sents = [s for s in _SENT.split(text) if s]
        for task, prompts in DOC_PROMPTS.items():
            prompt = prompts.get(ask or lang)
            if ask and prompt:
                prompt += " " + ANSWER_IN[ask].format(LANGUAGE_NAMES[ask][lang])
            if prompt is None:
                yield {"id": f"doc-{task}-{d['id']}", "drop": "language_without_template"}
                continue
            if task == "summarise":
                answer = sents[0] if sents else ""
            elif task == "extract":
                answer = ", ".join(_NUM.findall(text))
            else:
                answer = "\n".join(sents)
            if not answer:
                yield {"id": f"doc-{task}-{d['id']}", "drop": f"nothing_to_{task}"}
                continue
            msgs = [{"role": "user", "content": f"{text}\n\n{prompt}"}, {"role": "assistant", "content": answer}]
            split = "heldout" if sum(d["id"].encode()) % 5 == 0 else "train"
            row = _row(f"doc-{task}-{d['id']}", f"doc_{task}", split, lang, msgs, {"type": "exact", "answer": answer})
            if ask:
                row["language"] = f"{ask}>{lang}"  # instruction language > answer language
            yield row
