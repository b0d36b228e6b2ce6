"""One synthetic chart: data -> style -> plotting code -> PNG, plus data table, QA and captions."""
from __future__ import annotations

from typing import Any, Sequence

from corpus.errors import ConfigError
from synth import fonts
from synth.chart_code import chart_code, render_chart_code, shared_renderer
from synth.chart_data import CHART_TYPES, data_table, make_chart_data
from synth.chart_layout import plan
from synth.chart_qa import chart_qa
from synth.chart_style import make_style
from synth.lexicon import LANGUAGES
from synth.pairs import LANGUAGE_NAMES, pair_row
from synth.rng import choice, item_id, item_rng
from synth.tables_core import to_markdown

TYPE_NAMES = {"grouped_bar": "grouped bar chart", "stacked_bar": "stacked bar chart", "line": "line chart",
              "scatter": "scatter plot", "pie": "pie chart", "histogram": "histogram", "area": "stacked area chart",
              "heatmap": "heatmap"}
MIN_SIDE, MAX_SIDE = 128, 4096


def check_chart_params(width: int, height: int, chart_types: Sequence[str] | None,
                       languages: Sequence[str] | None) -> None:
    for name, v in (("width", width), ("height", height)):
        if not isinstance(v, int) or not MIN_SIDE <= v <= MAX_SIDE:
            raise ConfigError(f"chart {name} must be an integer between {MIN_SIDE} and {MAX_SIDE} pixels, got {v!r}")
    if width / height > 4 or height / width > 4:
        raise ConfigError(f"chart size {width}x{height} is too elongated (aspect ratio above 4)")
    bad = [t for t in (chart_types or ()) if t not in CHART_TYPES]
    if bad:
        raise ConfigError(f"unknown chart type {bad[0]!r}; choose from {', '.join(CHART_TYPES)}")
    bad = [lang for lang in (languages or ()) if lang not in LANGUAGES]
    if bad:
        raise ConfigError(f"unknown chart language {bad[0]!r}; choose from {', '.join(LANGUAGES)}")


def chart_captions(d: dict[str, Any], style: dict[str, Any]) -> dict[str, str]:
    """keywords / sentence / paragraph descriptions of the chart, in English with the chart's labels."""
    t = d["chart_type"]
    kind = "donut chart" if t == "pie" and style.get("donut") else TYPE_NAMES[t]
    if t == "area" and len(d["series"]) == 1:
        kind = "area chart"
    unit = f" in {d['unit_label']}" if d.get("unit_label") else ""
    names = [s["name"] for s in d.get("series", [])]
    if t in ("grouped_bar", "stacked_bar", "line", "area", "pie"):
        what = f"across {len(d['categories'])} categories ({d['categories'][0]} to {d['categories'][-1]})"
        who = f" for {', '.join(names[:-1]) + ' and ' + names[-1] if len(names) > 1 else names[0]}" if t != "pie" else ""
    elif t == "heatmap":
        what = f"for {len(d['row_labels'])} rows by {len(d['col_labels'])} columns"
        who = ""
    elif t == "scatter":
        what = f"of {sum(len(s['x']) for s in d['series'])} points"
        who = f" in {len(names)} group{'s' if len(names) > 1 else ''}"
    else:
        what = f"of {len(d['values'])} values in {len(d['bin_edges']) - 1} bins"
        who = ""
    sentence = f"A {kind} titled \"{d['title']}\"{unit}{who} {what}."
    kw = [kind, d["title"]] + ([d["unit_label"]] if d.get("unit_label") else []) + names[:4] + \
        [LANGUAGE_NAMES[d["language"]] + " labels"]
    facts = []
    if t in ("grouped_bar", "stacked_bar", "line", "area", "pie"):
        best = max(((v, s["name"], d["categories"][j]) for s in d["series"] for j, v in enumerate(s["values"])),
                   key=lambda x: x[0])
        facts.append(f"The largest value, {best[0]:.{d['decimals']}f}, belongs to {best[2]}"
                     f"{'' if t == 'pie' or len(names) == 1 else ' (' + best[1] + ')'}.")
        if d.get("time_axis"):
            s = d["series"][0]
            facts.append(f"{s['name']} goes from {s['values'][0]:.{d['decimals']}f} in {d['categories'][0]} to "
                         f"{s['values'][-1]:.{d['decimals']}f} in {d['categories'][-1]}.")
    elif t == "heatmap":
        flat = [(v, r, c) for r, row in zip(d["row_labels"], d["matrix"]) for c, v in zip(d["col_labels"], row)]
        hi = max(flat, key=lambda x: x[0])
        facts.append(f"The highest cell is {hi[1]} at {hi[2]} with {hi[0]:.{d['decimals']}f}.")
    elif t == "histogram":
        facts.append(f"Values range from {min(d['values'])} to {max(d['values'])}.")
    else:
        facts.append(f"The x axis shows {d['x_label']} and the y axis {d['y_label']}.")
    look = (f"It is drawn in a {style['font']} font on a {style['theme']} background with the {style['palette']} "
            f"palette{', with value labels' if style.get('value_labels') and t in ('grouped_bar', 'stacked_bar', 'line') else ''}.")
    paragraph = " ".join([sentence] + facts + [f"Labels are in {LANGUAGE_NAMES[d['language']]}.", look])
    return {"keywords": ", ".join(kw), "sentence": sentence, "paragraph": paragraph}


def make_chart(seed: int, index: int, width: int = 448, height: int = 448,
               chart_types: Sequence[str] | None = None, languages: Sequence[str] | None = None,
               max_qa: int = 8, vary_size: bool = False) -> dict[str, Any]:
    """Row `index` of a chart run seeded with `seed` (a PAIRS row; depends on nothing else).

    vary_size: draw each chart's size around width x height (0.75-1.25 scale, aspect 3:4 to 16:9)."""
    fonts.quiet_matplotlib()
    fonts.fast_font_lookup()
    rng = item_rng(seed, "chart", index)
    if vary_size:
        scale = float(rng.uniform(0.75, 1.25))
        aspect = float(choice(rng, (0.75, 1.0, 1.0, 1.33, 1.5, 1.78)))
        area = width * height * scale * scale
        width = int(min(MAX_SIDE, max(MIN_SIDE, round((area * aspect) ** 0.5))))
        height = int(min(MAX_SIDE, max(MIN_SIDE, round((area / aspect) ** 0.5))))
    ctype = choice(rng, tuple(chart_types or CHART_TYPES))
    lang = choice(rng, tuple(languages or LANGUAGES))
    data = make_chart_data(rng, ctype, lang)
    style = make_style(rng, data, width, height)
    lay = plan(data, style, shared_renderer(style["width"], style["height"], style["dpi"]))
    style["value_labels"] = lay["value_labels"]  # drawn only where they fit (captions say what is drawn)
    code = chart_code(data, style, lay)
    png, img = render_chart_code(code)
    qa = chart_qa(data, rng, max_qa=max_qa)
    caps = chart_captions(data, style)
    table = data_table(data)
    meta = {"kind": "chart", "chart_type": ctype, "data": data, "style": style, "code": code,
            "table": table, "table_markdown": to_markdown(table[:60]), "captions": caps,
            "qa_args": [q["args"] for q in qa], "seed": seed, "index": index}
    return pair_row(item_id("chart", seed, index), png, "chart", caps["sentence"], lang, qa, meta, image=img)
