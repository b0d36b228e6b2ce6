"""Where a chart's text goes: value ticks chosen from the data, margins from measured text.

matplotlib would find ticks with its locators and fit labels with tight_layout at draw time
(tight_layout draws the figure twice). Here both are decided once, before the code is written:
value axes get explicit "nice" ticks, labels and limits, and the subplot margins are solved from
the extents of the very strings that will be drawn, measured with the FreeType layout Agg draws
with. So tick labels, axis labels, titles and outside legends land inside the figure without
overlapping (tests/synth check every text box from the renderer), and the stored code states
its ticks instead of relying on a locator.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Sequence

import matplotlib
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.font_manager import FontProperties
from matplotlib.text import _get_text_metrics_with_cache

EDGE = 4.0           # px kept free at the figure border
TICK_GAP_PT = 7.0    # tick length 3.5 + tick label pad 3.5 (matplotlib defaults)
LABEL_PAD_PT = 4.0   # axes.labelpad
TITLE_PAD_PT = 6.0   # axes.titlepad (set in the chart's rc)
# legend layout in legend-font units (matplotlib defaults): borderaxespad + 2 borderpad + handle + gap
LEGEND_EM = 0.5 + 0.8 + 2.0 + 0.8


def half(v: float) -> float:
    """Font sizes on a half-point grid: matplotlib caches font lookups per size."""
    return round(v * 2) / 2


@functools.lru_cache(maxsize=None)
def _own_renderer(dpi: float) -> RendererAgg:
    return RendererAgg(8, 8, dpi)


@functools.lru_cache(maxsize=4096)
def _prop(family: str, size: float) -> FontProperties:
    # every field as the chart's rc sets it (matplotlib's defaults), so it equals the drawn Text's properties
    return FontProperties(family=[family, "DejaVu Sans"], style="normal", variant="normal", weight="normal",
                          stretch="normal", size=size, math_fontfamily="dejavusans")


_MEMO: dict[tuple[str, str, float, float], tuple[float, float, float]] = {}


def _metrics(s: str, family: str, size: float, dpi: float, renderer: RendererAgg | None) -> tuple[float, float, float]:
    """(width, height, descent) px: matplotlib's own text metrics, unhinted as charts draw.

    A miss is measured through `renderer` when given (the one the chart will be drawn with), which
    fills that renderer's metrics cache: the draw then reuses the layout instead of repeating it."""
    key = (s, family, size, dpi)
    m = _MEMO.get(key)
    if m is None:
        r = renderer if renderer is not None and renderer.dpi == dpi else _own_renderer(dpi)
        rc = matplotlib.rcParams
        hinting = rc._get("text.hinting")
        rc._set("text.hinting", "none")
        try:
            m = _get_text_metrics_with_cache(r, s, _prop(family, size), False, dpi)
        finally:
            rc._set("text.hinting", hinting)
        if len(_MEMO) >= 1 << 16:
            _MEMO.clear()
        _MEMO[key] = m
    return m


def text_box(s: str, family: str, size: float, dpi: float = 100, rotation: float = 0,
             renderer: RendererAgg | None = None) -> tuple[float, float]:
    """(width, height) in px of one line of text as matplotlib lays it out (line height >= that of "lp")."""
    w, h, d = _metrics(str(s), family, size, dpi, renderer)
    _, lh, ld = _metrics("lp", family, size, dpi, renderer)
    h = max(h - d, lh - ld) + max(d, ld)
    if rotation:
        a = math.radians(rotation)
        return w * math.cos(a) + h * math.sin(a), w * math.sin(a) + h * math.cos(a)
    return w, h


NICE = (1.0, 2.0, 2.5, 5.0)


