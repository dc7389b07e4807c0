"""Who caused a write: the person, an AI (with mission, iteration and rationale), or the system."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

SystemSource = Literal[
    "projection", "rule", "migration", "scheduler", "mission-runner", "bootstrap", "retention", "goal-tracker"
]


class UserActor(BaseModel):
    model_config = ConfigDict(frozen=True)
    kind: Literal["user"] = "user"


class AiActor(BaseModel):
    model_config = ConfigDict(frozen=True)
    kind: Literal["ai"] = "ai"
    mission_id: str | None = None
    iteration_id: str | None = None
    rationale: str = ""
    # The rationale is the person's own message (a chat turn), not a reason the model gave: not shown back to them.
    quotes_person: bool = False


class SystemActor(BaseModel):
    model_config = ConfigDict(frozen=True)
    kind: Literal["system"] = "system"
    source: SystemSource


Actor = Annotated[UserActor | AiActor | SystemActor, Field(discriminator="kind")]
_actor_adapter: TypeAdapter[UserActor | AiActor | SystemActor] = TypeAdapter(Actor)

USER = UserActor()


def ai(rationale: str = "", mission_id: str | None = None, iteration_id: str | None = None, *,
       quotes_person: bool = False) -> AiActor:
    return AiActor(rationale=rationale, mission_id=mission_id, iteration_id=iteration_id, quotes_person=quotes_person)


def system(source: SystemSource) -> SystemActor:
    return SystemActor(source=source)


def actor_from_json(data: dict[str, Any]) -> UserActor | AiActor | SystemActor:
    return _actor_adapter.validate_python(data)
