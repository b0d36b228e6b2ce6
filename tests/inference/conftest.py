"""Shared fixtures: a small byte-level BPE trained on fixed text, untrained micro models."""
import json
import random

import pytest


def _corpus() -> list[str]:
    rng = random.Random(0)
    words = ("the model writes a value name color red green blue point count tags code answer "
             "tool call weather city temperature sum of numbers add multiply result error time "
             "alpha beta gamma delta json schema object array string true false null").split()
    texts = []
    for i in range(400):
        obj = {rng.choice(words): rng.choice(words), "n": rng.randint(-50, 500),
               "x": round(rng.uniform(-9, 9), 2), "l": [rng.choice(words) for _ in range(3)], "b": True}
        texts.append(json.dumps(obj) + " " + " ".join(rng.choice(words) for _ in range(12)))
    return texts


@pytest.fixture(scope="session")
def tokenizer():
    from training.tokenizer import train_tokenizer
    return train_tokenizer(_corpus(), 512)
