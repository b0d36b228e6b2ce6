"""Beam job: documents dataset -> token shards (one row per document, EOS appended)."""
from __future__ import annotations

import os
from typing import Any

import apache_beam as beam

from corpus.errors import CidermillError
from corpus.provenance import make_provenance
from corpus.reader import ShardDataset
from corpus.report import ReportStats
from corpus.schemas import TOKENS
from pipelines.beam_options import beam_job
from pipelines.report_io import WriteReport
from pipelines.shards_io import ReadShards, WriteShards


class _Tokenize(beam.DoFn):
    """One tokenizer per worker (setup); documents encoded in batches."""

    def __init__(self, tokenizer_path: str, source: str, mixture: str, text_field: str, id_field: str,
                 max_chars: int):
        self.path, self.source, self.mixture = tokenizer_path, source, mixture
        self.text_field, self.id_field, self.max_chars = text_field, id_field, max_chars

    def file_paths(self) -> list[str]:  # the tokenizer every worker loads (runners/dask_client.py)
        from training.tokenizer import tokenizer_file
        return [tokenizer_file(self.path)]

    def setup(self):
        from training.tokenizer import EOS, load_tokenizer
        self.tok = load_tokenizer(self.path)
        self.eos = self.tok.token_to_id(EOS)

    def process(self, rows: list[dict[str, Any]]):
        texts = [(r.get(self.text_field) or "")[: self.max_chars] for r in rows]
        encs = self.tok.encode_batch(texts, add_special_tokens=False)
        stats = ReportStats()
        st = stats.stage("tokenize")
        for r, e in zip(rows, encs):
            ids = list(e.ids)
            if not ids:
                st.record(False, "empty_text")
                continue
            ids.append(self.eos)
            st.record(True, scores={"tokens": len(ids)}, ranges={"tokens": (0, 4096)})
            st.counters["tokens"] += len(ids)
            yield {"doc_id": str(r[self.id_field]), "tokens": ids, "source": self.source, "mixture": self.mixture}
        yield beam.pvalue.TaggedOutput("stats", stats)


def run_tokenize(in_dir: str, out_dir: str, tokenizer_path: str, source: str | None = None, mixture: str = "default",
                 text_field: str = "text", id_field: str = "id", max_chars: int = 1_000_000,
                 beam_args: list[str] | None = None, overwrite: bool = False, target_bytes: int = 64 << 20) -> dict:
    ds = ShardDataset(in_dir)
    for f in (text_field, id_field):
        if f not in ds.schema.names:
            raise CidermillError(f"{in_dir}: no `{f}` column to tokenize (columns: {ds.schema.names})")
    from training.tokenizer import load_tokenizer
    load_tokenizer(tokenizer_path)  # clear error before the job starts
    source = source or os.path.basename(os.path.abspath(in_dir))
    config = {"tokenizer": os.path.abspath(tokenizer_path), "source": source, "mixture": mixture,
              "text_field": text_field, "max_chars": max_chars}
    prov = make_provenance("tokens", config, [in_dir])
    with beam_job(beam_args) as p:
        res = (p | ReadShards(in_dir, columns=[id_field, text_field])
               | beam.BatchElements(min_batch_size=16, max_batch_size=256)
               | beam.ParDo(_Tokenize(tokenizer_path, source, mixture, text_field, id_field, max_chars))
               .with_outputs("stats", main="rows"))
        _ = res.rows | WriteShards(out_dir, "tokens", TOKENS, key=lambda r: r["doc_id"], provenance=prov,
                                   overwrite=overwrite, target_bytes=target_bytes)
        _ = (res.stats, p | "NoSamples" >> beam.Create([])) | WriteReport(out_dir)
    from corpus.report import read_report
    st = read_report(out_dir).stages.get("tokenize")
    return {"documents": st.kept if st else 0, "tokens": st.counters.get("tokens", 0) if st else 0}
