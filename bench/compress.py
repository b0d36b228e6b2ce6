"""Compression of a trained `tiny` model: held-out loss, bits per weight and file size per method.

Rows (all on the same held-out windows of Debian documentation, see bench/compress_data.py):
  float            the trained model (bf16 safetensors for its size)
  2-bit RTN        round to nearest, steps from max|W| per group of 128
  2-bit GPTQ       error-compensating PTQ, same grid and steps
  2-bit QAT        learnable clipping, MSE-initialised, float embedding
  QAT + LoRA       rank-32 (alpha 16) recovery adapter trained on the "extra" split
  + 4-bit emb      QAT with the (tied) embedding 4-bit, jointly, then LoRA
  + 8-bit KV       the same, decoded token by token through the int8 KV cache
  ASTC             decoder weights through astcenc 6x6 (per-row scaling) + 4-bit PTQ embedding
and the ablation: QAT with the clip frozen at its MSE init, QAT with the clip learned from 1.0.

Bits per weight and file sizes come from the files written (packed file, adapter, .astc files).
Every loss is mean cross-entropy in nats per token on the held-out split. Rows are cached as JSON
under SCRATCH/rows (delete them to recompute); the float model is trained once (compress_data.py).

    python bench/compress.py [--scratch /work/scratch/compress] [--qat-steps 250] [--lora-steps 150]
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.compress_data import SEQ, float_model, tokens  # noqa: E402
from bench.results import save_result, start_conditions  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scratch", default="/work/scratch/compress")
    ap.add_argument("--qat-steps", type=int, default=250)
    ap.add_argument("--lora-steps", type=int, default=150)
    ap.add_argument("--eval-windows", type=int, default=96)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    start = start_conditions()
    t_all = time.process_time()

    from safetensors.torch import save_file

    from training.quant import astc, evaluate, fake_quant, lora, packed, ptq, qat
    from training.quant.data import batches, eval_windows
    from training.quant.fake_quant import QuantConfig

    data = tokens(a.scratch)
    base = float_model(a.scratch).eval()
    cfg = base.config
    held = eval_windows(data["heldout"], a.eval_windows, SEQ)
    rows_dir = os.path.join(a.scratch, "rows")
    files = os.path.join(a.scratch, "files")
    os.makedirs(rows_dir, exist_ok=True)
    os.makedirs(files, exist_ok=True)

    def row(key: str, fn):
        path = os.path.join(rows_dir, f"{key}.json")
        if os.path.exists(path):
            with open(path) as f:
                return json.load(f)
        t = time.process_time()
        r = fn()
        r["cpu_s"] = round(time.process_time() - t, 1)
        with open(path, "w") as f:
            json.dump(r, f, indent=1)
        print(f"  {key}: loss {r['loss']:.4f}  ({r['cpu_s']} CPU-s)", flush=True)
        return r

    def export(name: str, model_or_q, qc: QuantConfig, src_model) -> tuple[str, dict]:
        """Packed file from a QAT model or from PTQ codes; returns (path, size report)."""
        if isinstance(model_or_q, dict):
            qw, sd = model_or_q, src_model.state_dict()
        else:
            qw, sd = fake_quant.freeze(model_or_q), fake_quant.plain_state_dict(model_or_q)
        path = os.path.join(files, f"{name}.packed")
        packed.save_packed(path, cfg.to_dict(), qw, {k: v for k, v in sd.items() if k not in qw}, qc.to_dict(),
                           float_dtype=torch.bfloat16)
        return path, packed.size_report(path)

    def size_fields(rep: dict, extra_bytes: int = 0) -> dict:
        return {"file_bytes": rep["file_bytes"] + extra_bytes,
                "bpw_total": 8 * (rep["file_bytes"] + extra_bytes) / rep["weights"],
                "bpw_linear": rep["kinds"]["linear"]["bits_per_weight"],
                "bpw_embedding": rep["kinds"]["embedding"]["bits_per_weight"]}

    def loss_of_packed(path: str) -> float:
        m, _ = packed.load_packed(path)
        return evaluate.heldout_loss(m.eval(), held)

    def qat_model(qc: QuantConfig, seed: int = 1):
        m = copy.deepcopy(base)
        fake_quant.prepare_qat(m, qc)
        fit = qat.fit(m, batches(data["train"], 8, SEQ, seed=seed), a.qat_steps)
        return m, fit

    def with_lora(path: str):
        m, _ = packed.load_packed(path)
        m = lora.add_lora(m, rank=32, alpha=16)
        fit = lora_fit(m)
        ad = os.path.join(files, os.path.basename(path).replace(".packed", ".lora"))
        lora.save_adapter(m, ad)
        ad_bytes = os.path.getsize(os.path.join(ad, "adapter_model.safetensors"))
        return m.eval(), fit, ad_bytes

    def lora_fit(m):
        return qat.fit(m, batches(data["extra"], 8, SEQ, seed=2), a.lora_steps, lr=1e-3)

    qc2 = QuantConfig(linear_bits=2, linear_group=128)
    rows: dict[str, dict] = {}

    def r_float():
        path = os.path.join(files, "float-bf16.safetensors")
        save_file({k: v.to(torch.bfloat16).contiguous() for k, v in base.state_dict().items()}, path)
        n = base.num_parameters()
        return {"loss": evaluate.heldout_loss(base, held), "file_bytes": os.path.getsize(path),
                "bpw_total": 8 * os.path.getsize(path) / n, "bpw_linear": 16.0, "bpw_embedding": 16.0}
    rows["float"] = row("float", r_float)

    def r_rtn():
        qc = QuantConfig(**{**qc2.to_dict(), "init": "max"})
        path, rep = export("rtn2", ptq.rtn(base, qc), qc, base)
        return {"loss": loss_of_packed(path), **size_fields(rep)}
    rows["rtn"] = row("rtn", r_rtn)

    def r_gptq():
        qc = QuantConfig(**{**qc2.to_dict(), "init": "max"})
        calib = [x for x, _ in zip((x for x, _ in batches(data["train"], 8, SEQ, seed=3)), range(16))]
        path, rep = export("gptq2", ptq.gptq(base, qc, calib), qc, base)
        return {"loss": loss_of_packed(path), **size_fields(rep)}
    rows["gptq"] = row("gptq", r_gptq)

    def r_qat():
        m, fit = qat_model(qc2)
        path, rep = export("qat2", m, qc2, None)
        return {"loss": loss_of_packed(path), "qat_loss": evaluate.heldout_loss(m.eval(), held),
                "fit": fit, **size_fields(rep)}
    rows["qat"] = row("qat", r_qat)

    def r_qat_lora():
        path = os.path.join(files, "qat2.packed")
        m, fit, ad_bytes = with_lora(path)
        return {"loss": evaluate.heldout_loss(m, held), "fit": fit, "adapter_bytes": ad_bytes,
                **size_fields(packed.size_report(path), ad_bytes)}
    rows["qat_lora"] = row("qat_lora", r_qat_lora)

    qce = QuantConfig(linear_bits=2, linear_group=128, embed_bits=4, embed_group=32)

    def r_emb4():
        m, fit = qat_model(qce)
        path, rep = export("qat2-emb4", m, qce, None)
        qat_only = loss_of_packed(path)
        ml, lfit, ad_bytes = with_lora(path)
        return {"loss": evaluate.heldout_loss(ml, held), "loss_before_lora": qat_only, "fit": fit,
                "lora_fit": lfit, "adapter_bytes": ad_bytes, **size_fields(rep, ad_bytes)}
    rows["emb4"] = row("emb4", r_emb4)

    def r_kv8():
        path = os.path.join(files, "qat2-emb4.packed")
        m, _ = packed.load_packed(path)
        m = lora.load_adapter(m, path.replace(".packed", ".lora")).eval()
        kv_bf = evaluate.cached_loss(m, held, kv_int8=False)
        kv8 = evaluate.cached_loss(m, held, kv_int8=True)
        from training.models.info import kv_bytes
        return {"loss": kv8, "loss_float_kv_cached": kv_bf,
                "kv_bytes_per_token_int8": kv_bytes(cfg, int8=True)["per_token"],
                "kv_bytes_per_token_bf16": kv_bytes(cfg)["per_token"],
                **{k: v for k, v in rows["emb4"].items() if k.startswith(("file_bytes", "bpw"))}}
    rows["kv8"] = row("kv8", r_kv8)

    def r_astc():
        m = copy.deepcopy(base)
        names = [f"{n}.weight" for n in fake_quant.target_modules(m, qc2.targets)]
        per_layer = astc.compress_model(m, names, os.path.join(files, "astc"), scaling="row")
        emb = ptq.rtn_embedding(base, QuantConfig(embed_bits=4, embed_group=32))
        fake_quant.load_quantized(m, emb)
        # embedding bytes as the packed format stores them (codes two a byte + fp16 steps)
        q = emb["tok_embeddings.weight"]
        emb_bytes = q.codes.numel() // 2 + 2 * q.step.numel()
        lin_bytes = sum(i["astc_bytes"] + i["scale_bytes"] for i in per_layer.values())
        lin_w = sum(i["weights"] for i in per_layer.values())
        other_bytes = 4 * sum(p.numel() for n, p in m.named_parameters() if n not in names and "tok_emb" not in n)
        total = lin_bytes + emb_bytes + other_bytes
        g = astc.compress_model(copy.deepcopy(base), names[:4], os.path.join(files, "astc"), scaling="global")
        return {"loss": evaluate.heldout_loss(m, held), "file_bytes": total,
                "bpw_total": 8 * total / m.num_parameters(), "bpw_linear": 8 * lin_bytes / lin_w,
                "bpw_linear_astc_only": 8 * sum(i["astc_bytes"] for i in per_layer.values()) / lin_w,
                "bpw_embedding": 8 * emb_bytes / q.codes.numel(), "per_layer": per_layer,
                "global_scaling_first_layers": g}
    rows["astc"] = row("astc", r_astc)

    def r_abl_noclip():
        qc = QuantConfig(**{**qc2.to_dict(), "learn_clip": False})
        m, fit = qat_model(qc)
        path, rep = export("qat2-fixedclip", m, qc, None)
        return {"loss": loss_of_packed(path), "fit": fit, **size_fields(rep)}
    rows["abl_fixed_clip"] = row("abl_fixed_clip", r_abl_noclip)

    def r_abl_noinit():
        qc = QuantConfig(**{**qc2.to_dict(), "init": "max"})
        m, fit = qat_model(qc)
        path, rep = export("qat2-maxinit", m, qc, None)
        return {"loss": loss_of_packed(path), "fit": fit, **size_fields(rep)}
    rows["abl_max_init"] = row("abl_max_init", r_abl_noinit)

    def r_rtn_lora():  # how much an adapter recovers when there is a large gap to recover
        path = os.path.join(files, "rtn2.packed")
        m, fit, ad_bytes = with_lora(path)
        return {"loss": evaluate.heldout_loss(m, held), "fit": fit, "adapter_bytes": ad_bytes,
                **size_fields(packed.size_report(path), ad_bytes)}
    rows["rtn_lora"] = row("rtn_lora", r_rtn_lora)

    labels = [("float", "float (bf16 file)"), ("rtn", "2-bit RTN"), ("gptq", "2-bit GPTQ"),
              ("qat", "2-bit QAT (learned clip, MSE init)"), ("qat_lora", "QAT + LoRA r32"),
              ("emb4", "+ 4-bit embedding (QAT) + LoRA"), ("kv8", "+ 8-bit KV cache"),
              ("astc", "ASTC 6x6 + 4-bit PTQ embedding"),
              ("abl_fixed_clip", "ablation: QAT, clip frozen at MSE init"),
              ("abl_max_init", "ablation: QAT, clip learned from 1.0"),
              ("rtn_lora", "2-bit RTN + LoRA r32 (recovery check)")]
    f = rows["float"]["loss"]
    n_weights = base.num_parameters()
    print(f"\n{'method':<40} {'loss':>7} {'ppl':>7} {'gap':>7} {'bpw lin':>8} {'bpw emb':>8} "
          f"{'bpw all':>8} {'model B':>10} {'adapter B':>10}")
    for key, label in labels:
        r = rows[key]
        adapter = r.get("adapter_bytes", 0)
        if key == "kv8":
            adapter = rows["emb4"]["adapter_bytes"]
        r["model_bytes"] = r["file_bytes"] - adapter  # LoRA rows' file_bytes include the adapter
        r["bpw_model"] = 8 * r["model_bytes"] / n_weights
        print(f"{label:<40} {r['loss']:7.4f} {evaluate.perplexity(r['loss']):7.2f} {r['loss'] - f:+7.4f} "
              f"{r['bpw_linear']:8.3f} {r['bpw_embedding']:8.3f} {r['bpw_model']:8.3f} {r['model_bytes']:10,} "
              f"{adapter:10,}")
    gap = {k: rows[k]["loss"] - f for k in rows}
    qat_closes = 1 - gap["qat"] / gap["rtn"] if gap["rtn"] > 0 else None
    lora_closes = 1 - gap["qat_lora"] / gap["qat"] if gap["qat"] > 0 else None
    def pct(x):
        return "n/a" if x is None else f"{x:.0%}"
    print(f"\nQAT closes {pct(qat_closes)} of RTN's gap to float (expected >= 50%)")
    print(f"LoRA closes {pct(lora_closes)} of QAT's remaining gap (expected >= 50%)")
    rtn_lora_closes = 1 - gap["rtn_lora"] / gap["rtn"] if gap["rtn"] > 0 else None
    print(f"LoRA on the RTN base closes {pct(rtn_lora_closes)} of RTN's gap")
    print(f"ablation: frozen clip gap {gap['abl_fixed_clip']:+.4f}, clip from 1.0 gap "
          f"{gap['abl_max_init']:+.4f}, both on {gap['qat']:+.4f}")
    print("ASTC per layer (bpw, relative error):")
    for n, i in rows["astc"]["per_layer"].items():
        print(f"  {n:<28} {i['bits_per_weight']:.3f} bpw  rel. error {i['rel_error']:.3f}")

    def fig(k):
        r = rows[k]
        extra = r["file_bytes"] - r["model_bytes"]
        return (f"loss {r['loss']:.3f} (float {f:.3f}), {r['bpw_linear']:.2f} bpw decoder, "
                f"{r['model_bytes'] / 1024:.0f} KiB model" + (f" + {extra / 1024:.0f} KiB adapter" if extra else ""))
    headline = [
        {"what": "2-bit QAT, tiny on Debian docs: share of RTN's loss gap closed", "figure": pct(qat_closes),
         "target": ">= 50%"},
        {"what": "LoRA r32 recovery: share of QAT's remaining gap closed", "figure": pct(lora_closes),
         "target": ">= 50%"},
        {"what": "LoRA r32 on the 2-bit RTN base: share of RTN's gap closed", "figure": pct(rtn_lora_closes),
         "target": ">= 50%"},
        {"what": "2-bit QAT + 4-bit embedding + LoRA + 8-bit KV", "figure": fig("kv8"), "target": "near float"},
        {"what": "ASTC 6x6 decoder weights (per-row scales)", "figure": fig("astc"), "target": "3.56 bpw"},
    ]
    save_result("compress", {
        "model": f"{cfg.name} ({base.num_parameters():,} parameters) trained on Debian documentation",
        "heldout_tokens": int(held[:, 1:].numel()), "qat_steps": a.qat_steps, "lora_steps": a.lora_steps,
        "rows": rows, "gap_closed": {"qat_vs_rtn": qat_closes, "lora_vs_qat": lora_closes, "lora_vs_rtn": rtn_lora_closes},
        "cpu_s_this_run": round(time.process_time() - t_all, 1), "headline": headline,
        "not_covered": "one small model (tiny, 1.3M parameters, half of them the tied embedding) and one "
                       "seed; CPU only (no kernel timings); ASTC scale bytes count fp16 per row and tiny's "
                       "128/384 widths are not multiples of 6 (padded edge blocks); LoRA adapters are fp32 "
                       "and, at rank 32 on a 128-wide model, larger than the packed base (model_bytes and "
                       "bpw_model exclude them, file_bytes of LoRA rows include them)",
    }, packages=["torch", "peft", "safetensors"], start=start)


if __name__ == "__main__":
    main()
