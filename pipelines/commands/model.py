"""`cidermill model info PRESET` / `cidermill model list`: sizes of the model presets (no weights)."""
from __future__ import annotations

import json

HELP = ("model presets: info PRESET (parameters, KV bytes per token, sync points; tokens per image for "
        "vision encoders), list; info --checkpoint X (bits per weight, file size)")
BEAM = False


def configure(p):
    sub = p.add_subparsers(dest="model_cmd", metavar="info|list", required=True)
    i = sub.add_parser("info", help="total and active parameters, KV cache bytes per token, "
                                    "synchronisation points per forward (built on the meta device: instant)")
    i.add_argument("preset", nargs="?", help="preset name (see `cidermill model list`)")
    i.add_argument("--checkpoint", help="a checkpoint directory or packed file: bits per weight per tensor "
                                        "kind, file size, KV bytes per token (e.g. --checkpoint out/qat2/model.packed)")
    i.add_argument("--json", action="store_true", help="print the figures and the config as JSON")
    sub.add_parser("list", help="preset names with their architecture and size")


def _n(x: int) -> str:
    return f"{x:,}" + (f" ({x / 1e9:.2f}B)" if x >= 1e9 else f" ({x / 1e6:.1f}M)")


def _bytes(x: float) -> str:
    return f"{x / 2**20:.1f} MiB" if x >= 2**20 else f"{x:,.0f} B"


def _print_info(info: dict) -> None:
    c = info["config"]
    kv, kv8 = info["kv_bf16"], info["kv_int8"]
    print(f"preset        {info['preset']}  (arch {info['arch']})")
    shape = (f"{c['n_layers']} layers x d_model {c['d_model']}, {c['n_heads']} query / "
             f"{c['n_kv_heads']} KV heads, vocab {c['vocab_size']:,}, context {c['max_seq_len']:,}")
    if info["arch"] == "ptmoe":
        shape = f"{c['n_tracks']} tracks x " + shape + f", track blocks of D={c['track_block_depth']}"
    if info["arch"] == "ondevice":
        shape += f", blocks {c['block1_layers']} + {c['n_layers'] - c['block1_layers']}"
    print(f"shape         {shape}")
    print(f"parameters    total {_n(info['params_total'])}")
    moe = f" (top-{c['top_k']} of {c['n_experts']} experts)" if c["moe_every"] else ""
    print(f"              active per token {_n(info['params_active'])}{moe}")
    line = f"KV cache      {kv['per_token']:,} B/token bf16, {kv8['per_token']:,} B/token int8"
    line += f"  ({kv['layers_full']} of {kv['layers_with_cache']} cached layers grow with the context)"
    print(line)
    if kv["layers_window"]:
        print(f"              + {_bytes(kv['fixed'])} bf16 fixed for {kv['layers_window']} sliding-window "
              f"ring buffers of {c['sliding_window']:,} slots")
    if "kv_bf16_dense_twin" in info:
        twin = info["kv_bf16_dense_twin"]["per_token"]
        print(f"              dense twin {twin:,} B/token: this model keeps "
              f"{kv['per_token'] / twin:.1%} ({1 - kv['per_token'] / twin:.1%} less)")
    sp, tp = info["sync_points"], info["tensor_parallel_sync_points"]
    if info["arch"] == "ptmoe":
        print(f"sync points   {sp} per forward (L/D = {c['n_layers']}/{c['track_block_depth']}) vs "
              f"2L = {tp} tensor-parallel ({1 - sp / tp:.1%} fewer)")
    else:
        print(f"sync points   2L = {tp} per forward under tensor parallelism (no track parallelism)")


def _print_vision(info: dict) -> None:
    c = info["config"]
    print(f"preset        {info['preset']}  (image encoder: {info['kind']})")
    print(f"shape         {c['depth']} blocks x width {c['width']}, {c['heads']} heads, SwiGLU {c['mlp_hidden']}; "
          f"{c['image_size']} px images in {c['patch_size']} px patches")
    if info["windows"] > 1:
        print(f"windows       {info['windows']} of {c['window']}x{c['window']} patches; global blocks "
              f"{', '.join(map(str, c['global_blocks'])) or 'none'}; {c['registers']} registers per window")
    print(f"parameters    total {_n(info['params_total'])}")
    print(f"tokens/image  {info['tokens_per_image']:,} in the encoder ({info['patch_tokens']:,} patches + "
          f"{info['register_tokens']} registers); {info['lm_tokens_per_image']} in the LM after the adapter (default)")


def run(args, beam_args) -> int:
    from training.models import get_preset, list_presets
    from training.models.info import describe
    from training.vision.config import VISION_PRESETS, get_vision_preset
    from training.vision.info import describe_vision

    if args.model_cmd == "list":
        for name in list_presets():
            info = describe(get_preset(name))
            print(f"{name:14s} {info['arch']:9s} total {_n(info['params_total']):>24s}  "
                  f"active {_n(info['params_active'])}")
        for name in VISION_PRESETS:
            info = describe_vision(get_vision_preset(name))
            print(f"{name:14s} {'vision':9s} total {_n(info['params_total']):>24s}  "
                  f"{info['tokens_per_image']:,} tokens per image")
        return 0
    if args.preset in VISION_PRESETS:
        info = describe_vision(get_vision_preset(args.preset))
        print(json.dumps(info, indent=1)) if args.json else _print_vision(info)
        return 0
    if args.checkpoint:
        from pipelines.commands.model_size import print_checkpoint_info
        return print_checkpoint_info(args.checkpoint, args.json)
    if not args.preset:
        from corpus.errors import CidermillError
        raise CidermillError("model info needs a PRESET or --checkpoint X")
    info = describe(get_preset(args.preset))
    if args.json:
        print(json.dumps(info, indent=1))
    else:
        _print_info(info)
    return 0
