"""The ``vision:`` section of a `cidermill train` config: encoder, adapter, image data, stages.

```yaml
vision:
  encoder: vitdet-tiny            # training.vision.config preset
  encoder_overrides: {}           # e.g. {registers: 0}
  encoder_init: null              # a `train-clip --vision` checkpoint: stage 1's encoder starts stage 2
  adapter_tokens: 16              # image tokens per image in the LM (a square)
  small_decoder: tiny             # LM preset of stage 2's small decoder (vocab and context: the target's)
  pairs: [{name: charts, path: out/demo/synth/charts, weight: 1.0}]
  interleaved: [{name: docs, path: out/demo/images/interleaved, images: [out/demo/images/pairs], weight: 0.5}]
  heldout: 0.1                    # share of pair rows (by id hash) kept for QA/grounding evaluation
  max_rows: 2000                  # pair rows read per dataset
  max_eval: 200                   # held-out questions evaluated
  eval_text_batches: 4
  stages:
    - {name: text, steps: 100}                                  # target LM on the text mixture
    - {name: align, steps: 100, text_weight: 0.3}               # encoder + adapter + small decoder
    - {name: adapt, steps: 100, text_weight: 0.5, train: [adapter, lm]}   # a fresh adapter into the target LM
```

Stage kinds (``name``): ``text`` trains the target LM on ``data.mixture`` only; ``align`` trains the
encoder, a stage-2 adapter and the small decoder on text + image-text data; ``adapt`` trains a
second adapter, initialised from scratch, into the target LM (and whatever ``train`` lists:
``adapter``, ``lm``, ``encoder``), keeping the text mixture at ``text_weight``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from corpus.errors import ConfigError

STAGE_KINDS = ("text", "align", "adapt")
TRAINABLE = {"text": ("lm",), "align": ("encoder", "adapter", "lm"), "adapt": ("adapter", "lm", "encoder")}
DEFAULT_TRAIN = {"text": ["lm"], "align": ["encoder", "adapter", "lm"], "adapt": ["adapter", "lm"]}


@dataclass
class Stage:
    name: str
    steps: int
    text_weight: float = 0.5
    train: list[str] = field(default_factory=list)
    lr: float | None = None


@dataclass
class DataEntry:
    name: str
    path: str
    weight: float = 1.0
    images: list[str] = field(default_factory=list)   # interleaved only: PAIRS dirs holding the images


@dataclass
class VisionRun:
    encoder: str = "vitdet-tiny"
    encoder_overrides: dict = field(default_factory=dict)
    encoder_init: str | None = None    # a `train-clip --vision` checkpoint: stage 1's encoder starts stage 2
    adapter_tokens: int = 16
    small_decoder: str = "tiny"
    small_decoder_overrides: dict = field(default_factory=dict)
    pairs: list[DataEntry] = field(default_factory=list)
    interleaved: list[DataEntry] = field(default_factory=list)
    heldout: float = 0.1
    max_rows: int = 2000
    max_eval: int = 200
    eval_text_batches: int = 4
    stages: list[Stage] = field(default_factory=list)

    @property
    def total_steps(self) -> int:
        return sum(s.steps for s in self.stages)

    def stage_at(self, step: int) -> tuple[int, int]:
        """(stage index, first global step of that stage) for the step about to run."""
        start = 0
        for i, s in enumerate(self.stages):
            if step < start + s.steps:
                return i, start
            start += s.steps
        return len(self.stages) - 1, start - self.stages[-1].steps


def _mapping(raw: Any, where: str, cls) -> Any:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a mapping")
    known = set(cls.__dataclass_fields__)
    bad = sorted(set(raw) - known)
    if bad:
        raise ConfigError(f"unknown key {where}.{bad[0]} (known: {', '.join(sorted(known))})")
    try:
        return cls(**raw)
    except TypeError as e:
        raise ConfigError(f"{where}: {e}") from None


def parse_vision(raw: Any) -> VisionRun:
    v = _mapping(raw, "vision", VisionRun)
    v.pairs = [_mapping(e, f"vision.pairs[{i}]", DataEntry) for i, e in enumerate(v.pairs or [])]
    v.interleaved = [_mapping(e, f"vision.interleaved[{i}]", DataEntry) for i, e in enumerate(v.interleaved or [])]
    v.stages = [_mapping(e, f"vision.stages[{i}]", Stage) for i, e in enumerate(v.stages or [])]
    if not v.stages:
        raise ConfigError("vision.stages must list at least one stage (text, align, adapt)")
    if not v.pairs and not v.interleaved and any(s.name != "text" for s in v.stages):
        raise ConfigError("vision.pairs or vision.interleaved must name image-text data for align/adapt stages")
    names = [e.name for e in v.pairs + v.interleaved]
    if len(set(names)) != len(names):
        raise ConfigError("vision.pairs and vision.interleaved names must be unique")
    for i, s in enumerate(v.stages):
        if s.name not in STAGE_KINDS:
            raise ConfigError(f"vision.stages[{i}].name {s.name!r} is not one of {', '.join(STAGE_KINDS)}")
        if not isinstance(s.steps, int) or s.steps < 1:
            raise ConfigError(f"vision.stages[{i}].steps must be an integer >= 1")
        if not 0 <= s.text_weight <= 1:
            raise ConfigError(f"vision.stages[{i}].text_weight must be in [0, 1]")
        s.train = list(s.train or DEFAULT_TRAIN[s.name])
        bad = [t for t in s.train if t not in TRAINABLE[s.name]]
        if bad:
            raise ConfigError(f"vision.stages[{i}].train: {bad[0]!r} cannot train in a {s.name} stage "
                              f"(choose from {', '.join(TRAINABLE[s.name])})")
    if not 0 < v.heldout < 1:
        raise ConfigError("vision.heldout must be in (0, 1)")
    return v
