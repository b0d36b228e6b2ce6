"""Synthetic long documents: the asked fact is in the text once, chains stay in order, documents
are reproducible and reach their length from real sentences."""
import re

import pytest

from synth.long_context import KINDS, make_long_document

TEXTS = ["The river runs north past the mill. Farmers bring apples in autumn! Is the press still working? "
         "It is, and the cider is sold in town.",
         "Manuals describe the gear train in detail. Each wheel is checked before the season starts."]


@pytest.mark.parametrize("kind", KINDS)
def test_long_documents_hold_their_answer(kind):
    for i in range(10):
        d = make_long_document(TEXTS, kind, i, target_words=300, seed=1)
        assert d == make_long_document(TEXTS, kind, i, target_words=300, seed=1)
        context = d["text"].split("\n\nQuestion:")[0]
        assert len(context.split()) >= 300 and d["text"].endswith(f"Answer: {d['answer']}")
        assert all(0 <= x <= 1 for x in d["depths"])
        if kind == "needle":
            assert context.count(d["answer"]) == 1
        elif kind == "key_value":
            key = d["question"].split("record ")[1].rstrip("?")
            assert re.findall(rf"Record {key}: (\w+)\.", context) == [d["answer"]]
        else:
            names = d["answer"].split()
            value = d["question"].split("value ")[1].rstrip("?")
            assert f"VAR {names[0]} = {value}." in context
            pos = [context.index(f"VAR {b} = VAR {a}.") for a, b in zip(names, names[1:])]
            assert pos == sorted(pos) and context.index(f"VAR {names[0]} =") < pos[0]
    with pytest.raises(ValueError, match="kind must be one of"):
        make_long_document(TEXTS, "story", 0)
