"""The held-out split of the verified math and code sets: the items of a reserved seed.

An evaluation of verifiable math or code tasks scores on these items; training runs may not
use the seed, and decontamination drops any training item whose problem (math: problem text;
code: spec and test cases) equals a held-out one, casefolded and spacing-collapsed.
"""
from __future__ import annotations

from synth.code_items import draft_code_item
from synth.math_items import generate_problem
from synth.verified_item import eval_key

HELDOUT_SEED = 1_000_003


def heldout_keys(kind: str, n: int, languages=None, families=None) -> set[str]:
    """eval keys of the first n held-out items of `kind` (math or code)."""
    keys = set()
    for i in range(n):
        try:
            if kind == "math":
                keys.add(eval_key(generate_problem(HELDOUT_SEED, i, languages, families).problem))
            else:
                keys.add(draft_code_item(HELDOUT_SEED, i, families).eval_key)
        except Exception:  # noqa: BLE001  (an item the generator cannot make is not in the split)
            continue
    return keys
