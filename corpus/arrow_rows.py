"""Python rows -> an Arrow table of a given schema, built from buffers.

`pa.Table.from_pylist` (and every `pa.array` call) makes pyarrow import pandas on first use, to
check whether the values are pandas objects: ~0.3 CPU-s per process, a tenth of a one-process
dedup job. The shard writer's rows hold strings, integers, floats, booleans and lists of
strings; those columns are built here from numpy buffers, which never touches pandas. A column of
any other type, or whose values are not exactly of the column's Python type, goes through
`pa.array` as before, so a bad value fails with pyarrow's own error. The table equals
`from_pylist`'s (tests compare tables and the shard bytes written from them).
"""
from __future__ import annotations

import itertools
import operator
from typing import Any

import numpy as np
import pyarrow as pa

_INTS = {pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64}
_MAX_OFFSET = (1 << 31) - 1


def table_from_rows(rows: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """`pa.Table.from_pylist(rows, schema=schema)`, without importing pandas where the types allow."""
    columns = []
    for field in schema:
        values = [r.get(field.name) for r in rows]
        columns.append(_column(values, field.type))
    return pa.Table.from_arrays(columns, schema=schema)


def string_array(values: list) -> pa.Array:
    """`pa.array(values, pa.string())` for a list of str (or None)."""
    arr = _strings(values)
    return arr if arr is not None else pa.array(values, pa.string())


def uint64_array(values) -> pa.Array:
    """`pa.array(values, pa.uint64())` for integers in range, none of them None."""
    return _numpy_array(np.asarray(values, dtype=np.uint64), pa.uint64())


def int64_array(values) -> pa.Array:
    """`pa.array(values, pa.int64())` for integers in range (row indices for `take`), no None."""
    return _numpy_array(np.asarray(values, dtype=np.int64), pa.int64())


def uint64_values(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """A uint64 column without nulls as a numpy array (what `to_numpy()` gives; that call imports
    pandas)."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    parts = [np.frombuffer(c.buffers()[1], dtype=np.uint64, count=len(c), offset=c.offset * 8) for c in chunks]
    return np.concatenate(parts) if len(parts) != 1 else parts[0]


def _numpy_array(data: np.ndarray, typ: pa.DataType) -> pa.Array:
    return pa.Array.from_buffers(typ, len(data), [None, pa.py_buffer(np.ascontiguousarray(data))])


def _column(values: list, typ: pa.DataType) -> pa.Array:
    arr = None
    if pa.types.is_string(typ):
        arr = _strings(values)
    elif typ in _INTS:
        arr = _ints(values, typ)
    elif pa.types.is_float64(typ):
        arr = _floats(values)
    elif pa.types.is_boolean(typ):
        arr = _bools(values)
    elif pa.types.is_list(typ) and pa.types.is_string(typ.value_type):
        arr = _string_lists(values, typ)
    return arr if arr is not None else pa.array(values, type=typ)


_NONE = type(None)


def _types(values: list) -> set:
    """The Python types among `values` (one C pass: map and set, no Python frame per value)."""
    return set(map(type, values))


def _validity(values: list) -> tuple[pa.Buffer | None, int]:
    """(validity bitmap or None when nothing is null, null count)."""
    nulls = values.count(None)
    if not nulls:
        return None, 0
    valid = np.fromiter(map(operator.is_not, values, itertools.repeat(None)), dtype=bool, count=len(values))
    return pa.py_buffer(np.packbits(valid, bitorder="little").tobytes()), nulls


def _strings(values: list) -> pa.Array | None:
    if not _types(values) <= {str, _NONE}:
        return None
    try:
        data = [b"" if v is None else v.encode("utf-8") for v in values]
    except UnicodeEncodeError:  # a lone surrogate: pyarrow's own error
        return None
    offsets = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, data), dtype=np.int64, count=len(data)), out=offsets[1:])
    if offsets[-1] > _MAX_OFFSET:  # past 32-bit offsets: pyarrow decides
        return None
    validity, nulls = _validity(values)
    return pa.Array.from_buffers(pa.string(), len(values), [validity, pa.py_buffer(offsets.astype(np.int32)),
                                                           pa.py_buffer(b"".join(data))], null_count=nulls)


def _without_none(values: list, fill) -> list:
    return [fill if v is None else v for v in values] if None in values else values


def _ints(values: list, typ: pa.DataType) -> pa.Array | None:
    if not _types(values) <= {int, _NONE}:
        return None
    try:
        wide = np.array(_without_none(values, 0), dtype=np.int64)
    except OverflowError:  # past 64 bits: pyarrow's error
        return None
    info = np.iinfo(_INTS[typ])
    if len(wide) and (wide.min() < info.min or wide.max() > info.max):
        return None  # out of range: pyarrow's error
    data = wide.astype(_INTS[typ], copy=False)
    validity, nulls = _validity(values)
    return pa.Array.from_buffers(typ, len(values), [validity, pa.py_buffer(data)], null_count=nulls)


def _floats(values: list) -> pa.Array | None:
    if not _types(values) <= {float, _NONE}:
        return None
    data = np.array(_without_none(values, 0.0), dtype=np.float64)
    validity, nulls = _validity(values)
    return pa.Array.from_buffers(pa.float64(), len(values), [validity, pa.py_buffer(data)], null_count=nulls)


def _bools(values: list) -> pa.Array | None:
    if not _types(values) <= {bool, _NONE}:
        return None
    bits = np.packbits(np.fromiter(map(operator.is_, values, itertools.repeat(True)), dtype=bool, count=len(values)),
                       bitorder="little")
    validity, nulls = _validity(values)
    return pa.Array.from_buffers(pa.bool_(), len(values), [validity, pa.py_buffer(bits.tobytes())], null_count=nulls)


def _string_lists(values: list, typ: pa.DataType) -> pa.Array | None:
    if not _types(values) <= {list, _NONE}:
        return None
    flat = [x for v in values if v is not None for x in v]
    child = _strings(flat)
    if child is None:
        return None
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(np.fromiter((0 if v is None else len(v) for v in values), dtype=np.int64, count=len(values)),
              out=offsets[1:])
    if offsets[-1] > _MAX_OFFSET:
        return None
    validity, nulls = _validity(values)
    return pa.Array.from_buffers(typ, len(values), [validity, pa.py_buffer(offsets.astype(np.int32))],
                                 null_count=nulls, children=[child])
