"""Stage recipes: continued pre-training as a list of stages run in order (`cidermill train --recipe`).

A recipe is one YAML file: the token datasets by name, the sections every stage shares (model,
data, optim, train: as in a train config, training/train_config.py), then the stages. Each stage
says what changes:

```yaml
name: core
sources: {web: out/demo/tokens, code: out/code/tokens, math: out/math/tokens}
model: {preset: tiny, overrides: {vocab_size: auto}}
data: {tokenizer: out/demo/tokenizer, batch_size: 8, eval: {holdout_permille: 50}}
train: {seed: 0, out: out/recipe, ckpt_every: 50}
stages:
  - name: text
    mixture: {web: 1.0}                  # source name -> weight (normalised)
    seq_len: 128
    rope_theta: 10000
    lr: {peak: 3.0e-3, warmup_steps: 20, decay: cosine, min_lr_ratio: 0.1}
    tokens: 200000                       # token budget: steps = ceil(tokens / (seq_len * batch_size * grad_accum))
  - name: long
    mixture: {web: 0.5, books: 0.5}
    seq_len: 65536
    buckets: [4096, 16384, 65536]        # packing by length bucket (training/data/buckets.py)
    batch_size: 1
    rope_theta: 500000
    activation_checkpointing: true
    lr: {peak: 1.0e-3, warmup_steps: 2}
    tokens: 262144
```

Running: stage i is an ordinary training run in ``OUT/stages/NN-name`` whose model starts from
stage i-1's final checkpoint (``model.init_from``; RoPE base and context length are overrides),
with a fresh AdamW and its own warmup + decay, as the vision stages do. Every stage checkpoints
at its end, and a finished stage leaves ``done.json``: a resumed recipe skips finished stages and
resumes the current one from its latest checkpoint, so it takes exactly the steps of an
uninterrupted run, inside a stage and across a switch. ``stop_after`` counts steps over the whole
recipe. ``OUT/recipe_report.json`` lists each stage's steps, losses and tokens seen per source.

Refused with the name: a stage that names a source the recipe does not define, a source with no
dataset, a stage whose weights sum to zero, a stage that was finished under a different config.
"""
from __future__ import annotations

import copy
import json
import math
import os
import shutil
from dataclasses import dataclass, field
from typing import Any, Callable

from corpus import objectstore
from corpus.errors import ConfigError
from corpus.manifest import MANIFEST_NAME
from training import checkpoint as ck
from training.tokenizer import load_tokenizer
from training.train_config import TrainConfig, parse_config
from training.trainer import Trainer, read_log, round_vocab
from training.vision.run_config import parse_vision
from training.vision.stages import VisionTrainer

REPORT_FILE = "recipe_report.json"
STAGE_KEYS = {"name", "mixture", "seq_len", "rope_theta", "lr", "tokens", "buckets", "batch_size",
              "activation_checkpointing", "eval_batches", "vision"}
LM_DIR = "lm"   # an image stage's target LM, exported for the next stage
LR_KEYS = {"peak", "warmup_steps", "decay", "min_lr_ratio"}


@dataclass
class Stage:
    name: str
    mixture: dict[str, float]
    seq_len: int
    tokens: int = 0
    rope_theta: float | None = None
    lr: dict[str, Any] = field(default_factory=dict)
    buckets: list[int] = field(default_factory=list)
    batch_size: int | None = None
    activation_checkpointing: bool = False
    eval_batches: int | None = None
    vision: dict[str, Any] | None = None   # an image stage: training/vision/run_config.py (steps from its stages)


@dataclass
class Recipe:
    name: str
    sources: dict[str, str]
    base: dict[str, Any]          # model, data, optim, schedule, train sections shared by every stage
    stages: list[Stage]

    @property
    def out(self) -> str:
        return self.base.get("train", {}).get("out", "out/recipe")

    def stage_dir(self, i: int, out: str | None = None) -> str:
        return os.path.join(out or self.out, "stages", f"{i:02d}-{self.stages[i].name}")


