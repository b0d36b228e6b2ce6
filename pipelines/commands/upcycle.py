"""`cidermill upcycle`: dense checkpoint -> sparse MoE checkpoint computing the same function."""
from __future__ import annotations

HELP = "sparse-upcycle a dense checkpoint into an MoE one (experts copied from the dense MLP)"
BEAM = False


def configure(p):
    p.add_argument("--dense", required=True, help="dense checkpoint directory (model.safetensors + model_config.json)")
    p.add_argument("--experts", type=int, required=True, help="experts per MoE layer")
    p.add_argument("--every", type=int, default=2, help="make every N-th layer an MoE (default 2)")
    p.add_argument("--top-k", type=int, default=2, help="experts per token (default 2)")
    p.add_argument("--seed", type=int, default=0, help="seed of the router init")
    p.add_argument("--out", required=True, help="output checkpoint directory")


def run(args, beam_args) -> int:
    from training.checkpoint import read_model_config
    from training.upcycle import upcycle_checkpoint
    read_model_config(args.dense)
    out = upcycle_checkpoint(args.dense, args.out, args.experts, args.every, args.top_k, args.seed)
    print(f"upcycled: {out} ({args.experts} experts, top-{args.top_k}, every {args.every} layers); "
          f"train it with model: {{init_from: {out}}}")
    return 0
