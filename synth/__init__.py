"""Synthetic image-text data with exact QA: charts, tables and captioned scenes (plain library, no Beam).

Each item depends only on (seed, kind, index) - see rng.py - and becomes one row of the shared
PAIRS schema (pairs.py): text = one-sentence caption, qa = [{question, answer, type}], and in
meta_json the other caption levels, the data table, the plotting code, boxes and QA operands.

- charts.py      chart_data (topics, units, trends, 6 languages) -> chart_style -> chart_layout
                 (value ticks, margins from measured text) -> chart_code (a runnable matplotlib
                 script; the image is what it draws) -> chart_qa, captions
- tables.py      generated tables and web tables (tables_core normalises, html_tables parses
                 spans), rendered with PIL, table_qa
- captions.py    scenes.py + scene_draw.py (shapes, objects, words, mini charts, measured boxes)
                 -> scene_captions.py (keywords, sentence, paragraph, grounded <box> captions, QA)
- contact_sheet.py  report figures

pipelines/synth_pipeline.py wires these into `cidermill synth` (local or Beam, same bytes).
"""
