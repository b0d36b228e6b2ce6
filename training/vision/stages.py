"""Staged multimodal training behind `cidermill train` when the config has a ``vision:`` section.

    stage text   target LM on the text mixture                      (trains: lm)
    stage align  encoder + stage-2 adapter + small decoder, on text + image-text data
    stage adapt  a fresh adapter into the target LM, text mixture kept (trains: adapter, lm)

All modules live in one ``VisionStack`` (one safetensors file per checkpoint). Each stage gets its
own AdamW and loader (seeded by the run seed and the stage index) and its own warmup + decay over
its steps. A checkpoint holds the weights, the current stage's optimiser and loader state, the
RNG and the global step; one is always written at the end of a stage, so a resumed run takes
exactly the steps an uninterrupted one would, across stage switches too (CPU, fp32).

At the end of each stage the run is evaluated (training.vision.evaluate) and the figures are
logged; ``RUN/vision_eval.json`` collects them, with the text-only held-out loss of the target LM
before and after the adapt stage.
"""
from __future__ import annotations

import copy
import dataclasses
import json
import os
import time
from dataclasses import dataclass
from typing import Any, Callable

import torch
import torch.nn as nn
from safetensors.torch import load_file

from corpus.errors import CidermillError, ConfigError
from training import checkpoint as ck
from training.clip.model import read_metadata
from training.models import build_model, get_preset
from training.schedule import lr_at
from training.tokenizer import load_tokenizer
from training.train_config import TrainConfig
from training.trainer import build_model_config, build_optimizer, build_sources, round_vocab, truncate_log, write_loss_report
from training.vision.adapter import VLAdapter
from training.vision.config import get_vision_preset
from training.vision.data import build_vision_data
from training.vision.encoder import VisionEncoder
from training.vision.evaluate import answer_accuracy, text_loss
from training.vision.loader import MultimodalLoader
from training.vision.run_config import VisionRun, parse_vision
from training.vision.samples import SampleBuilder
from training.vision.vlm import VisionLanguageModel

LOG_FILE = "log.jsonl"
EVAL_FILE = "vision_eval.json"
REPORT_FILE = "vision_data_report.json"


@dataclass
class _Parts:
    """What a vision run is built from (VisionTrainer._build)."""
    tok: Any
    target_cfg: Any
    small_cfg: Any
    vcfg: Any
    text_train: list
    text_eval: list
    stack: "VisionStack"
    eos: int
    data: Any                 # training.vision.data's VisionData, None for a text-only stage list

    @property
    def image_sources(self) -> list:
        return self.data.sources if self.data else []


@dataclass
class _Resume:
    """Where the run stands: the checkpoint it resumed from (None: fresh), the global step, and
    the saved stage's index with its optimiser and loader state (used once, inside that stage)."""
    last: str | None
    step: int
    saved_stage: int
    trainer_state: dict | None
    state: dict | None


class VisionStack(nn.Module):
    """Target LM, encoder, small decoder and the two adapters (stage 2's and the target's)."""

    def __init__(self, target_cfg, small_cfg, vcfg, n_tokens: int):
        super().__init__()
        self.lm = build_model(target_cfg)             # built first: the same seed gives a text-only run's LM
        self.encoder = VisionEncoder(vcfg)
        self.small = build_model(small_cfg)
        self.adapter_small = VLAdapter(vcfg, small_cfg.d_model, n_tokens)
        self.adapter = VLAdapter(vcfg, target_cfg.d_model, n_tokens)

    def vlm(self, stage: str) -> VisionLanguageModel:
        if stage == "align":
            return VisionLanguageModel(self.small, self.encoder, self.adapter_small)
        return VisionLanguageModel(self.lm, self.encoder, self.adapter)

    def trainable(self, stage: str, parts: list[str]) -> list[nn.Module]:
        lm, adapter = (self.small, self.adapter_small) if stage == "align" else (self.lm, self.adapter)
        return [{"lm": lm, "adapter": adapter, "encoder": self.encoder}[p] for p in parts]


