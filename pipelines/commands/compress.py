"""`cidermill compress qat|ptq|astc|export|lora`: compress a trained checkpoint (training/quant/)."""
from __future__ import annotations

import json
import os

HELP = "compress a trained model: 2-bit QAT, PTQ baselines, ASTC, packed export, LoRA recovery"
BEAM = False

EXAMPLES = {
    "qat": "cidermill compress qat --checkpoint runs/tiny/checkpoints/step-00002000 --data out/tokens "
           "--out out/qat2 --steps 300 --embed-bits 4",
    "ptq": "cidermill compress ptq --checkpoint CKPT --method gptq --data out/tokens --out out/gptq2.packed",
    "astc": "cidermill compress astc --checkpoint CKPT --out out/astc --scaling row",
    "export": "cidermill compress export --qat out/qat2 --out out/qat2/model.packed",
    "lora": "cidermill compress lora --packed out/qat2/model.packed --data out/extra-tokens "
            "--out out/qat2-lora --rank 32 --alpha 16",
}
QAT_STATE, QUANT_CONFIG, PACKED = "qat.safetensors", "quant_config.json", "model.packed"


def configure(p):
    import argparse
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = "examples:\n  " + "\n  ".join(EXAMPLES.values())
    sub = p.add_subparsers(dest="compress_cmd", metavar="qat|ptq|astc|export|lora", required=True)

    def parser(name, help_):
        return sub.add_parser(name, help=help_, description=help_, epilog="example:\n  " + EXAMPLES[name],
                              formatter_class=__import__("argparse").RawDescriptionHelpFormatter)

    def grid_args(s):
        s.add_argument("--bits", type=int, default=2, help="decoder Linear bits (default 2)")
        s.add_argument("--group", type=int, default=128, help="inputs per fp16 step (default 128)")
        s.add_argument("--embed-bits", type=int, default=0, help="token embedding bits: 0 = float (default), 4")
        s.add_argument("--embed-group", type=int, default=32)
        s.add_argument("--targets", default=None,
                       help="comma-separated Linear name suffixes (default: every decoder Linear)")
        s.add_argument("--init", choices=("mse", "max"), default="mse",
                       help="clip initialisation: per-group MSE search (default) or max|W|")

    def data_args(s, required=True):
        s.add_argument("--data", required=required, help="token dataset (`cidermill tokenize` output)")
        s.add_argument("--seq", type=int, default=128, help="tokens per training window")
        s.add_argument("--batch", type=int, default=8)
        s.add_argument("--eval-permille", type=int, default=20,
                       help="documents held out for the loss printed before/after (per mille)")

    q = parser("qat", "quantisation-aware training with learnable clipping; writes the QAT state and "
                      "the packed file")
    q.add_argument("--checkpoint", required=True, help="float checkpoint directory (model.safetensors)")
    q.add_argument("--out", required=True, help="output directory")
    q.add_argument("--steps", type=int, default=300)
    q.add_argument("--lr", type=float, default=5e-4)
    q.add_argument("--clip-lr", type=float, default=5e-3)
    q.add_argument("--no-learn-clip", action="store_true", help="freeze the clip at its initialisation")
    grid_args(q)
    data_args(q)

    t = parser("ptq", "post-training quantisation on the same grids: rtn or gptq (needs --data)")
    t.add_argument("--checkpoint", required=True)
    t.add_argument("--method", choices=("rtn", "gptq"), default="rtn")
    t.add_argument("--out", required=True, help="packed file to write")
    t.add_argument("--calib-batches", type=int, default=16, help="GPTQ calibration batches")
    grid_args(t)
    data_args(t, required=False)

    a = parser("astc", "decoder weights through astcenc (6x6 blocks: 128 bits per 36 weights) + 4-bit PTQ embedding")
    a.add_argument("--checkpoint", required=True)
    a.add_argument("--out", required=True, help="directory: decoded model + astc_report.json")
    a.add_argument("--scaling", choices=("row", "global"), default="row")
    a.add_argument("--quality", choices=("fast", "medium", "thorough"), default="thorough")

    e = parser("export", "pack a QAT directory's weights: 2-bit codes four to a byte, fp16 steps")
    e.add_argument("--qat", required=True, help="directory written by `compress qat`")
    e.add_argument("--out", required=True, help="packed file to write")
    e.add_argument("--float-dtype", choices=("fp32", "bf16"), default="fp32",
                   help="dtype of the tensors left unquantised (fp32 keeps logits exact)")

    lo = parser("lora", "train a LoRA recovery adapter (peft) on a packed model, saved apart from it")
    lo.add_argument("--packed", required=True, help="packed model file (the frozen base)")
    lo.add_argument("--out", required=True, help="adapter directory")
    lo.add_argument("--rank", type=int, default=32)
    lo.add_argument("--alpha", type=int, default=16)
    lo.add_argument("--steps", type=int, default=200)
    lo.add_argument("--lr", type=float, default=1e-3)
    data_args(lo)


