"""Chart data + style -> a standalone matplotlib script; running that script draws the chart.

The image stored in a row is produced by executing exactly the code stored beside it, so the
code is runnable and faithful by construction (tests run it in a fresh interpreter and compare
bytes). Output is deterministic: Agg backend, matplotlib's default style plus explicit rcParams
(incl. svg.hashsalt; a user's matplotlibrc cannot leak in), the Agg buffer written as an RGB PNG
with unfiltered rows by the script's own few-line writer (no metadata chunks; the chart
background is opaque, so RGB loses nothing; ~1/3 of PIL's encode time, smaller files).
Ticks, limits, margins and label positions are stated in the code (planned by chart_layout),
so the draw runs no locator search or layout pass.
"""
from __future__ import annotations

import io
import threading
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from PIL import Image

from corpus.process_cache import ProcessCache
from synth.chart_layout import TITLE_PAD_PT, half, plan
from synth.chart_style import PALETTES, THEMES

PNG_COMPRESS = 3  # zlib level of the unfiltered rows

HEADER = '''"""{doc}"""
import struct
import zlib

import matplotlib
matplotlib.use("Agg")
from matplotlib import rc_context, style
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image


def write_png(img, out, dpi):
    """`img` (RGB) as PNG with unfiltered rows: flat chart colours deflate smaller unfiltered, and
    encoding skips the per-row filter search (most of a PNG writer's time)."""
    w, h = img.size
    raw, stride = img.tobytes(), 3 * w
    rows = b"".join(b"\\0" + raw[i:i + stride] for i in range(0, len(raw), stride))

    def chunk(tag, body):
        return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body))
    ppm = int(dpi / 0.0254 + 0.5)
    png = (b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
           + chunk(b"pHYs", struct.pack(">IIB", ppm, ppm, 1)) + chunk(b"IDAT", zlib.compress(rows, COMPRESS))
           + chunk(b"IEND", b""))
    if hasattr(out, "write"):
        out.write(png)
    else:
        with open(out, "wb") as f:
            f.write(png)


'''


def _fmt_literal(v: Any) -> str:
    return repr(v)


