"""The `cidermill train` config: model, data mixture, optimiser, schedule, run settings.

A YAML (or JSON) file with these sections; every key is checked at load and an unknown key or an
impossible value raises ConfigError naming it (e.g. `train.stepz`).

```yaml
model: {preset: ptmoe-tiny, overrides: {vocab_size: 2048}}   # vocab_size "auto": from data.tokenizer
# or model: {init_from: CKPT_DIR} to start from a checkpoint's config and weights (e.g. upcycled)
data:
  seq_len: 128
  batch_size: 8
  tokenizer: out/demo/tokenizer          # optional: sets vocab_size when it is "auto"
  mixture: [{name: web, path: out/demo/tokens, weight: 1.0}]
  eval: {holdout_permille: 50}           # or {datasets: [{name, path}]}
  packing: stream                        # or buckets: whole documents by length (training/data/buckets.py)
  buckets: [1024, 4096]                  # packing: buckets; the largest must equal seq_len
optim: {lr: 3.0e-3, weight_decay: 0.1, betas: [0.9, 0.95], eps: 1.0e-8, grad_clip: 1.0, grad_accum: 1}
schedule: {warmup_steps: 20, decay: cosine, min_lr_ratio: 0.1}   # decay: cosine | linear | constant
train: {steps: 300, seed: 0, out: out/run, log_every: 10, eval_every: 50, eval_batches: 4,
        ckpt_every: 100, keep_checkpoints: 2, device: auto, tensorboard: false, parallel: none,
        activation_checkpointing: false}   # recompute layer activations in backward (long contexts)
distill: {teacher: CKPT_DIR, alpha: 0.5, temperature: 2.0, top_k: 0}   # optional
vision: {encoder: vitdet-tiny, pairs: [...], stages: [...]}   # optional: training/vision/run_config.py
```
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import yaml

from corpus.errors import ConfigError
from training.vision.run_config import parse_vision


@dataclass
class MixtureEntry:
    name: str
    path: str
    weight: float = 1.0


@dataclass
class DataConfig:
    seq_len: int = 128
    batch_size: int = 8
    tokenizer: str | None = None
    mixture: list[MixtureEntry] = field(default_factory=list)
    eval: dict[str, Any] = field(default_factory=lambda: {"holdout_permille": 50})
    packing: str = "stream"      # stream | buckets (whole documents by length bucket)
    buckets: list[int] = field(default_factory=list)


@dataclass
class OptimConfig:
    lr: float = 3e-3
    weight_decay: float = 0.1
    betas: list[float] = field(default_factory=lambda: [0.9, 0.95])
    eps: float = 1e-8
    grad_clip: float = 1.0
    grad_accum: int = 1


@dataclass
class ScheduleConfig:
    warmup_steps: int = 20
    decay: str = "cosine"
    min_lr_ratio: float = 0.1


@dataclass
class RunConfig:
    steps: int = 300
    seed: int = 0
    out: str = "out/run"
    log_every: int = 10
    eval_every: int = 50
    eval_batches: int = 4
    ckpt_every: int = 100
    keep_checkpoints: int = 2
    device: str = "auto"
    tensorboard: bool = False
    parallel: str = "none"       # none | ddp | fsdp | tracks (PT-MoE track parallel); under torchrun
    activation_checkpointing: bool = False


@dataclass
class DistillConfig:
    teacher: str | None = None
    alpha: float = 0.5
    temperature: float = 2.0
    top_k: int = 0


@dataclass
class ModelSection:
    preset: str = "tiny"
    overrides: dict[str, Any] = field(default_factory=dict)
    init_from: str | None = None   # a checkpoint dir (e.g. from `cidermill upcycle`): its config and weights


@dataclass
class TrainConfig:
    model: ModelSection = field(default_factory=ModelSection)
    data: DataConfig = field(default_factory=DataConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    schedule: ScheduleConfig = field(default_factory=ScheduleConfig)
    train: RunConfig = field(default_factory=RunConfig)
    distill: DistillConfig = field(default_factory=DistillConfig)
    vision: dict[str, Any] | None = None   # staged multimodal training: see training/vision/run_config.py

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _section(cls, raw: Any, where: str):
    if raw is None:
        return cls()
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a mapping, got {type(raw).__name__}")
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(f"unknown key {where}.{unknown[0]} (known in {where}: {', '.join(sorted(known))})")
    return cls(**raw)


def _num(where: str, v: Any, kind=float, lo: float | None = None, hi: float | None = None, lo_open=False) -> None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (kind is int and not isinstance(v, int)):
        raise ConfigError(f"{where} must be {'an integer' if kind is int else 'a number'}, got {v!r}")
    if lo is not None and (v <= lo if lo_open else v < lo):
        raise ConfigError(f"{where} must be {'>' if lo_open else '>='} {lo}, got {v}")
    if hi is not None and v > hi:
        raise ConfigError(f"{where} must be <= {hi}, got {v}")


def parse_config(raw: Any) -> TrainConfig:
    if not isinstance(raw, dict):
        raise ConfigError("train config must be a mapping with sections model, data, optim, schedule, train, distill")
    known = {f.name for f in fields(TrainConfig)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(f"unknown key {unknown[0]} (sections: {', '.join(sorted(known))})")
    model = raw.get("model")
    if isinstance(model, str):
        model = {"preset": model}
    cfg = TrainConfig(
        model=_section(ModelSection, model, "model"),
        data=_section(DataConfig, raw.get("data"), "data"),
        optim=_section(OptimConfig, raw.get("optim"), "optim"),
        schedule=_section(ScheduleConfig, raw.get("schedule"), "schedule"),
        train=_section(RunConfig, raw.get("train"), "train"),
        distill=_section(DistillConfig, raw.get("distill"), "distill"),
        vision=raw.get("vision"),
    )
    if cfg.vision is not None:
        parse_vision(cfg.vision)  # checked at load like every other section
    mix = []
    if not isinstance(cfg.data.mixture, list) or not cfg.data.mixture:
        raise ConfigError("data.mixture must be a non-empty list of {name, path, weight}")
    for i, m in enumerate(cfg.data.mixture):
        e = _section(MixtureEntry, m, f"data.mixture[{i}]") if isinstance(m, dict) else None
        if e is None:
            raise ConfigError(f"data.mixture[{i}] must be a mapping {{name, path, weight}}")
        _num(f"data.mixture[{i}].weight", e.weight, lo=0)
        mix.append(e)
    if len({m.name for m in mix}) != len(mix):
        raise ConfigError("data.mixture names must be unique")
    cfg.data.mixture = mix
    _num("data.seq_len", cfg.data.seq_len, int, lo=1)
    _num("data.batch_size", cfg.data.batch_size, int, lo=1)
    if cfg.data.packing not in ("stream", "buckets"):
        raise ConfigError(f"data.packing must be stream or buckets, got {cfg.data.packing!r}")
    if cfg.data.packing == "buckets":
        b = cfg.data.buckets
        if not (isinstance(b, list) and b and all(isinstance(x, int) and x >= 2 for x in b) and b == sorted(set(b))):
            raise ConfigError(f"data.buckets must be a list of increasing lengths >= 2, got {b!r}")
        if b[-1] != cfg.data.seq_len:
            raise ConfigError(f"data.buckets: the largest bucket ({b[-1]}) must equal data.seq_len ({cfg.data.seq_len})")
    ev = cfg.data.eval or {}
    bad = sorted(set(ev) - {"holdout_permille", "datasets"})
    if bad:
        raise ConfigError(f"unknown key data.eval.{bad[0]} (known: holdout_permille, datasets)")
    if "holdout_permille" in ev:
        _num("data.eval.holdout_permille", ev["holdout_permille"], int, lo=0, hi=999)
    _num("optim.lr", cfg.optim.lr, lo=0, lo_open=True)
    _num("optim.weight_decay", cfg.optim.weight_decay, lo=0)
    _num("optim.grad_clip", cfg.optim.grad_clip, lo=0)
    _num("optim.grad_accum", cfg.optim.grad_accum, int, lo=1)
    if not (isinstance(cfg.optim.betas, list) and len(cfg.optim.betas) == 2 and all(0 <= b < 1 for b in cfg.optim.betas)):
        raise ConfigError(f"optim.betas must be two numbers in [0, 1), got {cfg.optim.betas!r}")
    if cfg.schedule.decay not in ("cosine", "linear", "constant"):
        raise ConfigError(f"schedule.decay must be cosine, linear or constant, got {cfg.schedule.decay!r}")
    _num("schedule.warmup_steps", cfg.schedule.warmup_steps, int, lo=0)
    _num("schedule.min_lr_ratio", cfg.schedule.min_lr_ratio, lo=0, hi=1)
    for k in ("steps", "log_every", "eval_every", "eval_batches", "ckpt_every", "keep_checkpoints"):
        _num(f"train.{k}", getattr(cfg.train, k), int, lo=1 if k in ("steps", "log_every", "keep_checkpoints") else 0)
    if cfg.train.device not in ("auto", "cpu", "cuda"):
        raise ConfigError(f"train.device must be auto, cpu or cuda, got {cfg.train.device!r}")
    if cfg.distill.teacher is not None:
        _num("distill.alpha", cfg.distill.alpha, lo=0, hi=1)
        _num("distill.temperature", cfg.distill.temperature, lo=0, lo_open=True)
        _num("distill.top_k", cfg.distill.top_k, int, lo=0)
    return cfg


def load_config(path: str) -> TrainConfig:
    if not os.path.exists(path):
        raise ConfigError(f"{path}: config file not found")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if path.endswith(".json"):
            raw = json.loads(text)
        else:
            raw = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ConfigError(f"{path}: unreadable config ({type(e).__name__}: {str(e).splitlines()[0]})") from None
    except Exception as e:  # yaml.YAMLError
        raise ConfigError(f"{path}: unreadable config ({type(e).__name__}: {str(e).splitlines()[0]})") from None
    try:
        return parse_config(raw)
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None
    except TypeError as e:
        raise ConfigError(f"{path}: {e}") from None