def _stage(raw: Any, i: int) -> Stage:
    where = f"stages[{i}]"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a mapping")
    bad = sorted(set(raw) - STAGE_KEYS)
    if bad:
        raise ConfigError(f"unknown key {where}.{bad[0]} (known: {', '.join(sorted(STAGE_KEYS))})")
    for k in ("name", "mixture", "seq_len") + (() if raw.get("vision") else ("tokens",)):
        if k not in raw:
            raise ConfigError(f"{where} needs {k}")
    st = Stage(**raw)
    where = f"stage {st.name!r}"
    if not isinstance(st.mixture, dict) or not st.mixture:
        raise ConfigError(f"{where}: mixture must map source names to weights")
    for n, w in st.mixture.items():
        if isinstance(w, bool) or not isinstance(w, (int, float)) or w < 0:
            raise ConfigError(f"{where}: weight of source {n!r} must be a number >= 0, got {w!r}")
    if sum(st.mixture.values()) <= 0:
        raise ConfigError(f"{where}: mixture weights sum to zero (a stage must train on something)")
    for k in ("seq_len",) + (() if st.vision else ("tokens",)):
        v = getattr(st, k)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ConfigError(f"{where}: {k} must be an integer >= 1, got {v!r}")
    bad = sorted(set(st.lr or {}) - LR_KEYS)
    if bad:
        raise ConfigError(f"{where}: unknown key lr.{bad[0]} (known: {', '.join(sorted(LR_KEYS))})")
    return st


def _dataset_exists(path: str) -> bool:
    manifest = objectstore.join(path, MANIFEST_NAME)
    return objectstore.exists(manifest) if objectstore.is_remote(path) else os.path.exists(manifest)


def parse_recipe(raw: Any, check_paths: bool = True) -> Recipe:
    if not isinstance(raw, dict):
        raise ConfigError("a recipe must be a mapping with name, sources and stages")
    known = {"name", "sources", "stages", "model", "data", "optim", "schedule", "train"}
    bad = sorted(set(raw) - known)
    if bad:
        raise ConfigError(f"unknown recipe key {bad[0]} (known: {', '.join(sorted(known))})")
    sources = raw.get("sources")
    if not isinstance(sources, dict) or not sources:
        raise ConfigError("recipe sources must map names to token dataset paths")
    stages_raw = raw.get("stages")
    if not isinstance(stages_raw, list) or not stages_raw:
        raise ConfigError("recipe stages must be a non-empty list")
    stages = [_stage(s, i) for i, s in enumerate(stages_raw)]
    names = [s.name for s in stages]
    if len(set(names)) != len(names):
        raise ConfigError("recipe stage names must be unique")
    for st in stages:
        for n, w in st.mixture.items():
            if n not in sources:
                raise ConfigError(f"stage {st.name!r}: source {n!r} is not in the recipe's sources "
                                  f"({', '.join(sorted(sources))})")
            if check_paths and w > 0 and not _dataset_exists(sources[n]):
                raise ConfigError(f"stage {st.name!r}: source {n!r}: no token dataset at {sources[n]} "
                                  f"(no {MANIFEST_NAME})")
    base = {k: copy.deepcopy(raw[k]) for k in ("model", "data", "optim", "schedule", "train") if k in raw}
    if isinstance(base.get("model"), str):
        base["model"] = {"preset": base["model"]}
    over = base.get("model", {}).get("overrides", {})
    if check_paths and any(s.vision for s in stages) and over.get("vocab_size") == "auto":
        # image stages need one id above the tokenizer (the image placeholder), so every stage
        # (sharing one vocabulary) gets it from the start
        tok = base.get("data", {}).get("tokenizer")
        if not tok:
            raise ConfigError("model.overrides.vocab_size is auto but data.tokenizer is not set")
        over["vocab_size"] = round_vocab(load_tokenizer(tok).get_vocab_size() + 1)
    recipe = Recipe(str(raw.get("name") or "recipe"), dict(sources), base, stages)
    for i in range(len(stages)):   # every stage's config is checked now, not hours into the run
        stage_config(recipe, i, init_from=None)
    return recipe


