"""`ToolSpec` and its parameters, the result shape, and the context a handler runs in."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from brain.events.catalog import ActorT
from brain.i18n import Text
from brain.people.models import User
from brain.store.unit_of_work import UnitOfWork

ParamType = Literal["string", "integer", "number", "boolean", "date", "datetime", "time"]
PolicyHint = Literal["read", "write", "destructive"]


@dataclass(frozen=True)
class ToolParam:
    name: str
    type: ParamType
    description: str
    required: bool = False
    enum: tuple[str, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    max_length: int = 500
    label: str | None = None  # an N_() msgid naming the value for people, e.g. "The amount in ml"


@dataclass
class ToolResult:
    ok: bool
    message: Text | None = None
    data: dict[str, Any] = field(default_factory=dict)
    error_code: str | None = None

    @classmethod
    def success(cls, message: Text | None = None, **data: Any) -> ToolResult:
        return cls(ok=True, message=message, data=data)

    @classmethod
    def failure(cls, message: Text, code: str) -> ToolResult:
        return cls(ok=False, message=message, error_code=code)


@dataclass
class ToolContext:
    uow: UnitOfWork
    user: User
    actor: ActorT

    @property
    def user_id(self) -> uuid.UUID:
        return self.user.id


Handler = Callable[[ToolContext, dict[str, Any]], Awaitable[ToolResult]]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    module: str
    description: str
    parameters: tuple[ToolParam, ...]
    policy: PolicyHint
    handler: Handler = field(compare=False)

    def param(self, name: str) -> ToolParam | None:
        return next((p for p in self.parameters if p.name == name), None)