def _quant_config(args):
    from training.quant.fake_quant import DECODER_LINEARS, QuantConfig
    targets = tuple(t.strip() for t in args.targets.split(",") if t.strip()) if args.targets else DECODER_LINEARS
    return QuantConfig(linear_bits=args.bits, linear_group=args.group, embed_bits=args.embed_bits,
                       embed_group=args.embed_group, targets=targets, init=args.init,
                       learn_clip=not getattr(args, "no_learn_clip", False))


def _data(args):
    from training.quant.data import batches, eval_windows, token_array
    train = token_array(args.data, "train", args.eval_permille)
    held = token_array(args.data, "eval", args.eval_permille) if args.eval_permille else train
    return batches(train, args.batch, args.seq), eval_windows(held, 32, args.seq)


def _float_model(ckpt: str):
    from training.checkpoint import load_model_from_checkpoint
    return load_model_from_checkpoint(ckpt, kernels="reference").eval()


def _report(path: str) -> str:
    from training.quant.packed import size_report
    r = size_report(path)
    kinds = ", ".join(f"{k} {v['bits_per_weight']:.3f}" for k, v in sorted(r["kinds"].items()))
    return f"{path}: {r['file_bytes']:,} bytes, {r['bits_per_weight']:.3f} bits/weight overall ({kinds})"


def _export(model, qc, path: str, float_dtype=None) -> None:
    from training.quant import fake_quant, packed
    qw, sd = fake_quant.freeze(model), fake_quant.plain_state_dict(model)
    packed.save_packed(path, model.config.to_dict(), qw, {k: v for k, v in sd.items() if k not in qw},
                       qc.to_dict(), float_dtype=float_dtype)


def run_qat(args) -> int:
    from safetensors.torch import save_file

    from training.quant import evaluate, fake_quant, qat

    model = _float_model(args.checkpoint)
    qc = _quant_config(args)
    train, held = _data(args)
    before = evaluate.heldout_loss(model, held)
    fake_quant.prepare_qat(model, qc)
    start = evaluate.heldout_loss(model, held)
    qat.fit(model, train, args.steps, lr=args.lr, clip_lr=args.clip_lr, log=print)
    after = evaluate.heldout_loss(model, held)
    os.makedirs(args.out, exist_ok=True)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, os.path.join(args.out, QAT_STATE))
    with open(os.path.join(args.out, QUANT_CONFIG), "w") as f:
        json.dump(qc.to_dict(), f, indent=1)
    with open(os.path.join(args.out, "model_config.json"), "w") as f:
        json.dump(model.config.to_dict(), f, indent=1)
    _export(model, qc, os.path.join(args.out, PACKED))
    print(f"held-out loss: float {before:.4f}, quantised at start {start:.4f}, after QAT {after:.4f}")
    print(_report(os.path.join(args.out, PACKED)))
    return 0


