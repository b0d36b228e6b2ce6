"""Chart data + style -> a standalone matplotlib script; running that script draws the chart.

The image stored in a row is produced by executing exactly the code stored beside it, so the
code is runnable and faithful by construction (tests run it in a fresh interpreter and compare
bytes). Output is deterministic: Agg backend, matplotlib's default style plus explicit rcParams
(incl. svg.hashsalt; a user's matplotlibrc cannot leak in), the Agg buffer written as an RGB PNG
by PIL (no metadata chunks; the chart background is opaque, so RGB loses nothing and encodes
faster and smaller than savefig's RGBA).
"""
from __future__ import annotations

import io
import threading
import unicodedata
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from PIL import Image

from synth.chart_style import PALETTES, THEMES

PNG_COMPRESS = 3  # zlib level: 6 costs ~2x the encode time for ~10% smaller files

HEADER = '''"""{doc}"""
import matplotlib
matplotlib.use("Agg")
from matplotlib import rc_context, style
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator
from PIL import Image

'''


def text_em(s: str) -> float:
    """Approximate width of `s` in em (CJK wide characters count 1, others about 0.58)."""
    return sum(1.0 if unicodedata.east_asian_width(c) in "WF" else 0.58 for c in str(s))


def _fmt_literal(v: Any) -> str:
    return repr(v)


def _half(v: float) -> float:
    """Font sizes on a half-point grid: matplotlib caches font lookups per size."""
    return round(v * 2) / 2


def _rc(style: dict[str, Any]) -> dict[str, Any]:
    fig_bg, ax_bg, fg = THEMES[style["theme"]]
    fs = style["font_size"]
    return {
        "font.family": [style["font"], "DejaVu Sans"], "font.size": fs, "axes.titlesize": _half(fs * 1.25),
        "axes.titley": 1.0, "axes.titlepad": 6.0,  # fixed title position: auto placement costs ~15% of a draw
        "axes.labelsize": fs, "xtick.labelsize": _half(fs * 0.9), "ytick.labelsize": _half(fs * 0.9),
        "legend.fontsize": _half(fs * 0.85), "figure.facecolor": fig_bg, "axes.facecolor": ax_bg,
        "savefig.facecolor": fig_bg, "text.color": fg, "axes.labelcolor": fg, "xtick.color": fg, "ytick.color": fg,
        "axes.edgecolor": fg, "axes.grid": style["grid"] != "none",
        "axes.grid.axis": "y" if style["grid"] == "y" else "both", "grid.linestyle": style["grid_style"],
        "grid.alpha": 0.45, "grid.color": fg, "axes.axisbelow": True,
        "axes.spines.top": style["spines"] == "all", "axes.spines.right": style["spines"] == "all",
        "legend.frameon": style["legend_frame"], "axes.unicode_minus": False, "svg.hashsalt": "cidermill",
        "path.simplify": True, "xtick.minor.visible": False, "ytick.minor.visible": False,
        # unhinted glyphs: FreeType's hinting costs ~35% of matplotlib's text time (text is a large
        # part of a chart's cost) and differs between FreeType builds; at 100 dpi it looks the same
        "text.hinting": "none",
    }


def _margins(data: dict[str, Any], style: dict[str, Any]) -> dict[str, float]:
    """Fixed subplot margins from label lengths (tight_layout would double the render time)."""
    w, h, fs = style["width"], style["height"], style["font_size"]
    px = fs * style["dpi"] / 72.0
    t = data["chart_type"]
    if t == "pie":
        right = 0.98 if style["legend"] != "outside" else 0.70
        return {"left": 0.04, "right": right, "bottom": 0.04, "top": 0.88}
    cats = data.get("categories") or data.get("row_labels") or []
    if t == "heatmap":
        ylab = max((text_em(r) for r in data["row_labels"]), default=2)
        xlab = max((text_em(c) for c in data["col_labels"]), default=2)
    elif style.get("horizontal") and t in ("grouped_bar", "stacked_bar"):
        ylab = max((text_em(c) for c in cats), default=2)
        xlab = 3.0
    else:
        ylab = 5.0 if style["y_format"] != "plain" else 4.0
        xlab = max((text_em(c) for c in cats), default=3) if cats else 3.0
    rot = style["rotate_x"] if t not in ("scatter", "histogram") else 0
    xtick_h = 1.0 if rot == 0 else 0.5 + xlab * (0.5 if rot == 30 else 0.71)
    left = (px * 0.9 * ylab + px * (2.2 if data.get("y_label") else 0.8)) / w
    bottom = (px * 0.9 * xtick_h + px * (2.4 if data.get("x_label") else 1.0)) / h
    right = 0.97
    if t == "heatmap" and style["colorbar"]:
        right = 0.86
    if style["legend"] == "outside" and t not in ("heatmap", "histogram"):
        names = [s["name"] for s in data.get("series", [])]
        right = min(right, 1.0 - (px * 0.85 * max((text_em(n) for n in names), default=4) + px * 3.0) / w)
    top = 1.0 - (px * 2.6) / h
    clamp = lambda v, lo, hi: round(min(max(v, lo), hi), 3)  # noqa: E731
    return {"left": clamp(left, 0.06, 0.45), "right": clamp(right, 0.5, 0.98),
            "bottom": clamp(bottom, 0.06, 0.45), "top": clamp(top, 0.6, 0.95)}


