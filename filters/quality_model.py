"""Model-based quality: a fastText classifier on word unigrams + bigrams (DCLM-style).

Labels are `__label__hq` (keep) and `__label__lq`; the score is P(hq). The filter keeps documents
with score >= `threshold`, or, with `top_percent`, the best p% of the corpus: that threshold is a
global percentile the pipeline computes in a first pass (filters/percentile.py).
The default model, filters/models/quality.ftz, is rebuilt by `python -m datatools.quality_data`.
"""
from __future__ import annotations

import json
import os
import random
import tempfile

from corpus.errors import ConfigError
from filters.base import Doc, TextFilter
from filters.langid import load_fasttext
from filters.words import normalize_for_model

DEFAULT_MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models", "quality.ftz")
HQ, LQ = "__label__hq", "__label__lq"
# The keep threshold on P(hq). 0.25 has the best held-out F1 of the cuts the default model's eval
# records (filters/models/quality.eval.json: recall 1.0 at 0.25 vs 0.995 at 0.5, precision nearly equal),
# so the text pipeline's config and the class share this one value.
DEFAULT_THRESHOLD = 0.25


def read_texts(path: str) -> list[str]:
    """Training texts: `.jsonl` ("text" field per line) or plain text (documents split by blank lines
    of the form `\\f` or by lines, one document per line)."""
    if not os.path.exists(path):
        raise ConfigError(f"{path}: training file not found")
    with open(path, encoding="utf-8", errors="replace") as f:
        if path.endswith(".jsonl"):
            return [json.loads(ln)["text"] for ln in f if ln.strip()]
        data = f.read()
    sep = "\f" if "\f" in data else "\n"
    return [t for t in data.split(sep) if t.strip()]


def train_quality_model(positives: list[str], negatives: list[str], out: str, *, epoch: int = 5,
                        lr: float = 0.1, dim: int = 64, bucket: int = 200_000, word_ngrams: int = 2,
                        min_count: int = 2, seed: int = 0, quantize: bool = True, threads: int = 1) -> str:
    """Train and save a fastText classifier; `out` ending in .ftz is quantized (small)."""
    import fasttext  # noqa: PLC0415
    if not hasattr(fasttext, "train_supervised"):
        raise ConfigError("fasttext has no train_supervised: fasttext-predict replaced it; "
                          "reinstall with `pip install --force-reinstall fasttext==0.9.3`")
    if not positives or not negatives:
        raise ConfigError("need at least one positive and one negative training document")
    lines = [f"{HQ} {normalize_for_model(t)}" for t in positives] + [f"{LQ} {normalize_for_model(t)}" for t in negatives]
    lines = [ln for ln in lines if len(ln.split()) > 1]
    random.Random(seed).shuffle(lines)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
        train_path = f.name
    try:
        for attempt in range(4):  # fastText diverges to NaN on some data/lr pairs: halve lr and retry
            try:
                model = fasttext.train_supervised(input=train_path, epoch=epoch, lr=lr, dim=dim,
                                                  wordNgrams=word_ngrams, bucket=bucket, minCount=min_count,
                                                  thread=threads, seed=seed, verbose=0)
                break
            except RuntimeError as e:
                if "NaN" not in str(e) or attempt == 3:
                    raise ConfigError(f"fastText training failed ({e}); try a lower --lr") from None
                lr /= 2
        if quantize and out.endswith(".ftz"):
            model.quantize(input=train_path, qnorm=True, retrain=False, cutoff=min(100_000, bucket))
    finally:
        os.remove(train_path)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    model.save_model(out)
    return out


def hq_probability(model, text: str) -> float:
    line = normalize_for_model(text)
    if not line:
        return 0.0
    out = model.f.predict(line + "\n", 2, 0.0, "strict")
    for p, lab in out:
        if lab == HQ:
            return float(p)
    return 1.0 - float(out[0][0]) if out else 0.0


def quality_decision(score: float, language: str | None, threshold: float, languages=None,
                     reason: str = "quality:low_score") -> tuple[bool, str | None]:
    """Keep if the language is not judged (`languages` given and not in it) or score >= threshold."""
    if languages and language not in languages:
        return True, None
    return (True, None) if score >= threshold else (False, reason)


class QualityModel(TextFilter):
    name = "quality"
    score_ranges = {"quality_score": (0.0, 1.0)}
    OPTIONS = {"model", "threshold", "top_percent", "languages"}

    def __init__(self, model: str | None = None, threshold: float = DEFAULT_THRESHOLD, top_percent: float | None = None,
                 languages: list[str] | None = None):
        self.model_path = model or DEFAULT_MODEL
        if not os.path.exists(self.model_path):
            raise ConfigError(f"{self.model_path}: quality model not found (rebuild the default one with "
                              "`python -m datatools.quality_data`, or train one with `cidermill train-quality`)")
        self.threshold = float(threshold)
        if top_percent is not None and not 0 < float(top_percent) <= 100:
            raise ConfigError(f"quality.top_percent must be in (0, 100], got {top_percent}")
        self.top_percent = float(top_percent) if top_percent is not None else None
        self.languages = frozenset(languages) if languages else None  # judge only these; others pass
        self._model = None

    @classmethod
    def input_files(cls, cfg: dict) -> list[str]:
        return [cfg.get("model") or DEFAULT_MODEL]

    @property
    def model(self):
        if self._model is None:
            self._model = load_fasttext(self.model_path)
        return self._model

    def score(self, doc: Doc) -> dict[str, float]:
        return {"quality_score": hq_probability(self.model, doc.text)}

    def decide(self, s: dict[str, float], doc: Doc | None = None, threshold: float | None = None
               ) -> tuple[bool, str | None]:
        t = self.threshold if threshold is None else threshold
        return quality_decision(s["quality_score"], doc.language if doc is not None else None, t,
                                self.languages if doc is not None else None,
                                "quality:low_score" if threshold is None else "quality:below_top_percent")
