"""The type the demo's guided-generation stage asks its freshly trained model for."""
from __future__ import annotations

import dataclasses
import enum
from typing import Annotated

from pydantic import Field


class Topic(enum.Enum):
    cider = "cider"
    apples = "apples"
    orchards = "orchards"
    other = "other"


@dataclasses.dataclass
class PageNote:
    topic: Topic
    title: Annotated[str, Field(max_length=20)]
    rating: Annotated[int, Field(ge=1, le=5)]