def value_ticks(lo: float, hi: float, n: int = 6, zero: bool = False, pad: float = 0.05,
                integer: bool = False) -> tuple[list[float], tuple[float, float]]:
    """3 to n+1 nice ticks covering [lo, hi] padded by `pad` of the span; limits = first and last tick.

    Of the nice steps (1, 2, 2.5, 5 x 10^k) giving an allowed tick count, the one whose ticks
    waste the least room around the data wins. zero: the axis starts at 0 (bars, areas, counts),
    so no padding on the zero side. integer: whole-number steps only (counts)."""
    if zero:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    span = (hi - lo) or abs(hi) or 1.0
    plo = lo if zero and lo == 0 else lo - pad * span
    phi = hi if zero and hi == 0 else hi + pad * span
    e = math.floor(math.log10((phi - plo) / max(n - 1, 1)))
    best = None
    for step in (m * 10.0 ** k for k in (e - 1, e, e + 1) for m in NICE):
        if integer and step != int(step):
            continue
        k0, k1 = math.floor(plo / step + 1e-9), math.ceil(phi / step - 1e-9)
        count = k1 - k0 + 1
        if min(3 if integer else 4, n + 1) <= count <= n + 1 and (best is None or (k1 - k0) * step < best[0] - 1e-12):
            best = ((k1 - k0) * step, step, k0, k1)
    if best is None:  # n < 3: the coarsest step with at least two ticks
        step = next(m * 10.0 ** k for k in (e, e + 1, e + 2) for m in NICE
                    if math.ceil(phi / (m * 10.0 ** k) - 1e-9) - math.floor(plo / (m * 10.0 ** k) + 1e-9) <= max(n, 1))
        best = (0.0, step, math.floor(plo / step + 1e-9), math.ceil(phi / step - 1e-9))
    _, step, k0, k1 = best
    ticks = [_clean(k * step) for k in range(k0, k1 + 1)]
    return ticks, (ticks[0], ticks[-1])


def _clean(v: float) -> float:
    v = round(v, 9)
    return 0.0 if v == 0 else v


def tick_labels(ticks: Sequence[float], y_format: str = "plain", unit: str = "") -> list[str]:
    """Labels with as many decimals as the ticks need; thousands separators or a unit if asked."""
    dec = next((d for d in range(4) if all(abs(round(t, d) - t) < 1e-9 for t in ticks)), 4)
    sep = "," if y_format == "thousands" else ""
    out = [f"{t:{sep}.{dec}f}" for t in ticks]
    out = [s[1:] if s.startswith("-") and not s.strip("-0.,") else s for s in out]  # no "-0.0"
    return [f"{s} {unit}" for s in out] if y_format == "unit" and unit else out


def fitted_value_ticks(lo: float, hi: float, axis_px: float, label_w, n: int = 6, **kw):
    """value_ticks with fewer ticks when their labels (widths from `label_w`) would crowd `axis_px`."""
    for k in range(n, 2, -1):
        ticks, lims = value_ticks(lo, hi, k, **kw)
        labels = label_w(ticks)
        if max(labels[1]) * 1.4 * (len(ticks) - 1) <= axis_px:
            break
    return ticks, lims, labels[0]


def legend_width(names: Sequence[str], box, size: float, dpi: float) -> float:
    """Width in px of a one-column legend (texts measured with `box`) plus its gap to the anchor."""
    return LEGEND_EM * size * dpi / 72.0 + max((box(n, size=size)[0] for n in names), default=0.0)


# font sizes relative to the chart's base font size
TICK_FONT, TITLE_FONT, LEGEND_FONT, VALUE_LABEL_FONT = 0.9, 1.25, 0.85, 0.7
# first guess of the axes box in figure fractions, refined from the measured text
GUESS_LEFT, GUESS_RIGHT, GUESS_BOTTOM = 0.15, 0.95, 0.15
GUESS_RIGHT_COLORBAR = 0.85   # a heatmap's colorbar sits right of the axes
COLORBAR_SHARE = 0.08         # of the axes width, taken by a heatmap's colorbar
# room around the data on a value axis, as a share of its span
VALUE_PAD, VALUE_PAD_LABELLED, MAX_VALUE_PAD = 0.05, 0.12, 0.6
# category axis limits: bars centred in slots of width 1; lines inset a little; areas edge to edge
BAR_INSET, LINE_INSET = 0.5, 0.3
CROWDED = 0.9                 # a category label wider than this share of its slot gets rotated
ROTATED_CLEARANCE = 0.95      # rotated labels' strips must leave this share of their spacing free
ROTATIONS = {30: 45, 45: 90}  # steeper rotation when rotated labels still collide
LEGEND_GAP = 0.01             # the outside legend is anchored this many axes widths right of the axes
MARGIN_LIMITS = {"left": (0.02, 0.5), "right": (0.4, 0.97), "bottom": (0.02, 0.45), "top": (0.6, 0.98)}
MIN_LABEL_SIZE = 5.0          # pt: the smallest font a too-long title or axis label shrinks to
SHRINK_SLACK = 0.97           # a shrunk label aims at this share of the room it has


