"""pipelines/staged_rows.py on the in-process runner: a step over staged rows gives what the same
Map over the rows gives, side inputs included, and every row is staged exactly once."""
import json
import os
import pickle

import apache_beam as beam

from pipelines.beam_options import pipeline_options
from pipelines.staged_rows import map_rows


def _run(tmp_path, stage_dir, rows, args=(), name="out.json"):
    path = tmp_path / name

    def _label(row, threshold, names):  # defined here: pickled by value for worker processes
        return dict(row, big=row["n"] >= threshold, named=row["name"] in names)

    def _write(items):
        path.write_text(json.dumps(sorted(items, key=lambda r: r["n"])))

    with beam.Pipeline(options=pipeline_options(list(args))) as p:
        pc = p | beam.Create(rows)
        threshold = pc | "Mean" >> beam.Map(lambda r: r["n"]) | beam.combiners.Mean.Globally()
        names = pc | "Names" >> beam.Map(lambda r: r["name"]) | beam.Filter(lambda s: s.endswith("7")) \
            | beam.combiners.ToSet()
        out = map_rows(pc, "Label", _label, stage_dir, threshold=beam.pvalue.AsSingleton(threshold),
                       names=beam.pvalue.AsSingleton(names))
        out | beam.combiners.ToList() | beam.Map(_write)
    return json.loads(path.read_text())


def test_staged_map_equals_plain_map_with_side_inputs(tmp_path):
    rows = [{"n": i, "name": f"row{i}", "text": "x" * (i % 50)} for i in range(2500)]
    plain = _run(tmp_path, None, rows, name="plain.json")
    stage = tmp_path / "out"
    staged = _run(tmp_path, str(stage), rows, name="staged.json")
    assert staged == plain and len(plain) == len(rows)
    assert sum(r["big"] for r in plain) == 1250 and sum(r["named"] for r in plain) == 250
    files = sorted(os.listdir(stage / ".staging"))
    batches = [pickle.loads((stage / ".staging" / f).read_bytes()) for f in files]
    assert len(batches) >= 3 and all(len(b) <= 1024 for b in batches)
    assert sorted(r["n"] for b in batches for r in b) == list(range(2500))  # each row staged once
    two = _run(tmp_path, str(tmp_path / "out2"), rows,
               ["--direct_running_mode=multi_processing", "--direct_num_workers=2"], name="two.json")
    assert two == plain