def _rc(style: dict[str, Any]) -> dict[str, Any]:
    fig_bg, ax_bg, fg = THEMES[style["theme"]]
    fs = style["font_size"]
    return {
        "font.family": [style["font"], "DejaVu Sans"], "font.size": fs, "axes.titlesize": half(fs * 1.25),
        "axes.titley": 1.0, "axes.titlepad": TITLE_PAD_PT,  # fixed title position: auto placement costs ~15% of a draw
        "axes.labelsize": fs, "xtick.labelsize": half(fs * 0.9), "ytick.labelsize": half(fs * 0.9),
        "legend.fontsize": half(fs * 0.85), "figure.facecolor": fig_bg, "axes.facecolor": ax_bg,
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


def _legend(style: dict[str, Any]) -> str:
    if style["legend"] == "outside":
        return '    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))\n'
    return f'    ax.legend(loc={style["legend"]!r})\n'


def _ticks(lay: dict[str, Any], axis: str) -> str:
    """Explicit limits, ticks and tick labels of a value axis (planned in chart_layout)."""
    t = lay["ticks"].get(axis)
    if not t:
        return ""
    return (f"    ax.set_{axis}lim({t['lim'][0]!r}, {t['lim'][1]!r})\n"
            f"    ax.set_{axis}ticks({t['ticks']!r}, {t['labels']!r})\n")


def _contrast(hex_color: str) -> str:
    """Black or white, whichever reads better on `hex_color` (value labels inside bars)."""
    r, g, b = (int(hex_color[i:i + 2], 16) / 255 for i in (1, 3, 5))
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.55 else "white"


def _body(data: dict[str, Any], style: dict[str, Any], lay: dict[str, Any]) -> str:
    """The `_plot(fig, ax)` body: the chart type's own drawing, then what every chart states
    (axis label places and sizes, the legend, the title)."""
    t = data["chart_type"]
    _, _, fg = THEMES[style["theme"]]
    # rotated category labels: set with the ticks (tick_params + get_xticklabels would lay the ticks out twice)
    xt_kw = f", rotation={lay['rotate']}, ha='right'" if lay["rotate"] else ""
    b = _DRAW[t](data, style, lay, fg, xt_kw)
    if t != "pie":
        b += "".join(f"    ax.{a}axis.set_label_coords({c[0]!r}, {c[1]!r})\n" for a, c in lay["label_coords"].items())
        b += "".join(f"    ax.{a}axis.label.set_fontsize({v!r})\n" for a, v in lay["label_size"].items())
    multi = len(data.get("series", [])) > 1
    if t in ("grouped_bar", "stacked_bar", "line", "area", "scatter") and multi:
        b += _legend(style)
    size = f", fontsize={lay['title_size']!r}" if lay["title_size"] else ""
    b += f"    ax.set_title(DATA['title'], loc={style['title_loc']!r}{size})\n"
    return b


def _edge(style: dict[str, Any], fg: str) -> str:
    return fg if style["edge"] == "fg" else "none"


def _bars(data, style, lay, fg, xt_kw) -> str:
    """Grouped bars side by side in each category slot, or stacked bars; vertical or horizontal."""
    t, edge, horiz = data["chart_type"], _edge(style, fg), style["horizontal"]
    bar = "barh" if horiz else "bar"
    val_axis = "x" if horiz else "y"
    b = "    x = list(range(len(DATA['categories'])))\n"
    b += "    k = len(DATA['series'])\n"
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
    if lay["value_labels"]:
        where = ", label_type='center', color=INK[i % len(INK)]" if t == "stacked_bar" else ""
        b += f"        ax.bar_label(bars, fmt='%.{data['decimals']}f', fontsize=FS7{where})\n"
    cat_axis = "y" if horiz else "x"
    b += f"    ax.set_{cat_axis}ticks(x, DATA['categories']{'' if horiz else xt_kw})\n"
    b += f"    ax.set_{cat_axis}lim({lay['cat_lim'][0]!r}, {lay['cat_lim'][1]!r})\n"  # top to bottom when horizontal
    b += _ticks(lay, val_axis)
    b += f"    ax.set_{val_axis}label(DATA['y_label'])\n"
    b += f"    ax.set_{'y' if horiz else 'x'}label(DATA['x_label'])\n"
    return b


def _lines(data, style, lay, fg, xt_kw) -> str:
    """Lines with markers (value labels above the points when they fit), or stacked areas."""
    b = "    x = list(range(len(DATA['categories'])))\n"
    if data["chart_type"] == "line":
        b += "    for i, s in enumerate(DATA['series']):\n"
        b += (f"        ax.plot(x, s['values'], marker={style['marker']!r}, linewidth={style['line_width']}, "
              "label=s['name'], color=COLORS[i % len(COLORS)])\n")
        if lay["value_labels"]:
            b += "        for xi, v in zip(x, s['values']):\n"
            b += (f"            ax.annotate(f'{{v:.{data['decimals']}f}}', (xi, v), textcoords='offset points', "
                  "xytext=(0, 4), ha='center', fontsize=FS7)\n")
    else:
        b += ("    ax.stackplot(x, *[s['values'] for s in DATA['series']], labels=[s['name'] for s in DATA['series']], "
              f"colors=COLORS, alpha={style['alpha']}, edgecolor={_edge(style, fg)!r})\n")
    b += f"    ax.set_xticks(x, DATA['categories']{xt_kw})\n"
    b += f"    ax.set_xlim({lay['cat_lim'][0]!r}, {lay['cat_lim'][1]!r})\n"
    b += _ticks(lay, "y")
    return b + "    ax.set_xlabel(DATA['x_label'])\n    ax.set_ylabel(DATA['y_label'])\n"


def _scatter(data, style, lay, fg, xt_kw) -> str:
    b = "    for i, s in enumerate(DATA['series']):\n"
    b += (f"        ax.scatter(s['x'], s['y'], s={round(12 + 30 * style['alpha'])}, marker={style['marker'] or 'o'!r}, "
          f"alpha={style['alpha']}, label=s['name'], color=COLORS[i % len(COLORS)], edgecolors={_edge(style, fg)!r})\n")
    b += _ticks(lay, "x") + _ticks(lay, "y")
    return b + "    ax.set_xlabel(DATA['x_label'])\n    ax.set_ylabel(DATA['y_label'])\n"


def _histogram(data, style, lay, fg, xt_kw) -> str:
    b = (f"    ax.hist(DATA['values'], bins=DATA['bin_edges'], color=COLORS[0], alpha={style['alpha']}, "
         f"edgecolor={fg if style['edge'] == 'fg' else THEMES[style['theme']][1]!r})\n")
    b += _ticks(lay, "x") + _ticks(lay, "y")
    return b + "    ax.set_xlabel(DATA['x_label'])\n    ax.set_ylabel(DATA['y_label'])\n"


def _pie(data, style, lay, fg, xt_kw) -> str:
    """A pie or donut, labelled beside the wedges or by a legend outside."""
    wedge = "dict(width=0.45)" if style["donut"] else "None"
    pct = f"'%1.{1 if data['decimals'] else 0}f%%'" if style["pie_pct"] else "None"
    labels = "None" if style["legend"] == "outside" else "DATA['categories']"
    b = (f"    ax.pie(DATA['series'][0]['values'], labels={labels}, colors=COLORS, autopct={pct}, "
         f"startangle=90, counterclock=False, wedgeprops={wedge}, textprops={{'fontsize': FS8}})\n")
    b += "    ax.set_aspect('equal')\n"
    if style["legend"] == "outside":
        b += "    ax.legend(DATA['categories'], loc='center left', bbox_to_anchor=(1.0, 0.5))\n"
    return b


def _heatmap(data, style, lay, fg, xt_kw) -> str:
    """A matrix image with row and column labels, optional cell values (ink chosen for contrast
    with the colormap) and an optional colorbar."""
    b = f"    im = ax.imshow(DATA['matrix'], cmap={style['cmap']!r}, aspect='auto')\n"
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
        cb = lay["cbar"]
        b += "    cbar = fig.colorbar(im, ax=ax, fraction=0.06, pad=0.02)\n"
        b += f"    cbar.set_ticks({cb['ticks']!r}, labels={cb['labels']!r})\n"
    return b + "    ax.set_xlabel(DATA['x_label'])\n    ax.set_ylabel(DATA['y_label'])\n"


_DRAW = {"grouped_bar": _bars, "stacked_bar": _bars, "line": _lines, "area": _lines, "scatter": _scatter,
         "histogram": _histogram, "pie": _pie, "heatmap": _heatmap}


def chart_code(data: dict[str, Any], style: dict[str, Any], lay: dict[str, Any] | None = None) -> str:
    """A runnable script whose `draw(out)` writes the chart as PNG to `out` (path or file object).

    lay: the chart's layout from chart_layout.plan (computed here when not given)."""
    lay = lay if lay is not None else plan(data, style, shared_renderer(style["width"], style["height"], style["dpi"]))
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
    src += f"FS7, FS8 = {half(style['font_size'] * 0.7)}, {half(style['font_size'] * 0.8)}\n"
    if data["chart_type"] == "stacked_bar" and lay["value_labels"]:
        src += f"INK = {[_contrast(c) for c in PALETTES[style['palette']]]!r}  # value labels readable on each colour\n"
    if data["chart_type"] == "heatmap":
        src += f"CMAP_DARK_LOW = {style['cmap'] in ('viridis', 'magma', 'cividis')!r}\n"
    src += f"COMPRESS = {PNG_COMPRESS}\n"
    src += f"STYLE = {_fmt_literal(_rc(style))}\n\n\n"
    src += "def draw(out='chart.png'):\n"
    src += "    \"\"\"Draw the chart, write it to `out` (path or file object) as PNG and return the image.\"\"\"\n"
    src += "    with style.context('default'), rc_context(STYLE):  # ignore any local matplotlibrc\n"
    src += f"        fig = Figure(figsize=({fig_w}, {fig_h}), dpi={style['dpi']})\n"
    src += f"        fig.subplots_adjust(**{lay['margins']!r})\n"
    src += "        ax = fig.add_subplot()\n"
    src += "        _plot(fig, ax)\n"
    src += "        canvas = FigureCanvasAgg(fig)\n"
    src += "        canvas.draw()\n"
    src += "        rgba = Image.frombuffer('RGBA', canvas.get_width_height(), canvas.buffer_rgba(), 'raw', 'RGBA', 0, 1)\n"
    src += "    img = rgba.convert('RGB')  # the background is opaque: RGB loses nothing\n"
    src += f"    write_png(img, out, {style['dpi']})\n"
    src += "    return img\n\n\n"
    src += "def _plot(fig, ax):\n" + _body(data, style, lay) + "\n\n"
    src += "if __name__ == '__main__':\n    draw()\n"
    return src


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


# Agg renderers by (thread, width, height, dpi). Owner: this module; they live as long as the
# process. vary_size draws many sizes, so the cache holds at most 16M pixels (~64 MB of RGBA
# buffers) and starts over when a new size would pass that.
RENDERERS: ProcessCache[RendererAgg] = ProcessCache("Agg renderers", cost=lambda key: key[1] * key[2],
                                                    max_cost=16_000_000)


def shared_renderer(width: int, height: int, dpi: float) -> RendererAgg:
    """This thread's reusable Agg renderer for one figure size (see _SharedRendererCanvas)."""
    key = (threading.get_ident(), int(width), int(height), float(dpi))
    return RENDERERS.get(key, lambda: RendererAgg(int(width), int(height), dpi))


class _SharedRendererCanvas(FigureCanvasAgg):
    """An Agg canvas that reuses one renderer per (thread, width, height, dpi) across figures.

    `FigureCanvasAgg.draw` clears the renderer before drawing, so the pixels are those of a fresh
    renderer; what carries over is matplotlib's per-renderer text-metrics cache (tick labels,
    legend entries, units and category names recur from chart to chart, and each miss lays the
    text out with FreeType; chart_layout measures through the same renderer). Per thread, so
    concurrent draws never share pixels."""

    def get_renderer(self) -> RendererAgg:
        w, h = self.get_width_height(physical=True)
        key = (w, h, self.figure.dpi)
        if self._lastKey != key:
            self.renderer, self._lastKey = shared_renderer(w, h, self.figure.dpi), key
        return self.renderer
