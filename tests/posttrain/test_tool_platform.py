"""The tool platform: typed tools whose schemas the inference package derives, errors as results."""
from __future__ import annotations

from inference.tools import Tool, ToolCall, ToolExecutor
from training.posttrain.tool_platform import ToolPlatform

GRID = [["Name", "Age"], ["Ivan", "41"], ["Uma", "30"]]


def test_tools_compute_and_keep_state():
    p = ToolPlatform({"t": GRID})
    assert p.execute({"name": "calculator", "arguments": {"expression": "(41 + 30) / 2"}}) == \
        {"name": "calculator", "result": "35.5"}
    assert p.execute({"name": "table_lookup", "arguments": {"table": "t", "row": "Uma", "column": "Age"}})["result"] == "30"
    assert p.execute({"name": "convert_units", "arguments": {"value": 100, "from_unit": "C", "to_unit": "F"}})["result"] == "212"
    assert p.execute({"name": "kv_set", "arguments": {"key": "a", "value": "x"}})["result"] == "ok"
    assert p.execute({"name": "kv_get", "arguments": {"key": "a"}})["result"] == "x"


def test_bad_calls_are_error_results_not_exceptions():
    p = ToolPlatform({"t": GRID})
    bad = [{"name": "calculator", "arguments": {"expression": "__import__('os').system('true')"}},
           {"name": "calculator", "arguments": {"expression": "1/0"}},
           {"name": "table_lookup", "arguments": {"table": "t", "row": "Iva", "column": "Age"}},
           {"name": "convert_units", "arguments": {"value": 1, "from_unit": "kg", "to_unit": "km"}},
           {"name": "kv_get", "arguments": {"key": "nope"}},
           {"name": "rm_rf", "arguments": {}},
           {"name": "kv_get", "arguments": "key"}]
    for call in bad:
        assert "error" in p.execute(call), call


def test_the_inference_package_runs_the_platform_tools():
    p = ToolPlatform({"t": GRID})
    tools = [Tool.from_function(f) for f in p.functions()]
    assert [t.name for t in tools] == ["calculator", "table_lookup", "convert_units", "kv_set", "kv_get"]
    calls = ToolExecutor(tools).run([ToolCall("table_lookup", {"table": "t", "row": "Ivan", "column": "Age"}),
                                     ToolCall("calculator", {"expression": "2*3"})])
    assert [c.result for c in calls] == ["41", "6"]
