"""Guided generation: any seed of an untrained model gives a value of the type; bad requests are
refused before decoding with a message naming the problem."""
import dataclasses
import enum
from typing import Annotated, Optional

import pytest
from pydantic import BaseModel, Field

from inference.generator import GenerationError, GenerationIncomplete, Generator, respond_many
from inference.schema import SchemaError, generable
from training.models.config import SequenceTooLongError
from gen_helpers import micro_model

MICRO = dict(d_model=32, n_layers=1, n_heads=2, n_kv_heads=1, ffn_hidden=64)


class Color(enum.Enum):
    red = "red"
    green = "green"
    blue = "blue"


@dataclasses.dataclass
class Point:
    x: Annotated[int, Field(ge=-5, le=5)]
    y: Annotated[float, Field(ge=0, le=1)]


class Item(BaseModel):
    name: str = Field(max_length=8)
    color: Color
    code: str = Field(pattern=r"^[A-Z]{2}[0-9]{2}$")
    tags: list[Annotated[str, Field(max_length=5)]] = Field(max_length=3)
    point: Optional[Point] = None
    count: int = Field(ge=0, le=100)
    ok: bool


@pytest.mark.slow
def test_thousand_seeds_all_parse_into_the_type(tokenizer):
    gen = Generator(micro_model(0, **MICRO), tokenizer)
    values = respond_many(gen, "Item:", Item, list(range(1000)), max_new_tokens=160, inject_format=False)
    assert all(isinstance(v, Item) for v in values), [v for v in values if not isinstance(v, Item)][:1]
    assert len({v.model_dump_json() for v in values}) > 900  # really sampled, not one value repeated
    assert {v.color for v in values} == set(Color)
    assert any(v.point is not None for v in values) and any(v.point is None for v in values)
    # a row depends on its seed only
    again = respond_many(gen, "Item:", Item, [7, 3], max_new_tokens=160, inject_format=False)
    assert again == [values[7], values[3]]


def test_single_request_returns_a_typed_instance_with_format_in_prompt(tokenizer):
    gen = Generator(micro_model(1, max_seq_len=1024, **MICRO), tokenizer)
    out = gen.respond_output("Describe a point.", Point, temperature=1.0, seed=3)
    assert isinstance(out.value, Point) and -5 <= out.value.x <= 5
    assert gen.respond("Describe a point.", Point, temperature=1.0, seed=3) == out.value  # same seed, same value
    assert isinstance(gen.respond("Pick a color.", Color, temperature=1.0, seed=1), Color)


def test_inexpressible_schema_names_the_construct(tokenizer):
    class Tagged(BaseModel):
        tags: set[str]  # JSON Schema uniqueItems: the engine does not enforce it
    gen = Generator(micro_model(0, **MICRO), tokenizer)
    with pytest.raises(SchemaError, match="uniqueItems"):
        gen.respond("x", Tagged)
    with pytest.raises(SchemaError, match="uniqueItems"):
        generable(Tagged)


def test_prompt_longer_than_context_is_refused(tokenizer):
    gen = Generator(micro_model(0, **MICRO), tokenizer)  # context 256
    with pytest.raises(SequenceTooLongError, match="longer than the context"):
        gen.text("word " * 400, max_new_tokens=4)


def test_budget_without_valid_completion_is_refused_and_running_out_is_typed(tokenizer):
    class Big(BaseModel):
        items: list[Point] = Field(min_length=30)
    gen = Generator(micro_model(0, **MICRO), tokenizer)
    with pytest.raises(GenerationError, match="no valid completion fits"):
        gen.respond("x", Big, inject_format=False, max_new_tokens=8)
    with pytest.raises(GenerationIncomplete) as e:  # fits in principle, not with these samples
        gen.respond("x", Item, inject_format=False, max_new_tokens=12, temperature=1.0, seed=0)
    assert e.value.text.startswith("{")
