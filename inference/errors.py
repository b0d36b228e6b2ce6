"""Errors of the inference package that several modules raise (kept apart so none imports the other for them)."""
from __future__ import annotations

from corpus.errors import CidermillError


class SchemaError(CidermillError):
    """A type or schema the constrained decoder cannot express; the message names the construct."""
