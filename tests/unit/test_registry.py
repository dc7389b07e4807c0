"""The tool registry: lookup by name and module, refusal of duplicate names, and the function
schema handed to the LLM (Ollama/OpenAI function-calling shape)."""

from __future__ import annotations

from typing import Any

import pytest

from brain.modules.drink.service import DRINK_TYPES, MAX_GOAL_ML, MAX_ML, MIN_GOAL_ML, MIN_ML
from brain.modules.drink.tools import TOOLS as DRINK_TOOLS
from brain.tools.registry import ToolRegistry
from brain.tools.spec import ToolParam, ToolResult, ToolSpec


def _schemas() -> dict[str, dict[str, Any]]:
    schema = ToolRegistry(DRINK_TOOLS).llm_schema()
    assert len(schema) == len(DRINK_TOOLS)
    return {entry["function"]["name"]: entry for entry in schema}


@pytest.mark.parametrize("tool", DRINK_TOOLS, ids=lambda t: t.name)
def test_every_drink_tool_has_the_function_calling_shape(tool: ToolSpec) -> None:
    entry = _schemas()[tool.name]
    assert set(entry) == {"type", "function"}
    assert entry["type"] == "function"
    function = entry["function"]
    assert set(function) == {"name", "description", "parameters"}
    assert function["name"] == tool.name
    assert function["description"] == tool.description and function["description"]
    parameters = function["parameters"]
    assert parameters["type"] == "object"
    assert list(parameters["properties"]) == [p.name for p in tool.parameters]
    assert parameters["required"] == [p.name for p in tool.parameters if p.required]
    for prop in parameters["properties"].values():
        assert prop["type"] in {"string", "integer", "number", "boolean"}
        assert prop["description"]


def test_log_drink_schema_has_types_enum_and_bounds() -> None:
    parameters = _schemas()["log_drink"]["function"]["parameters"]
    assert parameters["required"] == ["drink_type"]
    props = parameters["properties"]
    assert props["drink_type"]["type"] == "string"
    assert props["drink_type"]["enum"] == list(DRINK_TYPES)
    assert props["quantity_ml"] == {
        "type": "integer", "description": "Amount in millilitres.", "minimum": MIN_ML, "maximum": MAX_ML,
    }
    assert props["name"]["type"] == "string" and props["name"]["maxLength"] == 100
    assert "enum" not in props["name"] and "minimum" not in props["name"]


def test_set_drink_goal_schema_requires_the_bounded_amount() -> None:
    parameters = _schemas()["set_drink_goal"]["function"]["parameters"]
    assert parameters["required"] == ["daily_ml"]
    assert parameters["properties"]["daily_ml"]["minimum"] == MIN_GOAL_ML
    assert parameters["properties"]["daily_ml"]["maximum"] == MAX_GOAL_ML
    assert parameters["properties"]["drink_type"]["enum"] == ["water"]


def test_date_parameter_is_a_string_with_date_format() -> None:
    props = _schemas()["get_drink_progress"]["function"]["parameters"]["properties"]
    assert props["date"]["type"] == "string" and props["date"]["format"] == "date"


def test_tool_without_parameters_has_empty_properties_and_required() -> None:
    parameters = _schemas()["list_drink_presets"]["function"]["parameters"]
    assert parameters == {"type": "object", "properties": {}, "required": []}


def test_datetime_and_time_parameters_are_strings_with_their_format() -> None:
    async def handler(ctx: Any, args: dict[str, Any]) -> ToolResult:
        return ToolResult.success()

    spec = ToolSpec("plan", "calendar", "Plan something.",
                    (ToolParam("at", "datetime", "When."), ToolParam("clock", "time", "Time of day."),
                     ToolParam("ratio", "number", "A ratio.", minimum=0, maximum=1),
                     ToolParam("urgent", "boolean", "Urgent?")),
                    "write", handler)
    props = ToolRegistry([spec]).llm_schema()[0]["function"]["parameters"]["properties"]
    assert props["at"]["type"] == "string" and props["at"]["format"] == "date-time"
    assert props["clock"]["type"] == "string" and props["clock"]["format"] == "time"
    assert props["ratio"] == {"type": "number", "description": "A ratio.", "minimum": 0, "maximum": 1}
    assert props["urgent"] == {"type": "boolean", "description": "Urgent?"}


def test_duplicate_tool_names_are_refused() -> None:
    registry = ToolRegistry(DRINK_TOOLS)
    with pytest.raises(ValueError, match="log_drink"):
        registry.register(DRINK_TOOLS[0])
    with pytest.raises(ValueError, match="registered twice"):
        ToolRegistry([DRINK_TOOLS[0], DRINK_TOOLS[0]])
    assert len(registry) == len(DRINK_TOOLS)


def test_tools_are_found_by_name_and_module() -> None:
    registry = ToolRegistry(DRINK_TOOLS)
    assert registry.get("log_drink") is DRINK_TOOLS[0]
    assert registry.get("no_such_tool") is None
    assert [t.name for t in registry.for_module("drink")] == [t.name for t in DRINK_TOOLS]
    assert registry.for_module("todo") == []
    assert registry.all() == list(DRINK_TOOLS)