@dataclass
class _Measure:
    """The figure's size and fonts, and how to measure a string in them."""
    W: float
    H: float
    dpi: float
    box: Any          # text_box with family, dpi and renderer bound: box(s, size=, rotation=)
    tick: float       # font sizes (pt)
    label: float
    title: float
    legend: float

    @property
    def pt(self) -> float:  # px per point
        return self.dpi / 72.0

    def label_thickness(self, s: str | None) -> float:
        """An axis label's thickness with its pad (0 when there is none)."""
        return (self.box(s, size=self.label)[1] + LABEL_PAD_PT * self.pt) if s else 0.0


@dataclass
class _Axes:
    """What the tick step decides about the two axes: x labels with their data positions and the
    x limits (to find the margins they need), and the y labels (for the left margin)."""
    xlabels: list[str]
    xpos: list[float]
    xlim: tuple[float, float]
    ylabels: list[str]


def plan(data: dict[str, Any], style: dict[str, Any], renderer: RendererAgg | None = None) -> dict[str, Any]:
    """Ticks, limits, label rotation, title size and subplot margins for one chart (all JSON-able).

    renderer: the renderer the chart will be drawn with, if known (shares its text-metrics cache).
    Steps: measure the title (it fixes the top margin); guess the axes box; choose ticks for that
    box; settle label rotation and the side margins together; then size titles and axis labels."""
    fs = style["font_size"]
    ms = _Measure(style["width"], style["height"], style["dpi"],
                  functools.partial(text_box, family=style["font"], dpi=style["dpi"], renderer=renderer),
                  half(fs * TICK_FONT), fs, half(fs * TITLE_FONT), half(fs * LEGEND_FONT))
    t = data["chart_type"]
    out: dict[str, Any] = {"ticks": {}, "rotate": 0, "title_size": None}
    title_w, title_h = ms.box(data["title"], size=ms.title)
    top = (title_h + TITLE_PAD_PT * ms.pt + EDGE) / ms.H
    if t == "pie":
        return _plan_pie(data, style, out, ms.box, top, title_w, ms.tick, ms.legend)

    horiz = bool(style.get("horizontal")) and t in ("grouped_bar", "stacked_bar")
    legend_out = style["legend"] == "outside" and t not in ("heatmap", "histogram") and len(data.get("series", [])) > 1
    legend_w = legend_width([s["name"] for s in data["series"]], ms.box, ms.legend, ms.dpi) if legend_out else 0.0
    colorbar = t == "heatmap" and bool(style["colorbar"])
    left, right = GUESS_LEFT, GUESS_RIGHT
    if legend_out:
        right = GUESS_RIGHT - legend_w / ms.W
    if colorbar:
        right = GUESS_RIGHT_COLORBAR
    ax_w = (right - left) * ms.W
    if t in ("grouped_bar", "stacked_bar", "line", "area"):
        axes = _category_axes(data, style, ms, out, horiz, ax_w)
    elif t in ("scatter", "histogram"):
        axes = _numeric_axes(data, style, ms, out, ax_w)
    else:
        axes = _heatmap_axes(data, style, out)

    ylab = data.get("y_label") if not horiz else data.get("x_label")
    xlab = data.get("x_label") if not horiz else data.get("y_label")
    shrink = 1 - COLORBAR_SHARE if colorbar else 1.0
    rotatable = t not in ("scatter", "histogram") and not horiz
    cbar_w = max(ms.box(s, size=ms.tick)[0] for s in out["cbar"]["labels"]) if colorbar else None
    rot, left, right, bottom, xh, yw = _settle_margins(
        ms, axes, style["rotate_x"] if rotatable else 0, rotatable, shrink, left, right, xlab, ylab,
        cbar_w, legend_w if legend_out else None)
    out["rotate"] = rot
    out["title_size"] = _title_size(style, title_w, ms.title, left * ms.W, right * ms.W, ms.W)
    out["value_labels"] = bool(style["value_labels"]) and t in ("grouped_bar", "stacked_bar", "line") and \
        _labels_fit(data, style, horiz, (right - left) * ms.W, (1 - top - bottom) * ms.H, ms.box)
    m = out["margins"] = {k: round(min(max(v, MARGIN_LIMITS[k][0]), MARGIN_LIMITS[k][1]), 3)
                          for k, v in (("left", left), ("right", right), ("bottom", bottom), ("top", 1 - top))}
    _place_axis_labels(out, ms, m, shrink, xh, yw, xlab, ylab)
    return out