def _legend(style: dict[str, Any]) -> str:
    if style["legend"] == "outside":
        return '    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))\n'
    return f'    ax.legend(loc={style["legend"]!r})\n'


def _yfmt(data: dict[str, Any], style: dict[str, Any], axis: str) -> str:
    if style["y_format"] == "thousands":
        return f'    ax.{axis}axis.set_major_formatter(FuncFormatter(lambda v, _: f"{{v:,.0f}}"))\n'
    if style["y_format"] == "unit":
        return f'    ax.{axis}axis.set_major_formatter(FuncFormatter(lambda v, _: f"{{v:g}} {data["unit"]}"))\n'
    return ""


def _body(data: dict[str, Any], style: dict[str, Any]) -> str:
    t = data["chart_type"]
    _, _, fg = THEMES[style["theme"]]
    edge = fg if style["edge"] == "fg" else "none"
    hatches = ["//", "..", "xx", "\\\\", "oo"] if style["hatch"] else [None] * 5
    rotated = (style["rotate_x"] and t not in ("pie", "scatter", "histogram")
               and not (style["horizontal"] and "bar" in t))
    # rotated category labels: set with the ticks (tick_params + get_xticklabels would lay the ticks out twice)
    xt_kw = f", rotation={style['rotate_x']}, ha='right'" if rotated else ""
    b = ""
    if t in ("grouped_bar", "stacked_bar"):
        horiz = style["horizontal"]
        bar, pos_kw, size_kw = ("barh", "y", "height") if horiz else ("bar", "x", "width")
        val_axis = "x" if horiz else "y"
        b += "    x = list(range(len(DATA['categories'])))\n"
        b += f"    k = len(DATA['series'])\n"
        if t == "grouped_bar":
            b += "    w = 0.8 / k\n"
            b += "    for i, s in enumerate(DATA['series']):\n"
            b += "        pos = [xi + (i - (k - 1) / 2) * w for xi in x]\n"
            b += (f"        bars = ax.{bar}(pos, s['values'], w, label=s['name'], color=COLORS[i % len(COLORS)], "
                  f"edgecolor={edge!r}, hatch=HATCHES[i % len(HATCHES)])\n")
        else:
            b += "    base = [0.0] * len(x)\n"
            b += "    for i, s in enumerate(DATA['series']):\n"
            b += (f"        bars = ax.{bar}(x, s['values'], 0.65, {'left' if horiz else 'bottom'}=base, label=s['name'], "
                  f"color=COLORS[i % len(COLORS)], edgecolor={edge!r}, hatch=HATCHES[i % len(HATCHES)])\n")
            b += "        base = [a + v for a, v in zip(base, s['values'])]\n"
        if style["value_labels"]:
            where = ", label_type='center'" if t == "stacked_bar" else ""
            b += f"        ax.bar_label(bars, fmt='%.{data['decimals']}f', fontsize=FS7{where})\n"
        b += f"    ax.set_{'y' if horiz else 'x'}ticks(x, DATA['categories']{'' if horiz else xt_kw})\n"
        if horiz:
            b += "    ax.invert_yaxis()\n"
        b += _yfmt(data, style, val_axis)
        b += f"    ax.set_{val_axis}label(DATA['y_label'])\n"
        b += f"    ax.set_{'y' if horiz else 'x'}label(DATA['x_label'])\n"
    elif t in ("line", "area"):
        b += "    x = list(range(len(DATA['categories'])))\n"
        if t == "line":
            b += "    for i, s in enumerate(DATA['series']):\n"
            b += (f"        ax.plot(x, s['values'], marker={style['marker']!r}, linewidth={style['line_width']}, "
                  "label=s['name'], color=COLORS[i % len(COLORS)])\n")
            if style["value_labels"]:
                b += "        for xi, v in zip(x, s['values']):\n"
                b += (f"            ax.annotate(f'{{v:.{data['decimals']}f}}', (xi, v), textcoords='offset points', "
                      "xytext=(0, 4), ha='center', fontsize=FS7)\n")
        else:
            b += ("    ax.stackplot(x, *[s['values'] for s in DATA['series']], labels=[s['name'] for s in DATA['series']], "
                  f"colors=COLORS, alpha={style['alpha']}, edgecolor={edge!r})\n")
            b += "    ax.set_xlim(x[0], x[-1])\n"
        b += f"    ax.set_xticks(x, DATA['categories']{xt_kw})\n"
        b += _yfmt(data, style, "y")
        b += "    ax.set_xlabel(DATA['x_label'])\n    ax.set_ylabel(DATA['y_label'])\n"
    elif t == "scatter":
        b += "    for i, s in enumerate(DATA['series']):\n"
        b += (f"        ax.scatter(s['x'], s['y'], s={round(12 + 30 * style['alpha'])}, marker={style['marker'] or 'o'!r}, "
              f"alpha={style['alpha']}, label=s['name'], color=COLORS[i % len(COLORS)], edgecolors={edge!r})\n")
        b += "    ax.set_xlabel(DATA['x_label'])\n    ax.set_ylabel(DATA['y_label'])\n"
    elif t == "histogram":
        b += (f"    ax.hist(DATA['values'], bins=DATA['bin_edges'], color=COLORS[0], alpha={style['alpha']}, "
              f"edgecolor={fg if style['edge'] == 'fg' else THEMES[style['theme']][1]!r})\n")
        b += "    ax.set_xlabel(DATA['x_label'])\n    ax.set_ylabel(DATA['y_label'])\n"
    elif t == "pie":
        wedge = "dict(width=0.45)" if style["donut"] else "None"
        pct = f"'%1.{1 if data['decimals'] else 0}f%%'" if style["pie_pct"] else "None"
        labels = "None" if style["legend"] == "outside" else "DATA['categories']"
        b += (f"    ax.pie(DATA['series'][0]['values'], labels={labels}, colors=COLORS, autopct={pct}, "
              f"startangle=90, counterclock=False, wedgeprops={wedge}, textprops={{'fontsize': FS8}})\n")
        b += "    ax.set_aspect('equal')\n"
        if style["legend"] == "outside":
            b += "    ax.legend(DATA['categories'], loc='center left', bbox_to_anchor=(1.0, 0.5))\n"
    elif t == "heatmap":
        b += f"    im = ax.imshow(DATA['matrix'], cmap={style['cmap']!r}, aspect='auto')\n"
        b += f"    ax.set_xticks(range(len(DATA['col_labels'])), DATA['col_labels']{xt_kw})\n"
        b += "    ax.set_yticks(range(len(DATA['row_labels'])), DATA['row_labels'])\n"
        b += "    ax.grid(False)\n"
        if style["annotate"]:
            b += "    lo, hi = min(map(min, DATA['matrix'])), max(map(max, DATA['matrix']))\n"
            b += "    for r, row in enumerate(DATA['matrix']):\n"
            b += "        for c, v in enumerate(row):\n"
            b += "            dark = (v - lo) / ((hi - lo) or 1) < 0.5\n"
            b += (f"            ax.text(c, r, f'{{v:.{data['decimals']}f}}', ha='center', va='center', fontsize=FS7, "
                  f"color=('white' if dark else 'black') if CMAP_DARK_LOW else ('black' if dark else 'white'))\n")
        if style["colorbar"]:
            b += "    fig.colorbar(im, ax=ax, fraction=0.06, pad=0.02)\n"
        b += "    ax.set_xlabel(DATA['x_label'])\n    ax.set_ylabel(DATA['y_label'])\n"
    multi = len(data.get("series", [])) > 1
    if t in ("grouped_bar", "stacked_bar", "line", "area", "scatter") and multi:
        b += _legend(style)
    if t in ("scatter", "histogram"):
        b += "    ax.xaxis.set_major_locator(MaxNLocator(6))\n    ax.yaxis.set_major_locator(MaxNLocator(6))\n"
    elif t not in ("pie", "heatmap"):
        b += f"    ax.{'x' if style['horizontal'] and 'bar' in t else 'y'}axis.set_major_locator(MaxNLocator(6))\n"
    b += f"    ax.set_title(DATA['title'], loc={style['title_loc']!r})\n"
    return b


