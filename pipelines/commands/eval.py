"""`cidermill eval --tasks`: verifiable held-out tasks for a chat model."""
from __future__ import annotations

import argparse

HELP = "evaluate a chat model on held-out verifiable tasks: exact QA, schema answers, tool tasks"
DESCRIPTION = HELP + """

examples:
  cidermill eval --checkpoint out/sft --data out/sft-data --tasks exact,schema,tool
  cidermill eval --checkpoint out/rl --data out/sft-data --tasks exact --limit 50 --json

Greedy and unconstrained: `schema_parse_rate` is the share of outputs that are JSON valid under
the requested schema (constrained decoding would make it 100%); tool tasks run the model's calls
on the tool platform and score the final answer. Rows come from the dataset's held-out split."""
BEAM = False


def configure(p):
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("--checkpoint", required=True, help="run directory or checkpoint (SFT or RL)")
    p.add_argument("--data", required=True, help="conversations dataset (`cidermill sft data`)")
    p.add_argument("--tasks", default="exact,schema,tool", help="comma list of exact, schema, tool")
    p.add_argument("--tokenizer", help="chat tokenizer (default: the run's)")
    p.add_argument("--split", default="heldout", help="dataset split to score (default heldout)")
    p.add_argument("--limit", type=int, default=None, help="at most this many rows per task")
    p.add_argument("--max-new-tokens", type=int, default=48)
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object")


def run(args, beam_args) -> int:
    import json
    import os

    from corpus.errors import ConfigError
    from training.checkpoint import checkpoint_dir, load_model_from_checkpoint
    from training.posttrain.chat import END
    from training.posttrain.data import read_rows
    from training.posttrain.evaluate import TASKS, evaluate
    from training.tokenizer import load_tokenizer
    tasks = tuple(t.strip() for t in args.tasks.split(",") if t.strip())
    bad = [t for t in tasks if t not in TASKS]
    if bad or not tasks:
        raise ConfigError(f"--tasks: unknown {', '.join(bad) or '(none given)'} (known: {', '.join(TASKS)})")
    tok_path = args.tokenizer or os.path.join(args.checkpoint, "tokenizer")
    tok = load_tokenizer(tok_path)
    if tok.token_to_id(END) is None:
        raise ConfigError(f"{tok_path}: tokenizer has no chat markers (give the SFT/RL run's tokenizer)")
    model = load_model_from_checkpoint(checkpoint_dir(args.checkpoint))
    rows = read_rows(args.data, split=args.split)
    if args.limit:
        per: dict = {}
        rows = [r for r in rows if per.setdefault(r["task"]["type"], []).append(r) or len(per[r["task"]["type"]]) <= args.limit]
    res = evaluate(model, tok, rows, tasks, args.max_new_tokens)
    if args.json:
        print(json.dumps(res, sort_keys=True))
    else:
        for k, v in res.items():
            print(f"{k:20s} {v:.3f}" if isinstance(v, float) else f"{k:20s} {v}")
    return 0