def load_recipe(path: str, check_paths: bool = True) -> Recipe:
    import yaml
    if not os.path.exists(path):
        raise ConfigError(f"{path}: recipe file not found")
    try:
        raw = yaml.safe_load(open(path, encoding="utf-8").read())
    except Exception as e:  # yaml.YAMLError, OSError, UnicodeDecodeError
        raise ConfigError(f"{path}: unreadable recipe ({type(e).__name__}: {str(e).splitlines()[0]})") from None
    try:
        return parse_recipe(raw, check_paths)
    except (ConfigError, TypeError) as e:
        raise ConfigError(f"{path}: {e}") from None


def stage_steps(recipe: Recipe, st: Stage) -> int:
    if st.vision:
        return parse_vision(st.vision).total_steps
    data, optim = recipe.base.get("data", {}), recipe.base.get("optim", {})
    per_step = st.seq_len * (st.batch_size or data.get("batch_size", 8)) * optim.get("grad_accum", 1)
    return max(1, math.ceil(st.tokens / per_step))


def stage_config(recipe: Recipe, i: int, init_from: str | None, out: str | None = None) -> TrainConfig:
    """Stage i as an ordinary train config: the shared sections with the stage's changes."""
    st = recipe.stages[i]
    raw = copy.deepcopy(recipe.base)
    model = raw.setdefault("model", {})
    over = model.setdefault("overrides", {})
    context = max(int(over.get("max_seq_len", 0)), st.seq_len)
    if init_from:
        model["init_from"] = init_from
        over.pop("vocab_size", None)     # the previous stage's checkpoint fixes the vocabulary
        context = max(context, int(ck.read_model_config(init_from)["max_seq_len"]))   # never shrinks
    if st.rope_theta is not None:
        over["rope_theta"] = float(st.rope_theta)
    over["max_seq_len"] = context
    if st.vision:
        raw["vision"] = copy.deepcopy(st.vision)
    data = raw.setdefault("data", {})
    data["mixture"] = [{"name": n, "path": recipe.sources[n], "weight": float(w)}
                       for n, w in st.mixture.items() if w > 0]
    data["seq_len"] = st.seq_len
    if st.batch_size:
        data["batch_size"] = st.batch_size
    if st.buckets:
        data["packing"], data["buckets"] = "buckets", list(st.buckets)
    lr = st.lr or {}
    if "peak" in lr:
        raw.setdefault("optim", {})["lr"] = lr["peak"]
    sched = raw.setdefault("schedule", {})
    sched.update({k: v for k, v in lr.items() if k != "peak"})
    train = raw.setdefault("train", {})
    train["out"] = recipe.stage_dir(i, out)
    train["steps"] = stage_steps(recipe, st)
    train["ckpt_every"] = max(1, int(train.get("ckpt_every", 100)))   # a stage always ends on a checkpoint
    train["activation_checkpointing"] = bool(st.activation_checkpointing or train.get("activation_checkpointing"))
    if st.eval_batches is not None:
        train["eval_batches"] = st.eval_batches
    try:
        return parse_config(raw)
    except ConfigError as e:
        raise ConfigError(f"stage {st.name!r}: {e}") from None


def _done_path(stage_dir: str) -> str:
    return os.path.join(stage_dir, "done.json")


def _stage_key(cfg: TrainConfig) -> dict[str, Any]:
    """What must not change under a finished stage for a resume to be exact."""
    d = cfg.to_dict()
    d["train"] = {k: v for k, v in d["train"].items() if k not in ("out", "log_every", "tensorboard")}
    return json.loads(json.dumps(d, default=str))