def run_export(args) -> int:
    from safetensors.torch import load_file

    from corpus.errors import CidermillError
    from training.models import build_model, config_from_dict
    from training.quant import fake_quant

    try:
        with open(os.path.join(args.qat, "model_config.json")) as f:
            cfg = config_from_dict(json.load(f))
        with open(os.path.join(args.qat, QUANT_CONFIG)) as f:
            qc = fake_quant.QuantConfig.from_dict(json.load(f))
    except OSError as e:
        raise CidermillError(f"{args.qat}: not a `compress qat` directory ({e.strerror}: {e.filename})") from None
    model = build_model(cfg)
    fake_quant.prepare_qat(model, fake_quant.QuantConfig(**{**qc.to_dict(), "init": "max"}))
    try:
        model.load_state_dict(load_file(os.path.join(args.qat, QAT_STATE)), strict=True)
    except RuntimeError as e:
        raise CidermillError(f"{args.qat}/{QAT_STATE}: does not fit its config ({str(e).splitlines()[0]})") from None
    import torch
    _export(model, qc, args.out, torch.bfloat16 if args.float_dtype == "bf16" else None)
    print(_report(args.out))
    return 0


def run_ptq(args) -> int:
    from corpus.errors import CidermillError
    from training.quant import evaluate, packed, ptq

    model = _float_model(args.checkpoint)
    qc = _quant_config(args)
    held = None
    if args.method == "gptq":
        if not args.data:
            raise CidermillError("--method gptq needs --data (calibration tokens)")
        train, held = _data(args)
        calib = [x for (x, _), _ in zip(train, range(args.calib_batches))]
        qw = ptq.gptq(model, qc, calib)
    else:
        qw = ptq.rtn(model, qc)
        if args.data:
            held = _data(args)[1]
    sd = model.state_dict()
    packed.save_packed(args.out, model.config.to_dict(), qw, {k: v for k, v in sd.items() if k not in qw},
                       qc.to_dict())
    if held is not None:
        q, _ = packed.load_packed(args.out)
        print(f"held-out loss: float {evaluate.heldout_loss(model, held):.4f}, "
              f"{args.method} {evaluate.heldout_loss(q.eval(), held):.4f}")
    print(_report(args.out))
    return 0


def run_astc(args) -> int:
    from training.checkpoint import save_model_weights
    from training.quant import astc, fake_quant, ptq

    astc.astcenc()  # refuse before any work when the encoder is missing
    model = _float_model(args.checkpoint)
    names = [f"{n}.weight" for n in fake_quant.target_modules(model, fake_quant.DECODER_LINEARS)]
    per_layer = astc.compress_model(model, names, args.out, args.scaling, f"-{args.quality}")
    emb = ptq.rtn_embedding(model, fake_quant.QuantConfig(embed_bits=4))
    fake_quant.load_quantized(model, emb)
    save_model_weights(model, args.out)
    lin_bytes = sum(i["astc_bytes"] + i["scale_bytes"] for i in per_layer.values())
    lin_w = sum(i["weights"] for i in per_layer.values())
    with open(os.path.join(args.out, "astc_report.json"), "w") as f:
        json.dump({"scaling": args.scaling, "layers": per_layer, "bits_per_weight": 8 * lin_bytes / lin_w}, f,
                  indent=1)
    for n, i in per_layer.items():
        print(f"{n:<32} {i['bits_per_weight']:.3f} bits/weight  relative error {i['rel_error']:.3f}")
    print(f"decoder weights: {8 * lin_bytes / lin_w:.3f} bits/weight ({args.scaling} scaling); "
          f"embedding 4-bit PTQ; decoded model in {args.out}")
    return 0


def run_lora(args) -> int:
    from training.quant import evaluate, lora, packed, qat

    model, _ = packed.load_packed(args.packed)
    train, held = _data(args)
    before = evaluate.heldout_loss(model.eval(), held)
    model = lora.add_lora(model, rank=args.rank, alpha=args.alpha)
    qat.fit(model, train, args.steps, lr=args.lr, log=print)
    after = evaluate.heldout_loss(model, held)
    lora.save_adapter(model, args.out)
    size = os.path.getsize(os.path.join(args.out, "adapter_model.safetensors"))
    print(f"held-out loss: quantised base {before:.4f}, with adapter {after:.4f}; adapter {size:,} bytes "
          f"in {args.out}")
    return 0


def run(args, beam_args) -> int:
    return {"qat": run_qat, "ptq": run_ptq, "astc": run_astc, "export": run_export,
            "lora": run_lora}[args.compress_cmd](args)