def load_clip_encoder(path: str, encoder: nn.Module, vcfg) -> None:
    """Load the image encoder of a `cidermill train-clip --vision` checkpoint into ``encoder``.

    The checkpoint's encoder config (its metadata) must equal ``vcfg``; any other checkpoint, or
    one whose encoder differs, is refused with one line."""
    if not os.path.isfile(path):
        raise ConfigError(f"vision.encoder_init: {path}: no such CLIP checkpoint")
    extra = json.loads(read_metadata(path).get("extra") or "{}")
    if extra.get("vision_encoder") != vcfg.to_dict():
        raise ConfigError(f"vision.encoder_init: {path}: its image tower is not this run's encoder "
                          f"({'not a train-clip --vision checkpoint' if 'vision_encoder' not in extra else 'other config'})")
    prefix = "visual.encoder."
    state = {k[len(prefix):]: v.float() for k, v in load_file(path).items() if k.startswith(prefix)}
    encoder.load_state_dict(state, strict=True)


def model_configs(cfg: TrainConfig, v: VisionRun, tokenizer_vocab: int):
    """Target and small-decoder configs; vocab "auto" leaves one free id above the tokenizer for the
    image placeholder."""
    c = copy.deepcopy(cfg)
    if c.model.overrides.get("vocab_size") == "auto":
        c.model.overrides["vocab_size"] = round_vocab(tokenizer_vocab + 1)
    target = build_model_config(c)
    if target.vocab_size <= tokenizer_vocab:
        raise ConfigError(f"model vocab_size {target.vocab_size} leaves no id above the tokenizer's "
                          f"{tokenizer_vocab} for the image placeholder; use vocab_size: auto")
    small = dataclasses.replace(get_preset(v.small_decoder), vocab_size=target.vocab_size,
                                max_seq_len=target.max_seq_len, **v.small_decoder_overrides)
    return target, small


def stage_sources(stage, text_sources, image_sources):
    if stage.name == "text" or not image_sources:
        return text_sources
    tw = stage.text_weight if text_sources else 0.0
    ts = sum(w for _, _, w in text_sources) or 1.0
    isum = sum(w for _, _, w in image_sources) or 1.0
    return ([(n, s, w * tw / ts) for n, s, w in text_sources if tw > 0]
            + [(n, s, w * (1 - tw) / isum) for n, s, w in image_sources])