def chart_code(data: dict[str, Any], style: dict[str, Any]) -> str:
    """A runnable script whose `draw(out)` writes the chart as PNG to `out` (path or file object)."""
    payload = {k: v for k, v in data.items() if k in (
        "title", "x_label", "y_label", "categories", "series", "values", "bin_edges", "row_labels", "col_labels",
        "matrix")}
    fig_w, fig_h = style["width"] / style["dpi"], style["height"] / style["dpi"]
    doc = f"{data['chart_type'].replace('_', ' ')} chart: {data['title']} (generated by cidermill synth)"
    src = HEADER.format(doc=doc)
    src += f"DATA = {_fmt_literal(payload)}\n"
    src += f"COLORS = {PALETTES[style['palette']]!r}\n"
    hatches = ["//", "..", "xx", "\\\\", "oo"] if style["hatch"] else [None]
    src += f"HATCHES = {hatches!r}\n"
    src += f"FS7, FS8 = {_half(style['font_size'] * 0.7)}, {_half(style['font_size'] * 0.8)}\n"
    if data["chart_type"] == "heatmap":
        src += f"CMAP_DARK_LOW = {style['cmap'] in ('viridis', 'magma', 'cividis')!r}\n"
    src += f"COMPRESS = {PNG_COMPRESS}\n"
    src += f"STYLE = {_fmt_literal(_rc(style))}\n\n\n"
    src += "def draw(out='chart.png'):\n"
    src += "    \"\"\"Draw the chart, write it to `out` (path or file object) as PNG and return the image.\"\"\"\n"
    src += "    with style.context('default'), rc_context(STYLE):  # ignore any local matplotlibrc\n"
    src += f"        fig = Figure(figsize=({fig_w}, {fig_h}), dpi={style['dpi']})\n"
    src += f"        fig.subplots_adjust(**{_margins(data, style)!r})\n"
    src += "        ax = fig.add_subplot()\n"
    src += "        _plot(fig, ax)\n"
    src += "        canvas = FigureCanvasAgg(fig)\n"
    src += "        canvas.draw()\n"
    src += "        rgba = Image.frombuffer('RGBA', canvas.get_width_height(), canvas.buffer_rgba(), 'raw', 'RGBA', 0, 1)\n"
    src += "    img = rgba.convert('RGB')  # the background is opaque: RGB loses nothing\n"
    src += f"    img.save(out, format='png', compress_level=COMPRESS, dpi=({style['dpi']}, {style['dpi']}))\n"
    src += "    return img\n\n\n"
    src += "def _plot(fig, ax):\n" + _body(data, style) + "\n\n"
    src += "if __name__ == '__main__':\n    draw()\n"
    return src


