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
SPLITS_FILE = "documents_split.jsonl"


EVAL_SEED = 12345     # one fixed draw of eval batches: every eval of a run (and of runs compared) reads the same tokens
VOCAB_MULTIPLE = 64   # vocab_size "auto" rounds the tokenizer's size up to this: matmul-friendly widths


def round_vocab(n: int) -> int:
    return (n + VOCAB_MULTIPLE - 1) // VOCAB_MULTIPLE * VOCAB_MULTIPLE


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
        over["vocab_size"] = round_vocab(_tokenizer_vocab(cfg.data.tokenizer))
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
        top = src.max_token()
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


def truncate_log(log_path: str, step: int) -> None:
    """Drop log lines written after the checkpoint being resumed (a crash between checkpoint and
    log), so the log and the weights tell the same story."""
    if os.path.exists(log_path):
        with open(log_path) as f:
            lines = [l for l in f if l.strip() and json.loads(l).get("step", 0) <= step]
        with open(log_path, "w") as f:
            f.writelines(lines)


def build_optimizer(modules, o, lr: float | None = None) -> torch.optim.AdamW:
    """AdamW over one module or a list of them; norms and other 1-D parameters get no weight
    decay. ``lr``: a stage's own rate (default ``o.lr``)."""
    decay, no_decay = [], []
    for m in modules if isinstance(modules, (list, tuple)) else [modules]:
        for n, p in m.named_parameters():
            (no_decay if p.dim() < 2 or n.endswith("norm.weight") else decay).append(p)
    return torch.optim.AdamW([{"params": decay, "weight_decay": o.weight_decay},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=lr or o.lr, betas=tuple(o.betas), eps=o.eps, foreach=False)


def sentence_end_ids(tokenizer_path: str | None) -> list[int]:
    """Token ids whose text ends a sentence (., !, ? or a newline): where long documents may be cut."""
    if not tokenizer_path:
        return []
    from training.tokenizer import load_tokenizer
    tok = load_tokenizer(tokenizer_path)
    return sorted(i for t, i in tok.get_vocab().items()
                  if tok.decode([i]).rstrip(" ").endswith((".", "!", "?", "\n")))


def build_loader(cfg: TrainConfig, sources, rank: int = 0, world: int = 1):
    """The stream packer, or whole documents by length bucket (``data.packing: buckets``)."""
    d = cfg.data
    if d.packing == "buckets":
        from training.data.buckets import BucketLoader
        return BucketLoader(sources, d.buckets, d.seq_len * d.batch_size, seed=cfg.train.seed,
                            sentence_end_ids=sentence_end_ids(d.tokenizer), rank=rank, world_size=world)
    return PackedLoader(sources, d.seq_len, d.batch_size, seed=cfg.train.seed, rank=rank, world_size=world)


class _Logs:
    """log.jsonl (main rank only) and optional TensorBoard."""

    def __init__(self, out: str, ctx: DistContext, tensorboard: bool):
        self.f = open(os.path.join(out, LOG_FILE), "a") if ctx.is_main else open(os.devnull, "w")
        self.tb = None
        if tensorboard and ctx.is_main:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError:
                self.f.close()
                raise ConfigError("train.tensorboard is true but the tensorboard package is not installed") from None
            self.tb = SummaryWriter(os.path.join(out, "tensorboard"))

    def write(self, rec: dict[str, Any]) -> None:
        self.f.write(json.dumps(rec) + "\n")
        self.f.flush()
        if self.tb is not None:
            for k in ("loss", "aux_loss", "lr", "grad_norm", "eval_loss"):
                if k in rec:
                    self.tb.add_scalar(k, rec[k], rec["step"])

    def close(self) -> None:
        self.f.close()
        if self.tb is not None:
            self.tb.close()


class Trainer:
    """One training run: set up (model, optimiser, loader, resume), then steps, then the summary."""

    def __init__(self, cfg: TrainConfig, resume: bool = True, progress: Callable[[dict], None] | None = None,
                 stop_after: int | None = None):
        self.cfg, self.resume, self.progress, self.stop_after = cfg, resume, progress, stop_after
        self.out = cfg.train.out
        self.device = _device(cfg)

    # ---- the run, step by step -------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        cfg = self.cfg
        os.makedirs(self.out, exist_ok=True)
        ctx = self._init_distributed()
        mcfg = build_model_config(cfg)
        train_src, eval_src = build_sources(cfg, mcfg.vocab_size)
        torch.manual_seed(cfg.train.seed)
        model = self._build_model(mcfg, ctx)
        teacher = self._load_teacher(mcfg)
        opt = build_optimizer(model, cfg.optim)
        loader = build_loader(cfg, train_src, *ctx.data_rank)
        step, resumed = self._restore(model, opt, loader, ctx)
        splits = getattr(loader, "splits", [])   # bucket packing: documents cut to fit the largest bucket
        if splits and ctx.is_main:
            with open(os.path.join(self.out, SPLITS_FILE), "w") as f:
                f.writelines(json.dumps(r) + "\n" for r in splits)
        inner, model = model, wrap_data_parallel(model, ctx, self.device)
        if ctx.is_main:
            with open(os.path.join(self.out, "config.json"), "w") as f:
                json.dump({"train": cfg.to_dict(), "model": mcfg.to_dict()}, f, indent=1, default=str)
        logs = _Logs(self.out, ctx, cfg.train.tensorboard)
        model.train()
        t_start, start_step, start_tokens = time.time(), step, sum(loader.seen.values())
        rec: dict[str, Any] = {}
        try:
            while step < cfg.train.steps:
                rec = self._train_step(step, model, teacher, opt, loader, ctx)
                step = rec["step"]
                if step % cfg.train.log_every == 0 or step == cfg.train.steps:
                    rec["tokens_per_s"] = (rec["tokens"] - start_tokens) / max(time.time() - t_start, 1e-9)
                if cfg.train.eval_every and (step % cfg.train.eval_every == 0 or step == cfg.train.steps):
                    ev = self._eval_loss(model, eval_src)
                    if ev is not None:
                        rec["eval_loss"] = ev
                logs.write(rec)
                if self.progress and ctx.is_main:
                    self.progress(rec)
                if cfg.train.ckpt_every and (step % cfg.train.ckpt_every == 0 or step == cfg.train.steps):
                    self._checkpoint(step, model, inner, opt, loader, ctx)
                if self.stop_after is not None and step >= self.stop_after:
                    break
        finally:
            logs.close()
        if ctx.is_main:
            write_loss_report(self.out)
        return {"resumed_from": resumed, "run_dir": self.out, "steps": step,
                "final_loss": rec.get("loss") if step > start_step else None,
                "params": sum(p.numel() for p in inner.parameters()), "tokens_by_source": dict(loader.seen),
                "documents_split": len(splits),
                "checkpoint": ck.latest_checkpoint(self.out), "rank": ctx.rank, "world": ctx.world}

    def _init_distributed(self) -> DistContext:
        ctx = init_distributed(self.cfg.train.parallel, self.device)
        if ctx.mode != "none" and self.device.type == "cuda":
            self.device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
            torch.cuda.set_device(self.device)
        return ctx

    def _build_model(self, mcfg, ctx: DistContext):
        from training.models import build_model
        if ctx.mode == "tracks":
            if mcfg.arch != "ptmoe":
                raise ConfigError(f"train.parallel=tracks needs a PT-MoE model, got arch={mcfg.arch}")
            model = build_model(mcfg, local_tracks=tracks_for_rank(mcfg.n_tracks, ctx.rank, ctx.world),
                                group=ctx.group)
        else:
            model = build_model(mcfg)
        model.set_activation_checkpointing(self.cfg.train.activation_checkpointing)
        return model.to(self.device)

    def _load_teacher(self, mcfg):
        if not self.cfg.distill.teacher:
            return None
        teacher = ck.load_model_from_checkpoint(self.cfg.distill.teacher, device=str(self.device))
        teacher.eval().requires_grad_(False)
        if teacher.config.vocab_size != mcfg.vocab_size:
            raise ConfigError(f"distill.teacher vocab_size {teacher.config.vocab_size} != student {mcfg.vocab_size}")
        return teacher

    def _restore(self, model, opt, loader, ctx: DistContext) -> tuple[int, int | None]:
        """Resume from the run's latest checkpoint (weights, optimiser, RNG, loader), or start fresh
        (from model.init_from if set). Returns (step, the step resumed from or None)."""
        log_path = os.path.join(self.out, LOG_FILE)
        last = ck.latest_checkpoint(self.out) if self.resume else None
        if not last:
            if self.cfg.model.init_from:
                ck.load_model_weights(self.cfg.model.init_from, model, context_change_ok=True)
            if ctx.is_main and os.path.exists(log_path):
                os.remove(log_path)
            return 0, None
        ck.load_model_weights(last, model)
        trainer_state, state = ck.load_trainer_state(last)
        per_rank = trainer_state["optimizer_per_rank"]
        if len(per_rank) != ctx.world:
            raise CidermillError(f"{last}: saved with {len(per_rank)} rank(s), resuming with {ctx.world}")
        opt.load_state_dict(per_rank[ctx.rank])
        torch.set_rng_state(trainer_state["torch_rng"])
        loader.load_state_dict(state["loader"])
        step = int(state["step"])
        if ctx.is_main:
            truncate_log(log_path, step)
        return step, step

    def _train_step(self, step: int, model, teacher, opt, loader, ctx: DistContext) -> dict[str, Any]:
        """One optimiser step over grad_accum micro-batches; returns the step's log record."""
        cfg = self.cfg
        lr = lr_at(step, cfg.optim.lr, cfg.train.steps, cfg.schedule.warmup_steps, cfg.schedule.decay,
                   cfg.schedule.min_lr_ratio)
        for g in opt.param_groups:
            g["lr"] = lr
        opt.zero_grad(set_to_none=True)
        accum = cfg.optim.grad_accum
        loss_sum = aux_sum = kl_sum = 0.0
        for _ in range(accum):
            main, aux, kl = self._micro_batch(step, model, teacher, loader.next_batch())
            loss_sum += main / accum
            aux_sum += aux / accum
            kl_sum += kl / accum
        loss_sum = mean_over_ranks(loss_sum, ctx)
        aux_sum = mean_over_ranks(sum_over_ranks(aux_sum, ctx), ctx)
        gnorm = clip_grad_norm(model, cfg.optim.grad_clip, ctx)
        if not torch.isfinite(gnorm):
            raise CidermillError(f"step {step}: gradient norm is {float(gnorm)} (not finite); stopping")
        opt.step()
        rec: dict[str, Any] = {"step": step + 1, "loss": loss_sum, "aux_loss": aux_sum, "lr": lr,
                               "grad_norm": float(gnorm), "tokens": sum(loader.seen.values())}
        if teacher is not None:
            rec["kl"] = kl_sum
        return rec

    def _micro_batch(self, step: int, model, teacher, b) -> tuple[float, float, float]:
        """Forward + backward of one micro-batch; returns (loss, aux loss, KL) as floats."""
        accum = self.cfg.optim.grad_accum
        ids, tg, doc = (b[k].to(self.device) for k in ("input_ids", "targets", "doc_ids"))
        kl = 0.0
        with self._autocast():
            if teacher is not None:
                out = model(ids, targets=tg, doc_ids=doc, return_logits=True)
                with torch.no_grad():
                    t_logits = teacher(ids, doc_ids=doc).logits
                d = self.cfg.distill
                main, kl_t, _ = distill_loss(out.logits, t_logits, tg, d.alpha, d.temperature, d.top_k)
                kl = float(kl_t.detach())
            else:
                out = model(ids, targets=tg, doc_ids=doc)
                main = out.loss
            loss = (main + out.aux_loss) / accum
        if not torch.isfinite(loss):
            raise CidermillError(
                f"step {step}: loss is {float(loss)} (not finite); stopping. Lower optim.lr or check "
                f"the data; last checkpoint: {ck.latest_checkpoint(self.out) or 'none'}")
        loss.backward()
        return float(main.detach()), float(out.aux_loss.detach()), kl

    def _eval_loss(self, model, evals) -> float | None:
        if not evals or not self.cfg.train.eval_batches:
            return None
        ld = PackedLoader(evals, self.cfg.data.seq_len, self.cfg.data.batch_size, seed=EVAL_SEED)
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