def _category_axes(data, style, ms: _Measure, out, horiz: bool, ax_w: float) -> _Axes:
    """Bars, lines, areas: categories on one axis, values (from 0 except lines) on the other."""
    t, cats = data["chart_type"], data["categories"]
    n = len(cats)
    vals = [v for s in data["series"] for v in s["values"]]
    if t in ("stacked_bar", "area"):
        sums = [sum(s["values"][j] for s in data["series"]) for j in range(n)]
        lo, hi = min(0.0, min(vals)), max(sums)
    else:
        lo, hi = min(vals), max(vals)
    zero = t != "line"
    pad = VALUE_PAD_LABELLED if style["value_labels"] and t != "stacked_bar" else VALUE_PAD
    if horiz and style["value_labels"] and t == "grouped_bar":  # labels beside the bar ends need their width
        lw = max(ms.box(f"{v:.{data['decimals']}f}", size=half(style["font_size"] * VALUE_LABEL_FONT))[0]
                 for v in vals) + 2 * EDGE
        pad = max(pad, min(MAX_VALUE_PAD, lw / max(ax_w - lw, 1.0)))
    if "bar" in t:
        cat_lim = (-BAR_INSET, n - BAR_INSET)
    else:
        cat_lim = (0.0, n - 1.0) if t == "area" else (-LINE_INSET, n - (1 - LINE_INSET))
    if horiz:
        ticks, lims, labels = fitted_value_ticks(lo, hi, ax_w, _tick_widths(data, style, ms, "value"),
                                                 zero=zero, pad=pad)
        out["ticks"]["x"] = {"ticks": ticks, "labels": labels, "lim": list(lims)}
        out["cat_lim"] = [cat_lim[1], cat_lim[0]]  # top to bottom
        return _Axes(labels, ticks, lims, list(cats))
    ticks, lims = value_ticks(lo, hi, 6, zero=zero, pad=pad)
    labels = tick_labels(ticks, style["y_format"], data.get("unit", ""))
    out["ticks"]["y"] = {"ticks": ticks, "labels": labels, "lim": list(lims)}
    out["cat_lim"] = list(cat_lim)
    return _Axes(list(cats), list(range(n)), cat_lim, labels)


def _numeric_axes(data, style, ms: _Measure, out, ax_w: float) -> _Axes:
    """Scatter and histogram: value ticks on both axes (histogram counts are whole numbers from 0)."""
    plain = _tick_widths(data, style, ms, "plain")
    if data["chart_type"] == "scatter":
        xs = [v for s in data["series"] for v in s["x"]]
        ys = [v for s in data["series"] for v in s["y"]]
        xt, xlim, xlabels = fitted_value_ticks(min(xs), max(xs), ax_w, plain)
        yt, ylim = value_ticks(min(ys), max(ys), 6)
    else:
        e = data["bin_edges"]
        xt, xlim, xlabels = fitted_value_ticks(e[0], e[-1], ax_w, plain, pad=0.0)
        counts = _hist_counts(data["values"], e)
        yt, ylim = value_ticks(0.0, float(max(counts)), 6, zero=True, integer=True)
    ylabels = tick_labels(yt)
    out["ticks"]["x"] = {"ticks": xt, "labels": xlabels, "lim": list(xlim)}
    out["ticks"]["y"] = {"ticks": yt, "labels": ylabels, "lim": list(ylim)}
    return _Axes(xlabels, xt, xlim, ylabels)


def _heatmap_axes(data, style, out) -> _Axes:
    """Heatmap: column and row labels; the colorbar gets value ticks inside the data range."""
    xlabels, ylabels = list(data["col_labels"]), list(data["row_labels"])
    if style["colorbar"]:
        flat = [v for row in data["matrix"] for v in row]
        lo, hi = min(flat), max(flat)
        ticks, _ = value_ticks(lo, hi, 6, pad=0.0)
        ticks = [v for v in ticks if lo <= v <= hi] or [lo, hi]
        out["cbar"] = {"ticks": ticks, "labels": tick_labels(ticks)}
    return _Axes(xlabels, list(range(len(xlabels))), (-0.5, len(xlabels) - 0.5), ylabels)


