"""`cidermill train-quality`: train the fastText quality classifier (word uni+bigrams, DCLM-style)."""
from __future__ import annotations

HELP = "train the fastText quality classifier from positive and negative text files"
DESCRIPTION = ("Train a fastText classifier on word unigrams + bigrams (DCLM-style): label hq for --positive "
               "documents, lq for --negative ones. Files: .jsonl (a \"text\" field per line) or plain text "
               "(documents separated by form feeds \\f, else one document per line). An --out ending in .ftz is "
               "quantized (small). The text pipeline's quality stage loads it (config: quality.model).")
BEAM = False


def configure(p) -> None:
    p.add_argument("--positive", nargs="+", required=True, metavar="FILE", help="high-quality documents")
    p.add_argument("--negative", nargs="+", required=True, metavar="FILE", help="low-quality documents")
    p.add_argument("--out", required=True, metavar="MODEL", help="output model (.ftz: quantized, or .bin)")
    p.add_argument("--epoch", type=int, default=5)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--bucket", type=int, default=200_000, help="hash buckets for bigrams (model size)")
    p.add_argument("--word-ngrams", type=int, default=2)
    p.add_argument("--min-count", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="1 keeps training deterministic")


def run(args, beam_args) -> int:
    import os
    import time

    from filters.quality_model import read_texts, train_quality_model

    pos = [t for f in args.positive for t in read_texts(f)]
    neg = [t for f in args.negative for t in read_texts(f)]
    print(f"train-quality: {len(pos)} positive, {len(neg)} negative documents", flush=True)
    t0 = time.time()
    out = train_quality_model(pos, neg, args.out, epoch=args.epoch, lr=args.lr, dim=args.dim, bucket=args.bucket,
                              word_ngrams=args.word_ngrams, min_count=args.min_count, seed=args.seed,
                              threads=args.threads)
    print(f"train-quality: wrote {out} ({os.path.getsize(out) / 1e6:.2f} MB) in {time.time() - t0:.1f}s")
    return 0
