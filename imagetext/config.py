"""Every option of the images stage, in one dataclass the pipeline and its row functions share."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from crawl.image_fetch import ImageFetchConfig
from filters.alt_text import AltTextConfig
from filters.clip_select import ClipSelectConfig
from filters.image_check import ImageCheckConfig
from filters.ocr_text_rich import TextRichConfig


@dataclass
class ImagesConfig:
    image: ImageCheckConfig = field(default_factory=ImageCheckConfig)
    alt: AltTextConfig = field(default_factory=AltTextConfig)
    fetch: ImageFetchConfig = field(default_factory=ImageFetchConfig)
    clip: ClipSelectConfig = field(default_factory=ClipSelectConfig)
    clip_model: str | None = None             # None: read from the checkpoint's metadata
    clip_checkpoint: str | None = None        # None with clip_model: random init (benchmarks only)
    clip_batch_size: int = 64
    clip_group_batches: int = 16              # batches per scoring work item (fewer partial batches)
    clip_threads: int | None = None
    warc_files: tuple[str, ...] | None = None  # read images from these WARC files instead of fetching them
    warc_missing: str = "drop"                 # srcs not in the WARC files: "drop" (image_not_in_warc) or "fetch"
    local_images: tuple[tuple[str, str], ...] | None = None  # (URL prefix, folder): srcs under it read from there
    interleaved_threshold: float | None = 0.1  # CLIP(image, surrounding text) needed to stay in a document
    near_dup_distance: int = 4                 # pHash Hamming bits; -1 turns near dedup off
    languages: tuple[str, ...] | None = None   # keep only pairs whose text is in these languages
    pii: bool = True                           # scrub PII in pair texts and interleaved text
    captions: bool = True                      # also make (image, figcaption) pairs
    store_dropped_images: bool = True          # keep image bytes on dropped rows (re-thresholding)
    samples_per_reason: int = 20
    sheet_tiles: int = 24
    ocr: TextRichConfig | None = None          # OCR images that passed their checks (off: unchanged speed)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["languages"] = list(self.languages) if self.languages else None
        d["warc_files"] = list(self.warc_files) if self.warc_files else None
        if self.local_images:   # absent when unused: the config (and the job key) of other runs is unchanged
            d["local_images"] = [list(x) for x in self.local_images]
        else:
            d.pop("local_images")
        return d
