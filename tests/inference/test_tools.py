"""The tool executor: parallel calls really overlap, a raising or hanging tool becomes an error
result, and tool signatures become schemas (untyped ones refused)."""
import threading

import pytest

from inference.schema import SchemaError
from inference.tools import Tool, ToolCall, ToolExecutor, turn_schema


def test_parallel_calls_run_concurrently_and_failures_are_results():
    barrier = threading.Barrier(2, timeout=5)

    def meet(x: int) -> int:
        """Only returns if another call is running at the same time."""
        barrier.wait()
        return x * 2

    def explode(x: int) -> int:
        raise ValueError("boom")

    release = threading.Event()

    def hang(x: int) -> int:
        release.wait(10)
        return x

    ex = ToolExecutor([Tool.from_function(f) for f in (meet, explode, hang)], timeout=1.0)
    calls = ex.run([ToolCall("meet", {"x": 1}), ToolCall("meet", {"x": 2}), ToolCall("explode", {"x": 0}),
                    ToolCall("hang", {"x": 3}), ToolCall("meet", {"x": "not a number"})])
    release.set()
    assert [c.result for c in calls[:2]] == [2, 4] and calls[0].error is None
    assert calls[2].error == "ValueError: boom"
    assert calls[3].error == "timed out after 1 s"
    assert "ValidationError" in calls[4].error


def test_signatures_become_schemas():
    def weather(city: str, days: int = 1) -> str:
        """Forecast for a city."""
        return city

    t = Tool.from_function(weather)
    assert t.description == "Forecast for a city."
    assert t.parameters["required"] == ["city"] and t.parameters["properties"]["days"]["type"] == "integer"
    s = turn_schema([t], {"type": "string"}, max_parallel=2, may_call=True)
    assert s["anyOf"][0]["properties"]["calls"]["maxItems"] == 2
    assert "calls" not in str(turn_schema([t], {"type": "string"}, 2, may_call=False))

    def untyped(x):
        return x
    with pytest.raises(SchemaError, match="no type annotation"):
        Tool.from_function(untyped)
