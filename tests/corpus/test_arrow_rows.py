"""Rows built into Arrow from buffers equal pa.Table.from_pylist's table, byte for byte in IPC, and
values of the wrong type fail as pyarrow fails on them."""
import os
import random
import subprocess
import sys

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

from corpus.arrow_rows import table_from_rows

SCHEMA = pa.schema([("id", pa.string()), ("n", pa.int32()), ("m", pa.int64()), ("x", pa.float64()),
                    ("b", pa.bool_()), ("langs", pa.list_(pa.string())), ("s", pa.string()), ("t", pa.timestamp("s"))])


def _rows(n=600, seed=1):
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        r = {"id": f"k{i}", "n": rng.choice([None, 0, -5, 2 ** 31 - 1, -2 ** 31]), "m": rng.choice([None, 2 ** 62, -1]),
             "x": rng.choice([None, 0.5, float("inf"), -1e300, 0.0]), "b": rng.choice([None, True, False]),
             "langs": rng.choice([None, [], ["en", "ü"], ["日本"]]), "s": rng.choice([None, "", "é" * 10, "x\x00y"]),
             "t": None, "extra": "ignored"}
        if rng.random() < 0.1:
            del r["s"]  # a missing field is a null, as in from_pylist
        rows.append(r)
    return rows


def _ipc(table):
    sink = pa.BufferOutputStream()
    with ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


@pytest.mark.parametrize("rows", [_rows(), _rows(3, seed=2), [], [{"id": None}], [{"id": "only"}]])
def test_equals_from_pylist(rows):
    ours, ref = table_from_rows(rows, SCHEMA), pa.Table.from_pylist(rows, schema=SCHEMA)
    assert ours.equals(ref)
    assert _ipc(ours) == _ipc(ref)
    for name in SCHEMA.names:  # no validity bitmap where nothing is null, as pyarrow builds it
        assert (ours.column(name).null_count == 0) == (ref.column(name).null_count == 0)


@pytest.mark.parametrize("bad", [{"n": 1.5}, {"n": 2 ** 31}, {"b": 1}, {"s": 5}, {"langs": "en"}, {"s": "\udcff"}])
def test_a_value_of_the_wrong_type_fails_as_pyarrow_fails(bad):
    rows = [{"id": "a"}, dict({"id": "b"}, **bad)]
    try:
        pa.Table.from_pylist(rows, schema=SCHEMA)
    except (pa.ArrowException, TypeError, ValueError, OverflowError, UnicodeError) as e:
        with pytest.raises(type(e)):
            table_from_rows(rows, SCHEMA)
    else:  # pyarrow converts it: so do we, to the same table
        assert table_from_rows(rows, SCHEMA).equals(pa.Table.from_pylist(rows, schema=SCHEMA))


def test_building_a_table_does_not_import_pandas():
    code = ("import sys, pyarrow as pa\nfrom corpus.arrow_rows import table_from_rows\n"
            "s = pa.schema([('id', pa.string()), ('n', pa.int32()), ('x', pa.float64()), ('b', pa.bool_()),"
            " ('l', pa.list_(pa.string()))])\n"
            "table_from_rows([{'id': 'a', 'n': 1, 'x': 0.5, 'b': True, 'l': ['x']}, {'id': None}], s)\n"
            "print('pandas' in sys.modules)\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert out.stdout.strip() == "False"
