"""Small real datasets for the vision tests: synthetic scenes and charts as PAIRS shards, a BPE
tokenizer trained on their text, and token shards of that text."""
from __future__ import annotations

import os

import pyarrow as pa

from corpus.schemas import PAIRS, TOKENS
from corpus.writer import write_dataset


def write_pairs(path: str, rows: list[dict]) -> str:
    write_dataset(path, "pairs", pa.Table.from_pylist(rows, schema=PAIRS), target_bytes=200_000)
    return path


def build(root: str, scenes: int = 40, charts: int = 6) -> dict[str, str]:
    from synth.captions import make_captioned_scene
    from synth.charts import make_chart
    from training.tokenizer import save_tokenizer, train_tokenizer

    scene_rows = [make_captioned_scene(1, i, 96, 96) for i in range(scenes)]
    chart_rows = [make_chart(1, i, width=160, height=160, languages=["en"], max_qa=4) for i in range(charts)]
    texts = []
    for r in scene_rows + chart_rows:
        texts.append(r["text"])
        texts += [f"Question: {q['question']} Answer: {q['answer']}" for q in r["qa"]]
    texts += [f"Question: Where is it? Box: {i} {i + 1} {i + 2} {i + 3}" for i in range(100)]
    tok = train_tokenizer(texts * 3, vocab_size=400)
    tok_dir = os.path.join(root, "tokenizer")
    save_tokenizer(tok, tok_dir)
    eos = tok.token_to_id("<|endoftext|>")
    trows = [{"doc_id": f"t{i}", "tokens": tok.encode(t).ids + [eos], "source": "syn", "mixture": "text"}
             for i, t in enumerate(texts * 4)]
    tokens = os.path.join(root, "tokens")
    write_dataset(tokens, "tokens", pa.Table.from_pylist(trows, schema=TOKENS), target_bytes=50_000)
    return {"tokenizer": tok_dir, "tokens": tokens, "scenes": write_pairs(os.path.join(root, "scenes"), scene_rows),
            "charts": write_pairs(os.path.join(root, "charts"), chart_rows)}


def train_config(d: dict[str, str], out: str, stages: list[dict], **vision) -> dict:
    return {"model": {"preset": "tiny", "overrides": {"vocab_size": "auto", "max_seq_len": 64, "d_model": 64,
                                                      "n_layers": 2, "ffn_hidden": 128}},
            "data": {"seq_len": 48, "batch_size": 4, "tokenizer": d["tokenizer"],
                     "mixture": [{"name": "text", "path": d["tokens"], "weight": 1.0}],
                     "eval": {"holdout_permille": 100}},
            "optim": {"lr": 3e-3}, "schedule": {"warmup_steps": 2, "decay": "cosine"},
            "train": {"out": out, "ckpt_every": 2, "seed": 0},
            "vision": {"encoder": "vitdet-tiny", "adapter_tokens": 4, "small_decoder": "tiny",
                       "small_decoder_overrides": {"d_model": 64, "n_layers": 1, "ffn_hidden": 128},
                       "pairs": [{"name": "scenes", "path": d["scenes"], "weight": 1.0},
                                 {"name": "charts", "path": d["charts"], "weight": 0.5}],
                       "heldout": 0.2, "max_eval": 6, "eval_text_batches": 1, "stages": stages, **vision}}
