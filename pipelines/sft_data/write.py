"""Check conversations against the chat template and the context, and write the kept ones as a
shard dataset; every dropped row is counted by reason in the dataset's report."""
from __future__ import annotations

import json
from typing import Iterable

import pyarrow as pa

from corpus.report import ReportStats, Samples, write_report
from corpus.writer import write_dataset
from training.posttrain.chat import ChatFormatError, encode

KIND = "conversations"
SCHEMA = pa.schema([("id", pa.string()), ("kind", pa.string()), ("split", pa.string()), ("language", pa.string()),
                    ("messages", pa.string()), ("task", pa.string()), ("tree", pa.string()), ("tokens", pa.int32()),
                    ("notes", pa.string())])
PAIR_SCHEMA = pa.schema([("id", pa.string()), ("context", pa.string()), ("chosen", pa.string()),
                         ("rejected", pa.string())])


def write_conversations(rows: Iterable[dict], out: str, tokenizer, max_len: int, stage: str,
                        provenance: dict | None = None, overwrite: bool = False) -> ReportStats:
    stats, samples = ReportStats(), Samples()
    st = stats.stage(stage)
    kept = {name: [] for name in SCHEMA.names}
    seen = set()
    for row in rows:
        if row["id"] in seen:
            st.record(False, "duplicate_id")
            continue
        seen.add(row["id"])
        if "drop" in row:
            st.record(False, row["drop"])
            samples.add(row["drop"], row["id"], row)
            continue
        try:
            enc = encode(tokenizer, json.loads(row["messages"]), max_len)
        except ChatFormatError as e:
            st.record(False, e.reason)
            samples.add(e.reason, row["id"], {**row, "error": str(e)})
            continue
        st.record(True, scores={"tokens": float(len(enc.ids))}, ranges={"tokens": (0.0, float(max_len))})
        for note in enc.notes:
            st.counters[note] += 1
        full = {**row, "tree": row.get("tree"), "tokens": len(enc.ids), "notes": ",".join(enc.notes)}
        for name in SCHEMA.names:
            kept[name].append(full[name])
    order = sorted(range(len(kept["id"])), key=lambda i: kept["id"][i])
    table = pa.table({k: [v[i] for i in order] for k, v in kept.items()}, schema=SCHEMA)
    write_dataset(out, KIND, table, provenance, overwrite=overwrite)
    stats.info["max_len"] = max_len
    write_report(out, stats, samples)
    return stats


def write_preferences(pairs: list[dict], out: str, provenance: dict | None = None, overwrite: bool = False) -> int:
    pairs = sorted(pairs, key=lambda p: p["id"])
    table = pa.table({"id": [p["id"] for p in pairs],
                      "context": [json.dumps(p["context"], ensure_ascii=False) for p in pairs],
                      "chosen": [p["chosen"] for p in pairs], "rejected": [p["rejected"] for p in pairs]},
                     schema=PAIR_SCHEMA)
    write_dataset(out, "preference_pairs", table, provenance, overwrite=overwrite)
    stats = ReportStats()
    st = stats.stage("preference_pairs")
    for _ in pairs:
        st.record(True)
    write_report(out, stats)
    return len(pairs)
