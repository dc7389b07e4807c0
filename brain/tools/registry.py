"""The tool registry: every module's ToolSpecs by name, and the function schema for the LLM."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from brain.tools.spec import ToolParam, ToolSpec

_JSON_TYPES = {
    "string": ("string", None), "integer": ("integer", None), "number": ("number", None),
    "boolean": ("boolean", None), "date": ("string", "date"), "datetime": ("string", "date-time"),
    "time": ("string", "time"),
}


class ToolRegistry:
    def __init__(self, tools: Iterable[ToolSpec] = ()) -> None:
        self._tools: dict[str, ToolSpec] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: ToolSpec) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is registered twice")
        self._tools[tool.name] = tool

    def get(self, name: str) -> ToolSpec | None:
        return self._tools.get(name)

    def all(self) -> list[ToolSpec]:
        return list(self._tools.values())

    def for_module(self, module: str) -> list[ToolSpec]:
        return [t for t in self._tools.values() if t.module == module]

    def __len__(self) -> int:
        return len(self._tools)

    def llm_schema(self) -> list[dict[str, Any]]:
        """Ollama/OpenAI function-calling shape: [{type: function, function: {name, description, parameters}}]."""
        return [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": {
                        "type": "object",
                        "properties": {p.name: _param_schema(p) for p in t.parameters},
                        "required": [p.name for p in t.parameters if p.required],
                    },
                },
            }
            for t in self._tools.values()
        ]


def _param_schema(p: ToolParam) -> dict[str, Any]:
    json_type, fmt = _JSON_TYPES[p.type]
    schema: dict[str, Any] = {"type": json_type, "description": p.description}
    if fmt:
        schema["format"] = fmt
    if p.enum:
        schema["enum"] = list(p.enum)
    if p.minimum is not None:
        schema["minimum"] = p.minimum
    if p.maximum is not None:
        schema["maximum"] = p.maximum
    if p.type == "string":
        schema["maxLength"] = p.max_length
    return schema

