"""The report's Pillow charts: real PNGs whose bars follow the counts, same stats -> same bytes."""
import numpy as np
from PIL import Image

from pipelines.report_plots import GREEN, funnel_png, histogram_png


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def _green_run(img: Image.Image, y: int) -> int:
    return sum(1 for x in range(img.width) if img.getpixel((x, y)) == _rgb(GREEN))


def test_funnel_bars_scale_with_kept_rows_and_bytes_repeat(tmp_path):
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    funnel_png(["input", "dedup", "<script>"], [1000, 990, 500], [990, 500, 0], str(a))
    funnel_png(["input", "dedup", "<script>"], [1000, 990, 500], [990, 500, 0], str(b))
    assert a.read_bytes() == b.read_bytes()
    assert Image.open(a).format == "PNG"
    img = Image.open(a).convert("RGB")
    row = lambda i: 34 + i * 32 + 11  # middle of bar i (layout of funnel_png)  # noqa: E731
    first, second, third = (_green_run(img, row(i)) for i in range(3))
    assert first > 0 and abs(second / first - 500 / 990) < 0.02
    assert third == 0  # nothing kept: no green bar


def test_histogram_draws_nonzero_bins_and_survives_degenerate_input(tmp_path):
    p = tmp_path / "h.png"
    histogram_png("quality: score", [0.0, 0.5, 1.0], [0, 7], str(p))
    img = Image.open(p).convert("RGB")
    is_blue = (np.asarray(img) == (9, 105, 218)).all(axis=2)
    blue = int(is_blue.sum())
    assert blue > 1000
    left_half = int(is_blue[26:200, 44:44 + 150].sum())
    assert left_half == 0  # the empty first bin draws nothing
    histogram_png("empty", [1.0, 1.0], [0], str(tmp_path / "e.png"))  # zero-width range, no rows
    assert Image.open(tmp_path / "e.png").size == img.size
