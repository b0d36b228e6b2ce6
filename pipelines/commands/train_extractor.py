"""`cidermill train-extractor`: rebuild the main-content block classifier that crawl/extract.py ships."""
from __future__ import annotations

HELP = "train the main-content block model used by crawl extraction"
DESCRIPTION = ("Train the gradient-boosted block classifier of the HTML extractor on pages with known main "
               "content: a WCXB-style folder (html/NNNN.html, ground-truth/NNNN.json with "
               "ground_truth.main_content, metadata-dev.json with page type and domain). Only the tuning part "
               "of a fixed split by domain trains (the rest is for checking: bench/extract_f1.py). The model "
               "is a small JSON file; the crawler loads crawl/extract_model.json.\n\n"
               "example: cidermill train-extractor --data /data/wcxb-dev --out crawl/extract_model.json\n"
               "example: cidermill train-extractor --data /data/wcxb-dev --out /tmp/m.json --limit 100 --folds 0 --trees 20")
BEAM = False


def configure(p) -> None:
    p.add_argument("--data", required=True, metavar="DIR", help="WCXB-style folder with html/, ground-truth/, "
                   "metadata-dev.json")
    p.add_argument("--out", required=True, metavar="FILE", help="model JSON to write (crawl/extract_model.json "
                   "replaces the shipped one)")
    p.add_argument("--trees", type=int, default=60)
    p.add_argument("--depth", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=int, default=None, help="use only the first N tuning pages (a quick look)")
    p.add_argument("--folds", "--threshold-folds", type=int, default=5, metavar="K",
                   help="cross-validation folds by domain: the cut is picked on out-of-fold scores (K more fits; "
                        "the second stage, if any, learns from them); 0 = cut picked on the training pages")
    p.add_argument("--stage2", action="store_true", help="add the second (context) stage: rescore blocks from "
                   "their neighbours' out-of-fold scores (off by default: it did not help in cross-validation)")
    p.add_argument("--vote", choices=("full", "fast"), default="full",
                   help="trafilatura vote the features use: full (with its fallback extractors) or fast")
    p.add_argument("--bag", type=int, default=1, metavar="K",
                   help="average K fits with row-subsample seeds SEED*K .. SEED*K+K-1 into one ensemble (K x the "
                        "trees, and K x the model's time per page)")
    p.add_argument("--labels", choices=("hard", "soft", "mix"), default="hard",
                   help="block labels: hard (main content or not), soft (share of the block's words in the "
                        "truth), mix (hard for blocks of 8+ words, soft for shorter ones)")
    p.add_argument("--pairwise", type=float, default=0.0, metavar="LAMBDA",
                   help="add LAMBDA x a within-page pairwise (RankNet) term to the log-loss; 0 = log-loss only")


def run(args, beam_args) -> int:
    import os

    from corpus.errors import CidermillError
    from crawl.extract_train import train_extractor

    if not os.path.isdir(args.data):
        raise CidermillError(f"--data {args.data}: not a folder")
    try:
        train_extractor(args.data, args.out, trees=args.trees, depth=args.depth, seed=args.seed, limit=args.limit,
                        folds=args.folds, stage2=args.stage2 and args.folds >= 2,
                        vote_fast=args.vote == "fast", bag=args.bag, labels=args.labels,
                        **({"objective": "logloss+pairwise", "pairwise": args.pairwise} if args.pairwise > 0 else {}),
                        log=lambda m: print(m, flush=True))
    except (FileNotFoundError, ValueError) as e:
        raise CidermillError(str(e)) from None
    return 0
