"""The training loop behind `cidermill train`.

AdamW, warmup + cosine/linear decay, gradient accumulation and clipping, bf16 autocast on GPU and
fp32 on CPU, JSONL logs (optionally TensorBoard), periodic held-out eval loss, NaN/inf detection,
atomic checkpoints that resume to exactly the losses of an uninterrupted run (on CPU), and
optional distillation from a teacher checkpoint.
"""
from __future__ import annotations

import json
import os
import time
from typing import Any, Callable

import torch

from corpus.errors import CidermillError, ConfigError, ShardError
from training import checkpoint as ck
from training.data.loader import PackedLoader
from training.data.token_source import TokenSource
from training.distill import distill_loss
from training.distributed import (DistContext, clip_grad_norm, full_state_dict, init_distributed, mean_over_ranks,
                                  sum_over_ranks, tracks_for_rank, wrap_data_parallel)
from training.schedule import lr_at
from training.train_config import TrainConfig

LOG_FILE = "log.jsonl"


def _device(cfg: TrainConfig) -> torch.device:
    if cfg.train.device == "cuda" or (cfg.train.device == "auto" and torch.cuda.is_available()):
        if not torch.cuda.is_available():
            raise ConfigError("train.device is cuda but no CUDA device is available")
        return torch.device("cuda")
    return torch.device("cpu")


def _tokenizer_vocab(path: str) -> int:
    from training.tokenizer import load_tokenizer
    return load_tokenizer(path).get_vocab_size()


def build_model_config(cfg: TrainConfig):
    from training.models import config_from_dict, get_preset
    base = get_preset(cfg.model.preset)
    if cfg.model.init_from:
        base = config_from_dict(ck.read_model_config(cfg.model.init_from))
    over = dict(cfg.model.overrides or {})
    if over.get("vocab_size") == "auto":
        if not cfg.data.tokenizer:
            raise ConfigError("model.overrides.vocab_size is auto but data.tokenizer is not set")
        v = _tokenizer_vocab(cfg.data.tokenizer)
        over["vocab_size"] = (v + 63) // 64 * 64
    d = base.to_dict()
    unknown = sorted(set(over) - set(d))
    if unknown:
        raise ConfigError(f"unknown key model.overrides.{unknown[0]}")
    d.update(over)
    return config_from_dict(d)


def build_sources(cfg: TrainConfig, vocab_size: int):
    ev = cfg.data.eval or {}
    permille = int(ev.get("holdout_permille", 0)) if not ev.get("datasets") else 0
    train, evals = [], []
    for m in cfg.data.mixture:
        src = TokenSource(m.path, holdout_permille=permille, split="train")
        top = max(int(v.max()) for v in src._values if len(v))
        if top >= vocab_size:
            raise ConfigError(f"data.mixture {m.name}: token id {top} >= model vocab_size {vocab_size} "
                              "(tokenizer and model disagree)")
        train.append((m.name, src, m.weight))
        if permille:
            try:
                evals.append((m.name, TokenSource(m.path, holdout_permille=permille, split="eval", check=False),
                              m.weight))
            except ShardError:  # a small dataset may hold out no document: train on, without eval for it
                pass
    for e in ev.get("datasets") or []:
        evals.append((e["name"], TokenSource(e["path"]), float(e.get("weight", 1.0))))
    return train, evals