def run_recipe(recipe: Recipe, out: str | None = None, resume: bool = True, stop_after: int | None = None,
               progress: Callable[[dict], None] | None = None,
               log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run the stages in order (see the module docstring); returns the run report."""
    out = out or recipe.out
    log = log or (lambda m: None)
    os.makedirs(out, exist_ok=True)
    if not resume and os.path.isdir(os.path.join(out, "stages")):
        shutil.rmtree(os.path.join(out, "stages"))
    offset, prev_ckpt, stages = 0, None, []
    for i, st in enumerate(recipe.stages):
        cfg = stage_config(recipe, i, prev_ckpt, out)
        sdir = cfg.train.out
        done = _done_path(sdir)
        if os.path.exists(done):
            rec = json.load(open(done))
            if rec["config"] != _stage_key(cfg):
                raise ConfigError(f"stage {st.name!r} finished under a different config; rerun with --no-resume "
                                  f"or a new out directory")
            log(f"stage {st.name}: finished earlier ({rec['steps']} steps)")
        else:
            if stop_after is not None and stop_after <= offset:
                break
            log(f"stage {st.name}: {cfg.train.steps} steps at seq_len {st.seq_len}"
                + (f", RoPE base {st.rope_theta:g}" if st.rope_theta else ""))
            stage_progress = (lambda r, o=offset, n=st.name: progress({**r, "step": r["step"] + o, "stage": n})
                              ) if progress else None
            trainer = VisionTrainer if cfg.vision else Trainer
            res = trainer(cfg, resume=True, progress=stage_progress,
                          stop_after=None if stop_after is None else stop_after - offset).run()
            seen = res.get("tokens_by_source")
            if res["steps"] < cfg.train.steps:
                stages.append(_stage_summary(st, cfg, read_log(sdir), seen, finished=False))
                break
            if cfg.vision:
                export_vision_lm(ck.latest_checkpoint(sdir), os.path.join(sdir, LM_DIR))
            rec = {"steps": res["steps"], "tokens_by_source": seen, "config": _stage_key(cfg)}
            with open(done + ".tmp", "w") as f:
                json.dump(rec, f, indent=1)
            os.replace(done + ".tmp", done)
        stages.append(_stage_summary(st, cfg, read_log(sdir), rec["tokens_by_source"], finished=True))
        prev_ckpt = os.path.join(sdir, LM_DIR) if cfg.vision else ck.latest_checkpoint(sdir)
        offset += cfg.train.steps
    report = {"recipe": recipe.name, "stages": stages, "finished": len(stages) == len(recipe.stages)
              and all(s["finished"] for s in stages), "checkpoint": prev_ckpt}
    with open(os.path.join(out, REPORT_FILE), "w") as f:
        json.dump(report, f, indent=1)
    return report


def export_vision_lm(ckpt: str, dest: str) -> None:
    """The target LM of an image stage's checkpoint as a plain model checkpoint (``lm.*`` weights
    and the LM config), so the next stage starts from it like from any other stage."""
    from safetensors.torch import load_file, save_file
    os.makedirs(dest, exist_ok=True)
    weights = {k[3:]: v for k, v in load_file(os.path.join(ckpt, ck.MODEL_FILE)).items() if k.startswith("lm.")}
    save_file(weights, os.path.join(dest, ck.MODEL_FILE + ".tmp"))
    with open(os.path.join(dest, ck.CONFIG_FILE), "w") as f:
        json.dump(ck.read_model_config(ckpt)["model"], f, indent=1)
    os.replace(os.path.join(dest, ck.MODEL_FILE + ".tmp"), os.path.join(dest, ck.MODEL_FILE))


def _stage_summary(st: Stage, cfg: TrainConfig, rows: list[dict], seen: dict[str, int] | None,
                   finished: bool) -> dict:
    ev = [r for r in rows if "eval_loss" in r]
    return {"name": st.name, "finished": finished, "steps": rows[-1]["step"] if rows else 0,
            "planned_steps": cfg.train.steps, "seq_len": st.seq_len, "rope_theta": st.rope_theta,
            "packing": "images" if cfg.vision else cfg.data.packing, "token_budget": st.tokens or None,
            "tokens_by_source": seen,   # None for an image stage (its loader mixes samples, not tokens)
            "first_loss": rows[0]["loss"] if rows else None, "last_loss": rows[-1]["loss"] if rows else None,
            "last_eval_loss": ev[-1]["eval_loss"] if ev else None, "run_dir": cfg.train.out}