def run_chart_code(code: str) -> bytes:
    """Execute generated chart code and return the PNG bytes it draws."""
    return render_chart_code(code)[0]


def render_chart_code(code: str) -> tuple[bytes, Image.Image]:
    """Execute generated chart code: the PNG bytes it writes, and the image it returns (same pixels).

    The script runs unchanged, except that its `FigureCanvasAgg` is `_SharedRendererCanvas` (same
    pixels, cheaper text; see there)."""
    ns: dict[str, Any] = {"__name__": "cidermill_synth_chart"}
    exec(compile(code, "<synth-chart>", "exec"), ns)  # noqa: S102  (our own generated code)
    ns["FigureCanvasAgg"] = _SharedRendererCanvas
    buf = io.BytesIO()
    img = ns["draw"](buf)
    png = buf.getvalue()
    return png, (img if isinstance(img, Image.Image) else Image.open(io.BytesIO(png)))


class _SharedRendererCanvas(FigureCanvasAgg):
    """An Agg canvas that reuses one renderer per (thread, width, height, dpi) across figures.

    `FigureCanvasAgg.draw` clears the renderer before drawing, so the pixels are those of a fresh
    renderer; what carries over is matplotlib's per-renderer text-metrics cache (tick labels,
    legend entries, units and category names recur from chart to chart, and each miss lays the
    text out with FreeType). Per thread, so concurrent draws never share pixels."""

    _renderers: dict[tuple[int, int, int, float], RendererAgg] = {}

    def get_renderer(self) -> RendererAgg:
        w, h = self.get_width_height(physical=True)
        key = (threading.get_ident(), w, h, self.figure.dpi)
        if self._lastKey != key[1:]:
            r = self._renderers.get(key)
            if r is None:
                # vary_size draws many sizes: keep at most ~64 MB of RGBA buffers per process
                if sum(k[1] * k[2] for k in self._renderers) + w * h > 16_000_000:
                    self._renderers.clear()
                r = self._renderers[key] = RendererAgg(w, h, self.figure.dpi)
            self.renderer, self._lastKey = r, key[1:]
        return self.renderer
