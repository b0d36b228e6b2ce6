"""`cidermill train-clip`: contrastive training of an open_clip model on pair shards."""
from __future__ import annotations

import argparse

HELP = "train a small open_clip model contrastively on image-text pair shards"
DESCRIPTION = ("Train an open_clip model (default: the registered cidermill-tiny-clip config, random init: no "
               "pretrained weights are downloaded) on PAIRS datasets (synthetic captions from `cidermill synth "
               "captions`, or the kept pairs of `cidermill images`). A hash of the pair id holds out a split; "
               "the command reports retrieval recall@1/@5 (image->text and text->image) and the ROC-AUC of matched "
               "vs shuffled pairs on it, before and after training, and stores a calibrated CLIP-score threshold "
               "in the checkpoint (safetensors) for `cidermill images --clip-threshold auto`. With --vision PRESET the "
               "image tower is a training/vision encoder (e.g. ViTDet with Register-Window). Examples: "
               "`cidermill train-clip --pairs out/demo/synth/captions --out clip.safetensors`; "
               "`cidermill train-clip --pairs out/demo/synth/captions out/demo/synth/charts --vision vitdet-tiny "
               "--out vitdet.safetensors`.")
BEAM = False


def configure(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--pairs", nargs="+", metavar="DIR", help="PAIRS dataset directories to train on")
    src.add_argument("--toy", type=int, metavar="N", help="train on N generated colored-shape pairs instead")
    p.add_argument("--out", required=True, metavar="CKPT", help="output checkpoint (.safetensors)")
    p.add_argument("--model", default=None, help="open_clip architecture (default cidermill-tiny-clip)")
    p.add_argument("--vision", default=None, metavar="PRESET",
                   help="image tower from training/vision instead of open_clip's: vitdet-tiny (ViTDet + "
                        "Register-Window), vit-tiny (plain ViT), vitdet-l, vit-g (see `cidermill model list`)")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--heldout", type=float, default=0.1, help="share of pairs held out for evaluation")
    p.add_argument("--max-rows", type=int, default=10000, help="read at most this many pairs (memory)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads")


def run(args: argparse.Namespace, beam_args: list[str]) -> int:
    import os
    import tempfile

    from corpus.errors import ConfigError
    from training.clip.model import DEFAULT_MODEL
    from training.clip.train import train_clip

    if not args.out.endswith(".safetensors"):
        raise ConfigError(f"--out {args.out}: checkpoints are written as .safetensors")
    if args.steps < 1 or args.batch_size < 2 or not 0 < args.heldout < 1:
        raise ConfigError("need --steps >= 1, --batch-size >= 2 and 0 < --heldout < 1")
    tmp = None
    dirs = args.pairs
    if args.toy:
        from training.clip.toy_pairs import write_toy_pairs
        tmp = tempfile.TemporaryDirectory(prefix="cidermill-toy-")
        dirs = [write_toy_pairs(os.path.join(tmp.name, "pairs"), args.toy, seed=args.seed)]
    try:
        train_clip(dirs, args.out, steps=args.steps, seed=args.seed, model_name=args.model or DEFAULT_MODEL,
                   batch_size=args.batch_size, lr=args.lr, warmup=args.warmup, heldout=args.heldout,
                   max_rows=args.max_rows, threads=args.threads, log=lambda m: print(m, flush=True),
                   vision=args.vision)
    finally:
        if tmp is not None:
            tmp.cleanup()
    print(f"train-clip: wrote {args.out} ({os.path.getsize(args.out) / 1e6:.1f} MB) and {args.out}.metrics.json")
    return 0
