"""Small tables from the synthetic generators, cut to fit a small model's context."""
from __future__ import annotations

import numpy as np

from synth.rng import item_rng
from synth.tables import generated_grid

MAX_ROWS = 5
HELDOUT_EVERY = 5   # source item i is held out when i % HELDOUT_EVERY == 0


def split_of(index: int) -> str:
    return "heldout" if index % HELDOUT_EVERY == 0 else "train"


def small_table(seed: int, index: int, kind: str = "table",
                max_rows: int = MAX_ROWS) -> tuple[list[list[str]], str, np.random.Generator]:
    """(grid cut to ``max_rows`` body rows, title, the item's rng for what is drawn next); fewer rows
    make shorter prompts, for a model with a short context."""
    rng = item_rng(seed, f"sft-{kind}", index)
    grid, title, _ = generated_grid(rng, "en")
    grid = [grid[0], *grid[1:max_rows + 1]]
    grid[0] = [h or "Item" for h in grid[0]]
    return grid, title, rng


def table_text(grid: list[list[str]], title: str = "") -> str:
    """Rows as ``a | b | c`` lines, header first: markdown without the rule line (fewer tokens)."""
    lines = [" | ".join(r) for r in grid]
    return (f"{title}\n" if title else "") + "\n".join(lines)
