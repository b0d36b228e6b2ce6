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

Verified text (VERIFIED schema; pipelines/verified_synth_pipeline.py, `cidermill synth math|code`):
- math_items.py  math_tables / math_algebra / math_units / math_probability make problems with
                 worked steps (math_steps: Step, re-derivation, corruption; math_lang: wording);
                 each family has an independent checker (sympy, re-read table, SI, enumeration)
- code_items.py  code_tasks (specs, solutions, buggy and slow variants, oracles) -> tests run in
                 sandbox.py (rlimits, network namespace, uid drop, audit hook; fork server)
- verified_heldout.py  the held-out split (a reserved seed) decontamination compares against
"""
