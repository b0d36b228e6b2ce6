"""Chart layout: every text the stored code draws lies inside the figure, and labels do not collide.

The text boxes come from matplotlib's renderer after the stored code has drawn the chart (the
code is run as stored, with a canvas that keeps the figure), so these checks see exactly what a
reader sees: clipped outside legends, axis labels cut at the border, y labels running into tick
labels, crowded category labels.
"""
import io
import json
import math

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from synth.chart_data import CHART_TYPES
from synth.chart_layout import tick_labels, value_ticks
from synth.charts import make_chart


class _KeepFigure(FigureCanvasAgg):
    drawn: list = []

    def draw(self):
        super().draw()
        _KeepFigure.drawn.append(self.figure)


def draw_stored_code(row):
    meta = json.loads(row["meta_json"])
    ns = {"__name__": "layout_check"}
    exec(compile(meta["code"], "<chart>", "exec"), ns)  # noqa: S102
    ns["FigureCanvasAgg"] = _KeepFigure
    ns["draw"](io.BytesIO())
    return _KeepFigure.drawn.pop(), meta


def _shown_tick_labels(axis):
    lo, hi = sorted(axis.get_view_interval())
    eps = (hi - lo) * 1e-9
    return [t.label1 for t in axis.get_major_ticks()
            if lo - eps <= t.get_loc() <= hi + eps and t.label1.get_visible() and t.label1.get_text()]


def _overlap(a, b, tol=1.0):
    return min(a.x1, b.x1) - max(a.x0, b.x0) > tol and min(a.y1, b.y1) - max(a.y0, b.y0) > tol


def layout_problems(fig):
    """Human-readable layout faults of a drawn figure (empty when the layout is clean)."""
    r = fig.canvas.get_renderer()
    W, H = fig.bbox.width, fig.bbox.height
    bad = []

    def inside(name, b):
        if b.x0 < -0.5 or b.y0 < -0.5 or b.x1 > W + 0.5 or b.y1 > H + 0.5:
            bad.append(f"{name} outside the figure: {[round(v) for v in b.extents]}")

    for ax in fig.axes:
        boxes = []  # (name, bbox) of the texts that frame the plot
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            ticks = _shown_tick_labels(axis)
            tb = [(f"{name}tick {t.get_text()!r}", t.get_window_extent(r), t.get_rotation()) for t in ticks]
            for i, (n1, b1, rot) in enumerate(tb):
                inside(n1, b1)
                if i and rot % 180:  # rotated labels are parallel strips: their distance must exceed a text height
                    gap = abs(b1.x1 - tb[i - 1][1].x1) * math.sin(math.radians(rot))
                    if gap + 1.0 < ticks[i].get_fontsize() * fig.dpi / 72:
                        bad.append(f"{n1} crowds {tb[i - 1][0]} (rotated {rot})")
                elif i and _overlap(b1, tb[i - 1][1]):
                    bad.append(f"{n1} overlaps {tb[i - 1][0]}")
            boxes += [(n, b) for n, b, _ in tb]
            if axis.label.get_visible() and axis.label.get_text():
                boxes.append((f"{name}label", axis.label.get_window_extent(r)))
        for t in (ax.title, ax._left_title, ax._right_title):
            if t.get_text():
                boxes.append(("title", t.get_window_extent(r)))
        leg = ax.get_legend()
        if leg is not None:
            lb = leg.get_window_extent(r)
            if lb.x0 >= ax.bbox.x1 - 1:  # an outside legend is part of the frame around the plot
                boxes.append(("legend", lb))
            else:
                inside("legend", lb)
        for t in ax.texts:  # value labels, pie labels and percentages, heatmap cells
            if t.get_visible() and t.get_text():
                inside(f"text {t.get_text()!r}", t.get_window_extent(r))
        for n, b in boxes:
            inside(n, b)
        for i, (n1, b1) in enumerate(boxes):
            for n2, b2 in boxes[i + 1:]:
                same_axis_ticks = n1[:5] == n2[:5] and n1[1:5] == "tick"
                if not same_axis_ticks and _overlap(b1, b2):
                    bad.append(f"{n1} overlaps {n2}")
    return bad


@pytest.mark.parametrize("size,vary", [((448, 448), False), ((448, 448), True), ((320, 256), False),
                                       ((200, 160), False)])
def test_stored_code_draws_every_text_inside_the_figure_without_collisions(size, vary):
    faults = {}
    for i in range(48 if size == (448, 448) and not vary else 24):
        ctype = CHART_TYPES[i % len(CHART_TYPES)]
        row = make_chart(21, i, *size, chart_types=[ctype], vary_size=vary)
        fig, meta = draw_stored_code(row)
        problems = layout_problems(fig)
        if problems:
            faults[(i, ctype, meta["style"]["legend"], meta["style"]["horizontal"])] = problems[:3]
    assert not faults, faults


def test_layout_check_sees_a_clipped_legend_and_a_colliding_label():
    # the checker itself: a legend pushed past the right border and a y label moved onto the tick labels
    row = make_chart(21, 1, chart_types=["grouped_bar"])
    fig, _ = draw_stored_code(row)
    ax = fig.axes[0]
    ax.legend(loc="center left", bbox_to_anchor=(1.2, 0.5))
    ax.yaxis.set_label_coords(-0.02, 0.5)
    fig.canvas.draw()
    problems = " | ".join(layout_problems(fig))
    assert "legend outside the figure" in problems and "overlaps ylabel" in problems, problems


def test_value_ticks_are_nice_and_cover_the_data():
    rng = np.random.default_rng(0)
    for _ in range(300):
        lo = float(rng.uniform(-50, 500))
        hi = lo + float(10 ** rng.uniform(-1, 4))
        zero = bool(rng.random() < 0.5) and lo >= 0
        ticks, (a, b) = value_ticks(lo, hi, 6, zero=zero)
        step = ticks[1] - ticks[0]
        assert 4 <= len(ticks) <= 7 and (a, b) == (ticks[0], ticks[-1])
        assert a <= (0 if zero else lo) and b >= hi
        assert all(abs((y - x) - step) < 1e-6 * step for x, y in zip(ticks, ticks[1:]))
        mant = step / 10 ** math.floor(math.log10(step) + 1e-12)
        assert min(abs(mant - m) for m in (1, 2, 2.5, 5)) < 1e-6
        if zero:
            assert a == 0
    ticks, _ = value_ticks(0, 7, 6, zero=True, integer=True)
    assert all(t == int(t) for t in ticks)


def test_tick_labels_use_the_decimals_the_ticks_need():
    assert tick_labels([0.0, 2.5, 5.0]) == ["0.0", "2.5", "5.0"]
    assert tick_labels([0.0, 500.0, 1000.0, 1500.0], "thousands") == ["0", "500", "1,000", "1,500"]
    assert tick_labels([-10.0, 0.0, 10.0], "unit", "°C") == ["-10 °C", "0 °C", "10 °C"]


def test_histogram_counts_match_numpy():
    from synth.chart_layout import _hist_counts
    rng = np.random.default_rng(1)
    vals = [int(v) for v in rng.integers(0, 60, 200)] + [60]
    edges = list(range(0, 61, 15))
    assert _hist_counts(vals, edges) == np.histogram(vals, bins=edges)[0].tolist()
