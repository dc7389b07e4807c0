"""Tables of the companion: the person's AI settings, proposals, the conversation, missions with their
iterations, and the tool-call record (rate limit and audit). Every table carries `user_id`; every query
on them is scoped to one person."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, Text, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base

PROPOSAL_STATUSES = ("pending", "approved", "rejected", "expired")
MISSION_STATES = ("active", "paused", "done", "archived")
ITERATION_STATUSES = ("running", "awaiting-review", "approved", "rejected", "failed")


class CompanionSettings(Base):
    """What the person allowed the AI: destructive tools, sending sensitive content to remote models, and
    their own per-tool / per-module policy overrides ({"tools": {name: decision}, "modules": {...}})."""

    __tablename__ = "companion_settings"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    allow_destructive: Mapped[bool] = mapped_column(default=False, server_default="false")
    remote_consent: Mapped[bool] = mapped_column(default=False, server_default="false")
    policy: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict, server_default="{}")
    updated_at: Mapped[datetime] = mapped_column(server_default=func.now())


class Proposal(Base):
    """One AI tool call waiting for the person's decision. `args_hash` pins the exact call: approving runs
    this tool with these arguments once, under the AI actor that proposed it."""

    __tablename__ = "proposals"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column()
    expires_at: Mapped[datetime] = mapped_column()
    status: Mapped[str] = mapped_column(String(16), default="pending")  # one of PROPOSAL_STATUSES
    tool_name: Mapped[str] = mapped_column(String(64))
    arguments: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    args_hash: Mapped[str] = mapped_column(String(64))
    actor: Mapped[dict[str, Any]] = mapped_column(JSONB)  # the AiActor as JSON (mission, iteration, rationale)
    rationale: Mapped[str] = mapped_column(Text, default="")
    flags: Mapped[list[str]] = mapped_column(JSONB, default=list)  # e.g. ["injection"]
    mission_id: Mapped[uuid.UUID | None] = mapped_column()
    decided_at: Mapped[datetime | None] = mapped_column()
    decided_by: Mapped[str | None] = mapped_column(String(16))  # user | auto-expire
    reason: Mapped[str | None] = mapped_column(Text)  # the person's reason for a rejection
    reason_delivered: Mapped[bool] = mapped_column(default=False, server_default="false")  # fed back to the model
    result: Mapped[dict[str, Any] | None] = mapped_column(JSONB)  # the executed call's ok/message/data

    __table_args__ = (
        Index("ix_proposals_user_status_created", "user_id", "status", "created_at"),
        Index("ix_proposals_expiry", "status", "expires_at"),
    )


class ConversationMessage(Base):
    """The companion conversation, one row per message (system prompts and reminders are never stored).
    `archived` rows were folded into a summary by compaction; a summary row has `kind` 'summary'."""

    __tablename__ = "conversation_messages"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    turn_id: Mapped[uuid.UUID] = mapped_column()
    at: Mapped[datetime] = mapped_column()
    role: Mapped[str] = mapped_column(String(16))  # user | assistant | tool
    kind: Mapped[str] = mapped_column(String(16), default="message")  # message | summary
    content: Mapped[str] = mapped_column(Text, default="")
    tool_name: Mapped[str | None] = mapped_column(String(64))
    tool_calls: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONB)
    tokens: Mapped[int] = mapped_column(Integer, default=0)
    archived: Mapped[bool] = mapped_column(default=False, server_default="false")
    # Carries (or was written from) content of a sensitive class: a tool result of a sensitive module, an answer
    # to a request that held sensitive content, a summary of such rows. Withheld from a remote model that the
    # person did not allow to see sensitive content.
    sensitive: Mapped[bool] = mapped_column(default=False, server_default="false")

    __table_args__ = (Index("ix_conversation_user_archived_id", "user_id", "archived", "id"),)


class Mission(Base):
    """A standing objective ("every Sunday evening, plan my week") with a cadence; each run is an iteration."""

    __tablename__ = "missions"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(String(200))
    objective: Mapped[str] = mapped_column(Text)
    cadence: Mapped[dict[str, Any]] = mapped_column(JSONB)  # {"kind": manual|interval|daily|weekly, ...}
    state: Mapped[str] = mapped_column(String(16), default="active")  # one of MISSION_STATES
    next_run_at: Mapped[datetime | None] = mapped_column()
    running_since: Mapped[datetime | None] = mapped_column()  # set while a runner holds it
    created_at: Mapped[datetime] = mapped_column()
    updated_at: Mapped[datetime] = mapped_column()

    __table_args__ = (Index("ix_missions_due", "state", "next_run_at"), Index("ix_missions_user", "user_id"))


class MissionIteration(Base):
    __tablename__ = "mission_iterations"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    mission_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("missions.id", ondelete="CASCADE"))
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    started_at: Mapped[datetime] = mapped_column()
    finished_at: Mapped[datetime | None] = mapped_column()
    status: Mapped[str] = mapped_column(String(16), default="running")  # one of ITERATION_STATUSES
    plan: Mapped[list[dict[str, Any]]] = mapped_column(JSONB, default=list)  # steps: summary, tool, proposal_id, status
    summary: Mapped[str | None] = mapped_column(Text)
    user_feedback: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (Index("ix_mission_iterations_mission_started", "mission_id", "started_at"),)


class ToolCallRecord(Base):
    """Every tool call an AI made (or tried): for the per-tool rate limit and the tool-usage audit. `known`
    is false for names the model invented."""

    __tablename__ = "tool_calls"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    at: Mapped[datetime] = mapped_column()
    tool_name: Mapped[str] = mapped_column(String(64))
    known: Mapped[bool] = mapped_column(default=True)
    decision: Mapped[str] = mapped_column(String(16))  # auto | propose | deny | rate_limited | invalid
    ok: Mapped[bool] = mapped_column(default=True)
    error_code: Mapped[str | None] = mapped_column(String(64))
    flags: Mapped[list[str]] = mapped_column(JSONB, default=list)

    __table_args__ = (Index("ix_tool_calls_user_tool_at", "user_id", "tool_name", "at"),)