def _tick_widths(data, style, ms: _Measure, axis: str):
    """ticks -> (labels, their widths in px), for fitted_value_ticks."""
    def widths(ticks):
        labels = tick_labels(ticks, style["y_format"] if axis == "value" else "plain", data.get("unit", ""))
        return labels, [ms.box(s, size=ms.tick)[0] for s in labels]
    return widths


def _settle_margins(ms: _Measure, axes: _Axes, rot: int, rotatable: bool, shrink: float, left: float,
                    right: float, xlab, ylab, cbar_w: float | None, legend_w: float | None):
    """(rotation, left, right, bottom, x tick label height, y tick label width).

    Category labels that would crowd get rotated (the style's rotation otherwise); the margins
    depend on the rotation and the crowding on the margins, so both are settled together, in at
    most three rounds (rotation only grows)."""
    W, H, pt, box = ms.W, ms.H, ms.pt, ms.box
    xlabels, xpos, xlim = axes.xlabels, axes.xpos, axes.xlim
    widest = max(box(s, size=ms.tick)[0] for s in xlabels)
    th = box("Ag", size=ms.tick)[1]

    def rotation(rot, ax_w):
        if not rotatable:
            return 0
        spacing = ax_w / max(xlim[1] - xlim[0], 1e-9)
        if rot == 0 and widest > CROWDED * spacing:
            rot = 45
        # rotated labels are parallel strips spacing * sin(rot) apart: they must be thicker than the text
        while rot and rot < 90 and th > ROTATED_CLEARANCE * spacing * math.sin(math.radians(rot)):
            rot = ROTATIONS[rot]
        return rot

    yw = max((box(s, size=ms.tick)[0] for s in axes.ylabels), default=0.0)
    need_left = yw + TICK_GAP_PT * pt + ms.label_thickness(ylab) + EDGE
    ax_w = (right - left) * W
    for _ in range(3):
        rot = rotation(rot, ax_w * shrink)
        xboxes = [box(s, size=ms.tick, rotation=rot) for s in xlabels]
        xh = max((b[1] for b in xboxes), default=0.0)
        bottom = (xh + TICK_GAP_PT * pt + ms.label_thickness(xlab) + EDGE) / H
        for _ in range(2):  # the first/last x label may reach past the axes sides: depends on the axes width
            ax_w = (right - left) * W
            x0 = ax_w * (xpos[0] - xlim[0]) / (xlim[1] - xlim[0])
            x1 = ax_w * (xlim[1] - xpos[-1]) / (xlim[1] - xlim[0])
            first = xboxes[0][0] if rot else xboxes[0][0] / 2
            last = 0.0 if rot else xboxes[-1][0] / 2
            left = max(need_left, first - x0 + EDGE) / W
            r_need = last - x1 + EDGE
            if cbar_w is not None:
                r_need = max(r_need, cbar_w + TICK_GAP_PT * pt + EDGE)
            right = 1.0 - r_need / W
            if legend_w is not None:
                # legend anchored at x = 1.01 of the axes: right*W + 0.01*(right-left)*W + lw + EDGE <= W
                right = min(right, (W - legend_w - EDGE + LEGEND_GAP * left * W) / ((1 + LEGEND_GAP) * W))
        ax_w = (min(right, MARGIN_LIMITS["right"][1]) - left) * W
        if rotation(rot, ax_w * shrink) == rot:
            break
    return rot, left, right, bottom, xh, yw


def _place_axis_labels(out, ms: _Measure, m: dict, shrink: float, xh: float, yw: float, xlab, ylab) -> None:
    """Axis label positions and (when too long for their side) smaller fonts.

    Positions are where matplotlib's auto placement would put them (beside the widest tick
    label): stating them saves the draw a second tick update and bbox pass per axis. A label
    longer than the figure side around the axes' centre gets a smaller font."""
    W, H = ms.W, ms.H
    ax_w = (m["right"] - m["left"]) * W * shrink
    ax_h = (m["top"] - m["bottom"]) * H
    gap = (TICK_GAP_PT + LABEL_PAD_PT) * ms.pt
    out["label_coords"] = {"x": [0.5, -round((xh + gap) / ax_h, 4)], "y": [-round((yw + gap) / ax_w, 4), 0.5]}
    out["label_size"] = {}
    for axis, text, lo_px, hi_px, side in (("x", xlab, m["left"] * W, m["left"] * W + ax_w, W),
                                           ("y", ylab, m["bottom"] * H, m["top"] * H, H)):
        if text:
            c = (lo_px + hi_px) / 2
            room = 2 * min(c - EDGE, side - EDGE - c)
            length = ms.box(text, size=ms.label)[0]
            if length > room:
                out["label_size"][axis] = max(MIN_LABEL_SIZE, math.floor(2 * ms.label * room / length * SHRINK_SLACK) / 2)