class Trainer:
    def __init__(self, cfg: TrainConfig, resume: bool = True, progress: Callable[[dict], None] | None = None,
                 stop_after: int | None = None):
        self.cfg, self.resume, self.progress, self.stop_after = cfg, resume, progress, stop_after
        self.out = cfg.train.out
        self.device = _device(cfg)

    def _eval_loss(self, model, evals) -> float | None:
        if not evals or not self.cfg.train.eval_batches:
            return None
        ld = PackedLoader(evals, self.cfg.data.seq_len, self.cfg.data.batch_size, seed=12345)
        model.eval()
        tot, n = 0.0, 0
        with torch.no_grad(), self._autocast():
            for _ in range(self.cfg.train.eval_batches):
                b = ld.next_batch()
                out = model(b["input_ids"].to(self.device), targets=b["targets"].to(self.device),
                            doc_ids=b["doc_ids"].to(self.device))
                tot += float(out.loss)
                n += 1
        model.train()
        return tot / max(1, n)

    def _autocast(self):
        if self.device.type == "cuda":
            return torch.autocast("cuda", dtype=torch.bfloat16)
        return torch.autocast("cpu", enabled=False)

    def run(self) -> dict[str, Any]:
        from training.models import build_model
        cfg = self.cfg
        os.makedirs(self.out, exist_ok=True)
        ctx = init_distributed(cfg.train.parallel, self.device)
        if ctx.mode != "none" and self.device.type == "cuda":
            self.device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
            torch.cuda.set_device(self.device)
        mcfg = build_model_config(cfg)
        train_src, eval_src = build_sources(cfg, mcfg.vocab_size)
        torch.manual_seed(cfg.train.seed)
        if ctx.mode == "tracks":
            if mcfg.arch != "ptmoe":
                raise ConfigError(f"train.parallel=tracks needs a PT-MoE model, got arch={mcfg.arch}")
            model = build_model(mcfg, local_tracks=tracks_for_rank(mcfg.n_tracks, ctx.rank, ctx.world),
                                group=ctx.group).to(self.device)
        else:
            model = build_model(mcfg).to(self.device)
        inner = model
        teacher = None
        if cfg.distill.teacher:
            teacher = ck.load_model_from_checkpoint(cfg.distill.teacher, device=str(self.device))
            teacher.eval().requires_grad_(False)
            if teacher.config.vocab_size != mcfg.vocab_size:
                raise ConfigError(f"distill.teacher vocab_size {teacher.config.vocab_size} != student {mcfg.vocab_size}")
        decay, no_decay = [], []
        for n, p in model.named_parameters():
            (no_decay if p.dim() < 2 or n.endswith("norm.weight") else decay).append(p)
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.optim.weight_decay},
                                 {"params": no_decay, "weight_decay": 0.0}],
                                lr=cfg.optim.lr, betas=tuple(cfg.optim.betas), eps=cfg.optim.eps,
                                foreach=False)
        d_rank, d_world = ctx.data_rank
        loader = PackedLoader(train_src, cfg.data.seq_len, cfg.data.batch_size, seed=cfg.train.seed,
                              rank=d_rank, world_size=d_world)
        step = 0
        log_path = os.path.join(self.out, LOG_FILE)
        last = ck.latest_checkpoint(self.out) if self.resume else None
        if last:
            ck.load_model_weights(last, model)
            trainer_state, state = ck.load_trainer_state(last)
            per_rank = trainer_state["optimizer_per_rank"]
            if len(per_rank) != ctx.world:
                raise CidermillError(f"{last}: saved with {len(per_rank)} rank(s), resuming with {ctx.world}")
            opt.load_state_dict(per_rank[ctx.rank])
            torch.set_rng_state(trainer_state["torch_rng"])
            loader.load_state_dict(state["loader"])
            step = int(state["step"])
            # drop log lines written after the checkpoint (a crash between checkpoint and log)
            if ctx.is_main and os.path.exists(log_path):
                lines = [l for l in open(log_path) if l.strip() and json.loads(l).get("step", 0) <= step]
                with open(log_path, "w") as f:
                    f.writelines(lines)
        else:
            if cfg.model.init_from:
                ck.load_model_weights(cfg.model.init_from, model)
            if ctx.is_main and os.path.exists(log_path):
                os.remove(log_path)
        model = wrap_data_parallel(model, ctx, self.device)
        if ctx.is_main:
            with open(os.path.join(self.out, "config.json"), "w") as f:
                json.dump({"train": cfg.to_dict(), "model": mcfg.to_dict()}, f, indent=1, default=str)
        tb = None
        if cfg.train.tensorboard and ctx.is_main:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError:
                raise ConfigError("train.tensorboard is true but the tensorboard package is not installed") from None
            tb = SummaryWriter(os.path.join(self.out, "tensorboard"))
        model.train()
        total = cfg.train.steps
        accum = cfg.optim.grad_accum
        tokens_per_step = cfg.data.seq_len * cfg.data.batch_size * accum
        t_start, start_step = time.time(), step
        result: dict[str, Any] = {"resumed_from": step if last else None, "run_dir": self.out}
        log = open(log_path, "a") if ctx.is_main else open(os.devnull, "w")
        try:
            while step < total:
                lr = lr_at(step, cfg.optim.lr, total, cfg.schedule.warmup_steps, cfg.schedule.decay,
                           cfg.schedule.min_lr_ratio)
                for g in opt.param_groups:
                    g["lr"] = lr
                opt.zero_grad(set_to_none=True)
                loss_sum = aux_sum = kl_sum = 0.0
                for _ in range(accum):
                    b = loader.next_batch()
                    ids, tg, doc = (b[k].to(self.device) for k in ("input_ids", "targets", "doc_ids"))
                    with self._autocast():
                        if teacher is not None:
                            out = model(ids, targets=tg, doc_ids=doc, return_logits=True)
                            with torch.no_grad():
                                t_logits = teacher(ids, doc_ids=doc).logits
                            main, kl, ce = distill_loss(out.logits, t_logits, tg, cfg.distill.alpha,
                                                        cfg.distill.temperature, cfg.distill.top_k)
                            kl_sum += float(kl.detach())
                        else:
                            out = model(ids, targets=tg, doc_ids=doc)
                            main = out.loss
                        loss = (main + out.aux_loss) / accum
                    if not torch.isfinite(loss):
                        raise CidermillError(
                            f"step {step}: loss is {float(loss)} (not finite); stopping. Lower optim.lr or check "
                            f"the data; last checkpoint: {ck.latest_checkpoint(self.out) or 'none'}")
                    loss.backward()
                    loss_sum += float((out.loss if teacher is None else main).detach()) / accum
                    aux_sum += float(out.aux_loss.detach()) / accum
                loss_sum = mean_over_ranks(loss_sum, ctx)
                aux_sum = mean_over_ranks(sum_over_ranks(aux_sum, ctx), ctx)
                gnorm = clip_grad_norm(model, cfg.optim.grad_clip, ctx)
                if not torch.isfinite(gnorm):
                    raise CidermillError(f"step {step}: gradient norm is {float(gnorm)} (not finite); stopping")
                opt.step()
                step += 1
                rec: dict[str, Any] = {"step": step, "loss": loss_sum, "aux_loss": aux_sum, "lr": lr,
                                       "grad_norm": float(gnorm), "tokens": step * tokens_per_step}
                if teacher is not None:
                    rec["kl"] = kl_sum / accum
                if step % cfg.train.log_every == 0 or step == total:
                    el = time.time() - t_start
                    rec["tokens_per_s"] = (step - start_step) * tokens_per_step / max(el, 1e-9)
                if cfg.train.eval_every and (step % cfg.train.eval_every == 0 or step == total):
                    ev = self._eval_loss(model, eval_src)
                    if ev is not None:
                        rec["eval_loss"] = ev
                log.write(json.dumps(rec) + "\n")
                log.flush()
                if tb is not None:
                    for k in ("loss", "aux_loss", "lr", "grad_norm", "eval_loss"):
                        if k in rec:
                            tb.add_scalar(k, rec[k], step)
                if self.progress and ctx.is_main:
                    self.progress(rec)
                if cfg.train.ckpt_every and (step % cfg.train.ckpt_every == 0 or step == total):
                    self._checkpoint(step, model, inner, opt, loader, ctx)
                if self.stop_after is not None and step >= self.stop_after:
                    break
        finally:
            log.close()
            if tb is not None:
                tb.close()
        result.update({"steps": step, "final_loss": loss_sum if step > start_step else None,
                       "params": sum(p.numel() for p in inner.parameters()),
                       "checkpoint": ck.latest_checkpoint(self.out), "rank": ctx.rank, "world": ctx.world})
        if ctx.is_main:
            write_loss_report(self.out)
        return result

    def _checkpoint(self, step, model, inner, opt, loader, ctx: DistContext) -> None:
        import torch.distributed as dist
        state = full_state_dict(model, ctx)
        opt_state = opt.state_dict()
        if ctx.mode != "none":
            opts: list = [None] * ctx.world
            dist.all_gather_object(opts, opt_state)
        else:
            opts = [opt_state]
        if ctx.is_main:
            ck.save_checkpoint(self.out, step, state, inner.config.to_dict(), opts, loader.state_dict(),
                               {"parallel": ctx.mode, "world": ctx.world}, keep=self.cfg.train.keep_checkpoints)
        if ctx.mode != "none":
            dist.barrier()