class VisionTrainer:
    def __init__(self, cfg: TrainConfig, resume: bool = True, progress: Callable[[dict], None] | None = None,
                 stop_after: int | None = None, log: Callable[[str], None] | None = None):
        self.cfg, self.resume, self.progress, self.stop_after = cfg, resume, progress, stop_after
        self.log = log or (lambda m: None)
        self.v = parse_vision(cfg.vision)
        self.out = cfg.train.out

    def run(self) -> dict[str, Any]:
        cfg, v = self.cfg, self.v
        if not cfg.data.tokenizer:
            raise ConfigError("a vision run needs data.tokenizer (to tokenise captions and questions)")
        if cfg.train.parallel != "none":
            raise ConfigError("vision stages run on one process (train.parallel: none)")
        os.makedirs(self.out, exist_ok=True)
        p = self._build()
        log_path = os.path.join(self.out, LOG_FILE)
        r = self._restore(p, log_path)
        with open(os.path.join(self.out, "config.json"), "w") as f:
            json.dump({"train": cfg.to_dict(), "model": p.target_cfg.to_dict(), "small_decoder": p.small_cfg.to_dict(),
                       "encoder": p.vcfg.to_dict()}, f, indent=1, default=str)
        evals: dict[str, Any] = self._read_evals() if r.last else {"stages": []}
        evals["stages"] = [e for e in evals["stages"] if e["end_step"] <= r.step]
        logf = open(log_path, "a")
        t0, step0 = time.time(), r.step
        try:
            while r.step < v.total_steps and not self._stopped(r.step):
                self._run_stage(p, r, evals, logf)
                r.saved_stage = -1
        finally:
            logf.close()
        write_loss_report(self.out)
        stack = p.stack
        return {"resumed_from": step0 if r.last else None, "steps": r.step, "run_dir": self.out,
                "seconds": round(time.time() - t0, 1), "evals": evals, "checkpoint": ck.latest_checkpoint(self.out),
                "params": {"lm": stack.lm.num_parameters(), "encoder": stack.encoder.num_parameters(),
                           "small_decoder": stack.small.num_parameters(),
                           "adapter": sum(p.numel() for p in stack.adapter.parameters())},
                "data_report": p.data.report if p.data else None}

    def _stopped(self, step: int) -> bool:
        return self.stop_after is not None and step >= self.stop_after

    def _build(self) -> "_Parts":
        """Tokenizer, model configs, text sources, the seeded VisionStack and the image-text data
        (its report written to RUN/vision_data_report.json)."""
        cfg, v = self.cfg, self.v
        tok = load_tokenizer(cfg.data.tokenizer)
        target_cfg, small_cfg = model_configs(cfg, v, tok.get_vocab_size())
        vcfg = get_vision_preset(v.encoder, **v.encoder_overrides)
        text_train, text_eval = build_sources(cfg, target_cfg.vocab_size)
        torch.manual_seed(cfg.train.seed)
        stack = VisionStack(target_cfg, small_cfg, vcfg, v.adapter_tokens)
        placeholder = target_cfg.vocab_size - 1
        builder = SampleBuilder(tok, placeholder, v.adapter_tokens, vcfg.image_size, cfg.data.seq_len)
        needs_images = any(s.name != "text" for s in v.stages)
        data = build_vision_data(v, builder) if needs_images else None
        if data is not None:
            with open(os.path.join(self.out, REPORT_FILE), "w") as f:
                json.dump(data.report, f, indent=1)
            r = data.report
            self.log(f"vision data: {r['samples']} samples from {r['rows']} rows, {len(data.eval_items)} held-out "
                     f"questions; dropped {sum(r['dropped'].values())} {r['dropped'] or ''}")
        return _Parts(tok, target_cfg, small_cfg, vcfg, text_train, text_eval, stack, builder.eos, data)

    def _restore(self, p: "_Parts", log_path: str) -> "_Resume":
        """Continue from the latest checkpoint (weights, RNG, step; the log cut back to it), or
        start fresh: the target LM from model.init_from, the encoder from vision.encoder_init."""
        cfg, v = self.cfg, self.v
        last = ck.latest_checkpoint(self.out) if self.resume else None
        if not last:
            if cfg.model.init_from:  # e.g. a text-only run's checkpoint as the target LM
                ck.load_model_weights(cfg.model.init_from, p.stack.lm, context_change_ok=True)
            if v.encoder_init:  # stage 1 (contrastive) hands its encoder to stage 2
                load_clip_encoder(v.encoder_init, p.stack.encoder, p.vcfg)
            if os.path.exists(log_path):
                os.remove(log_path)
            return _Resume(None, 0, -1, None, None)
        try:
            p.stack.load_state_dict(load_file(os.path.join(last, ck.MODEL_FILE)), strict=True)
        except RuntimeError as e:
            raise CidermillError(f"{last}: checkpoint does not fit this vision run "
                                 f"({str(e).splitlines()[0][:160]})") from None
        trainer_state, state = ck.load_trainer_state(last)
        step = int(state["step"])
        torch.set_rng_state(trainer_state["torch_rng"])
        truncate_log(log_path, step)
        return _Resume(last, step, int(state["stage"]), trainer_state, state)

    def _run_stage(self, p: "_Parts", r: "_Resume", evals: dict[str, Any], logf) -> None:
        """The stage `r.step` falls in, from there to its end (or stop_after): its own optimiser
        and loader (restored when resuming inside it), evaluated and checkpointed at its end."""
        cfg, v = self.cfg, self.v
        si, s0 = v.stage_at(r.step)
        stage = v.stages[si]
        vlm = p.stack.vlm(stage.name)
        mods = p.stack.trainable(stage.name, stage.train)
        p.stack.requires_grad_(False)
        for m in mods:
            m.requires_grad_(True)
        opt = self._optimizer(mods, stage)
        loader = MultimodalLoader(stage_sources(stage, p.text_train, p.image_sources), cfg.data.seq_len,
                                  cfg.data.batch_size, p.eos, seed=cfg.train.seed * 1000 + si)
        if r.saved_stage == si and r.step > s0:
            opt.load_state_dict(r.trainer_state["optimizer_per_rank"][0])
            loader.load_state_dict(r.state["loader"])
        if r.step == s0 and stage.name == "adapt":
            evals["text_loss_before_adapt"] = text_loss(p.stack.lm, p.text_eval, cfg.data.seq_len,
                                                        cfg.data.batch_size, v.eval_text_batches)
        end = s0 + stage.steps
        vlm.train()
        while r.step < end and not self._stopped(r.step):
            rec = self._train_step(vlm, mods, opt, loader, stage, r.step, s0)
            r.step = step = rec["step"] = r.step + 1
            if step == end:
                rec["eval"] = self._stage_eval(p.stack, stage, p.data, p.text_eval, p.tok, p.eos)
                evals["stages"].append({"name": stage.name, "end_step": step, **rec["eval"]})
                if stage.name == "adapt":
                    evals["text_loss_after_adapt"] = rec["eval"].get("text_loss")
                self._write_evals(evals)
            logf.write(json.dumps(rec) + "\n")
            logf.flush()
            if self.progress:
                self.progress(rec)
            if step == end or (cfg.train.ckpt_every and step % cfg.train.ckpt_every == 0):
                ck.save_checkpoint(self.out, step, p.stack.state_dict(), {"vision_run": True,
                                   "model": p.target_cfg.to_dict(), "encoder": p.vcfg.to_dict()},
                                   [opt.state_dict()], loader.state_dict(), {"stage": si},
                                   keep=cfg.train.keep_checkpoints)

    def _train_step(self, vlm, mods, opt, loader, stage, step: int, s0: int) -> dict[str, Any]:
        """Global step `step` (the stage began at `s0`) at the stage's own warmup + decay schedule;
        its log record, numbered by the caller."""
        cfg = self.cfg
        lr = lr_at(step - s0, stage.lr or cfg.optim.lr, stage.steps, min(cfg.schedule.warmup_steps, stage.steps // 2),
                   cfg.schedule.decay, cfg.schedule.min_lr_ratio)
        for g in opt.param_groups:
            g["lr"] = lr
        opt.zero_grad(set_to_none=True)
        b = loader.next_batch()
        out = vlm(b["input_ids"], targets=b["targets"], doc_ids=b["doc_ids"], images=b["images"])
        loss = out.loss + out.aux_loss
        if not torch.isfinite(loss):
            raise CidermillError(f"step {step}: loss is {float(loss)} (not finite); stopping")
        loss.backward()
        gn = torch.nn.utils.clip_grad_norm_([p for m in mods for p in m.parameters()], cfg.optim.grad_clip)
        opt.step()
        return {"step": None, "stage": stage.name, "loss": float(out.loss.detach()), "lr": lr,
                "grad_norm": float(gn), "images": 0 if b["images"] is None else int(b["images"].shape[0])}

    def _optimizer(self, mods, stage):
        return build_optimizer(list(mods), self.cfg.optim, lr=stage.lr)

    def _stage_eval(self, stack, stage, data, text_eval, tok, eos) -> dict[str, Any]:
        cfg, v = self.cfg, self.v
        res: dict[str, Any] = {}
        if stage.name != "align":
            res["text_loss"] = text_loss(stack.lm, text_eval, cfg.data.seq_len, cfg.data.batch_size,
                                         v.eval_text_batches)
        if stage.name != "text" and data is not None and data.eval_items:
            res.update(answer_accuracy(stack.vlm(stage.name), data.eval_items, tok, eos))
        return res

    def _read_evals(self) -> dict[str, Any]:
        p = os.path.join(self.out, EVAL_FILE)
        return json.load(open(p)) if os.path.exists(p) else {"stages": []}

    def _write_evals(self, evals: dict[str, Any]) -> None:
        tmp = os.path.join(self.out, EVAL_FILE + ".tmp")
        with open(tmp, "w") as f:
            json.dump(evals, f, indent=1)
        os.replace(tmp, os.path.join(self.out, EVAL_FILE))