def _labels_fit(data, style, horiz, ax_w, ax_h, box) -> bool:
    """Whether value labels on bars / line points can be drawn without running into each other."""
    t, fs7 = data["chart_type"], half(style["font_size"] * VALUE_LABEL_FONT)
    series, n = data["series"], len(data["categories"])
    lw = max(box(f"{v:.{data['decimals']}f}", size=fs7)[0] for s in series for v in s["values"])
    lh = box("0", size=fs7)[1]
    if t == "line":  # one line only: labels of several lines collide where the lines come close
        return len(series) == 1 and lw <= 0.9 * ax_w / n
    thick = (ax_h if horiz else ax_w) / n * (0.8 / len(series) if t == "grouped_bar" else 0.65)
    if t == "grouped_bar":
        return thick >= (lh if horiz else lw) * 1.05
    if thick < (lh if horiz else lw) * 1.05:
        return False
    # stacked: each label sits in the middle of its segment, which must be long enough to hold it
    span = ax_w if horiz else ax_h
    top = max(sum(s["values"][j] for s in series) for j in range(n)) * 1.05 or 1.0
    need = (lw if horiz else lh) * 1.1
    return all(v / top * span >= need for s in series for v in s["values"])


def _plan_pie(data, style, out, box, top, title_w, tfs, leg_fs):
    """Pie: a square axes centred (labels beside it at 1.1 radius) or left with the legend beside it."""
    W, H, dpi = style["width"], style["height"], style["dpi"]
    fs8 = half(style["font_size"] * 0.8)
    bottom = EDGE / H
    ax_h = (1 - top - bottom) * H
    cats = data["categories"]
    if style["legend"] == "outside":
        lw = legend_width(cats, box, leg_fs, dpi)  # anchored at x = 1.0 of the (square) axes
        left = EDGE / W
        right = min(left + ax_h / W, (W - lw - EDGE) / W)
    else:
        # matplotlib's pie spans +-1.25 radius in the axes; labels sit at 1.1 radius, outward from there
        lw = max(box(c, size=fs8)[0] for c in cats)
        lh = box("Ag", size=fs8)[1]
        side = min(ax_h, W - 2 * EDGE, (W / 2 - lw - EDGE) / (1.1 / 2.5))
        # top/bottom labels: 1.1 r + their height must stay inside the figure and below the title
        side = min(side, (ax_h / 2 - lh) / (1.1 / 2.5))
        left, right = 0.5 - side / (2 * W), 0.5 + side / (2 * W)
    out["title_size"] = _title_size(style, title_w, half(style["font_size"] * TITLE_FONT), left * W, right * W, W)
    out["value_labels"] = False
    r3 = lambda v: round(v, 3)  # noqa: E731
    out["margins"] = {"left": r3(left), "right": r3(right), "bottom": r3(bottom), "top": r3(1 - top)}
    return out


def _title_size(style, title_w, size, left_px, right_px, W):
    """A smaller title font when the title would run past the figure (None: the rc size)."""
    if style["title_loc"] == "left":
        room = W - EDGE - left_px
    else:
        c = (left_px + right_px) / 2
        room = 2 * min(c - EDGE, W - EDGE - c)
    if title_w <= room:
        return None
    return max(MIN_LABEL_SIZE, math.floor(2 * size * room / title_w * SHRINK_SLACK) / 2)


def _hist_counts(values: Sequence[float], edges: Sequence[float]) -> list[int]:
    """Counts per bin as numpy/matplotlib count them (the last bin includes its right edge)."""
    counts = [0] * (len(edges) - 1)
    last = len(edges) - 2
    for v in values:
        for j in range(last + 1):
            if edges[j] <= v < edges[j + 1] or (j == last and v == edges[-1]):
                counts[j] += 1
                break
    return counts
