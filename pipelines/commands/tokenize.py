"""`cidermill tokenize`: documents dataset -> token shards (Beam)."""
from __future__ import annotations

HELP = "tokenize a documents dataset into token shards (uint32 ids per document, EOS appended)"
BEAM = True
WORKER_MODULES = ("pipelines.tokenize_pipeline",)  # imported once for every local Dask worker (runners/dask_fork.py)


def configure(p):
    p.add_argument("--in", dest="inp", required=True, help="documents dataset (id, text)")
    p.add_argument("--out", required=True, help="output token dataset")
    p.add_argument("--tokenizer", required=True, help="tokenizer directory (from `cidermill tokenizer train`)")
    p.add_argument("--source", help="source tag stored on every row (default: input dir name)")
    p.add_argument("--mixture", default="default", help="mixture tag stored on every row")
    p.add_argument("--text-field", default="text")
    p.add_argument("--overwrite", action="store_true", help="replace a different dataset at --out")


def run(args, beam_args) -> int:
    from pipelines.tokenize_pipeline import run_tokenize
    s = run_tokenize(args.inp, args.out, args.tokenizer, source=args.source, mixture=args.mixture,
                     text_field=args.text_field, beam_args=beam_args, overwrite=args.overwrite)
    print(f"tokens: {args.out} ({s['documents']} documents, {s['tokens']} tokens)")
    return 0
