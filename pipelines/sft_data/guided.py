"""Guided-generation format data: the schema is injected into the prompt exactly as the inference
package does (``inference.prompting.with_response_format``) and the answer is a JSON value whose
fields are read from the source table, not filled from a template."""
from __future__ import annotations

import json
from typing import Iterator

from inference.prompting import with_response_format
from inference.schema import bounded
from pipelines.sft_data.instructions import _row
from pipelines.sft_data.sources import MAX_ROWS, small_table, split_of, table_text
from synth.tables_core import parse_number


def _field(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name.lower()).strip("_")[:24] or "field"


def record_schema(grid: list[list[str]]) -> tuple[dict, list[str]]:
    """A closed object schema for one row: numbers where the whole column parses as numbers."""
    head, body = grid[0], grid[1:]
    props, names = {}, []
    for j, h in enumerate(head):
        name = _field(h)
        if name in props:
            name = f"{name}_{j}"
        numeric = j > 0 and all(parse_number(r[j]) is not None for r in body)
        props[name] = {"type": "number"} if numeric else {"type": "string"}
        names.append(name)
    return bounded({"type": "object", "properties": props, "required": names}), names


def guided_conversations(seed: int, n_items: int, start: int = 10_000, max_rows: int = MAX_ROWS) -> Iterator[dict]:
    for i in range(start, start + n_items):
        grid, title, rng = small_table(seed, i, "guided", max_rows)
        schema, names = record_schema(grid)
        r = int(rng.integers(1, len(grid)))
        row = grid[r]
        value = {}
        for name, cell, j in zip(names, row, range(len(row))):
            value[name] = parse_number(cell) if schema["properties"][name]["type"] == "number" else cell
        prompt = with_response_format(f"{table_text(grid, title)}\nGive the record of {row[0]!r} as JSON.", schema)
        answer = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        msgs = [{"role": "user", "content": prompt}, {"role": "assistant", "content": answer}]
        yield _row(f"guided-{seed}-{i:06d}", "guided", split_of(i), "en", msgs,
                   {"type": "schema", "schema": schema, "expected": value})
