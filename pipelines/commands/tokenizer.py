"""`cidermill tokenizer train|extend`: byte-level BPE on a corpus, and vocabulary extension."""
from __future__ import annotations

HELP = "train a byte-level BPE tokenizer on a documents dataset, or extend one with tokens from new data"
BEAM = False


def configure(p):
    sub = p.add_subparsers(dest="tok_cmd", metavar="train|extend", required=True)
    t = sub.add_parser("train", help="train a byte-level BPE (digits split, byte fallback)")
    t.add_argument("--in", dest="inp", required=True, nargs="+", help="documents dataset(s) with a `text` column")
    t.add_argument("--vocab", type=int, required=True, help="vocabulary size")
    t.add_argument("--out", required=True, help="output directory (tokenizer.json + meta.json)")
    t.add_argument("--limit", type=int, default=None, help="train on at most this many documents")
    e = sub.add_parser("extend", help="add N tokens learned on new data; every old id is kept")
    e.add_argument("--base", required=True, help="tokenizer directory to extend")
    e.add_argument("--in", dest="inp", required=True, nargs="+", help="documents dataset(s) of the new data")
    e.add_argument("--add", type=int, required=True, help="number of tokens to add")
    e.add_argument("--out", required=True, help="output directory for the extended tokenizer")
    e.add_argument("--model", help="optional: a model checkpoint dir to grow to the new vocabulary")
    e.add_argument("--model-out", help="where to write the grown checkpoint (with --model)")


def _texts(dirs, limit=None):
    import itertools
    from training.tokenizer import iter_texts
    it = itertools.chain.from_iterable(iter_texts(d) for d in dirs)
    return itertools.islice(it, limit) if limit else it


def run(args, beam_args) -> int:
    import json
    import os
    from corpus.errors import CidermillError
    from training.tokenizer import extend_tokenizer, load_tokenizer, save_tokenizer, train_tokenizer

    for d in args.inp:
        if not os.path.isdir(d):
            raise CidermillError(f"{d}: no such dataset directory")
    if args.tok_cmd == "train":
        tok = train_tokenizer(_texts(args.inp, args.limit), args.vocab, show_progress=True)
        path = save_tokenizer(tok, args.out, {"trained_on": [os.path.abspath(d) for d in args.inp]})
        print(f"tokenizer: {path} ({tok.get_vocab_size()} tokens)")
        return 0
    base = load_tokenizer(args.base)
    ext, new = extend_tokenizer(base, _texts(args.inp), args.add, show_progress=True)
    path = save_tokenizer(ext, args.out, {"extended_from": os.path.abspath(args.base), "added": len(new),
                                          "base_vocab_size": base.get_vocab_size()})
    with open(os.path.join(args.out, "added_tokens.json"), "w") as f:
        json.dump(new, f, ensure_ascii=False)
    print(f"tokenizer: {path} ({base.get_vocab_size()} -> {ext.get_vocab_size()} tokens, {len(new)} added)")
    if args.model:
        if not args.model_out:
            raise CidermillError("--model needs --model-out")
        from training.upcycle import extend_checkpoint
        extend_checkpoint(args.model, args.model_out, base, new)
        print(f"model: {args.model_out} (embedding grown, new rows = mean of old pieces)")
    return 0