def read_log(run_dir: str) -> list[dict]:
    p = os.path.join(run_dir, LOG_FILE)
    return [json.loads(l) for l in open(p) if l.strip()] if os.path.exists(p) else []


def write_loss_report(run_dir: str) -> None:
    """A loss-curve PNG and stats under RUN/_report, so `cidermill report RUN` shows the run."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from corpus.report import ReportStats, report_dir, write_report
    rows = read_log(run_dir)
    if not rows:
        return
    rdir = report_dir(run_dir)
    os.makedirs(os.path.join(rdir, "plots"), exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.plot([r["step"] for r in rows], [r["loss"] for r in rows], label="train loss", lw=1)
    ev = [r for r in rows if "eval_loss" in r]
    if ev:
        ax.plot([r["step"] for r in ev], [r["eval_loss"] for r in ev], "o-", label="eval loss (held out)")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(rdir, "plots", "loss.png"), dpi=90)
    plt.close(fig)
    stats = ReportStats()
    stats.add_figure("plots/loss.png", "Loss curve", f"{len(rows)} steps")
    first, lastr = rows[0], rows[-1]
    stats.info.update({"steps": lastr["step"], "first_loss": round(first["loss"], 4), "last_loss": round(lastr["loss"], 4),
                       "last_eval_loss": round(ev[-1]["eval_loss"], 4) if ev else None,
                       "tokens": lastr.get("tokens")})
    write_report(run_dir, stats)

