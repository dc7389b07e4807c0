"""Staging an AI call as a proposal: the call pinned (its coerced arguments and a hash of them, checked again when
it is approved), how it is described to the person, and the stored row. The executor stages; `brain.tools.proposals`
finds, decides and reads proposals."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from datetime import date, datetime, time, timedelta
from typing import Any

from brain.companion.models import Proposal
from brain.events.actor import AiActor
from brain.i18n import Text, tr
from brain.store.unit_of_work import UnitOfWork

DEFAULT_TTL = timedelta(minutes=30)
SHORT_ID_LENGTH = 8
MAX_ARG_SHOWN = 60  # characters of one argument value in a summary


def short_id(proposal_id: uuid.UUID) -> str:
    """What people type and see: the first 8 hex characters of the uuid."""
    return proposal_id.hex[:SHORT_ID_LENGTH]


def arguments_json(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Coerced arguments as JSON values: dates, times and datetimes in ISO form (which coercion reads back
    to the same values, so the stored call can be validated again on approval)."""
    return {str(k): _json_value(v) for k, v in arguments.items()}


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_value(v) for v in value]
    return value


def args_hash(tool_name: str, arguments: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of the tool name and its coerced arguments."""
    canonical = json.dumps({"tool": tool_name, "arguments": arguments_json(arguments)}, sort_keys=True,
                           separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def args_summary(arguments: Mapping[str, Any]) -> str:
    """'title: Buy milk, due_date: 2026-12-01', each value cut to a readable length."""
    parts = []
    for key, value in arguments_json(arguments).items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if len(shown) > MAX_ARG_SHOWN:
            shown = shown[:MAX_ARG_SHOWN - 1] + "…"
        parts.append(f"{key}: {shown}")
    return ", ".join(parts)


def describe(proposal: Proposal) -> Text:
    """'create_task (title: Buy milk)' as one translatable phrase."""
    if not proposal.arguments:
        return tr("{tool} without arguments", tool=proposal.tool_name)
    return tr("{tool} ({args})", tool=proposal.tool_name, args=args_summary(proposal.arguments))


def proposed_message(proposal: Proposal) -> Text:
    """The reply to an AI call that became a proposal (the bot adds Approve / Reject buttons)."""
    if proposal.rationale:
        message = tr("I'd like to use {call} because: {why}\nApprove or reject it (proposal {id}).",
                     call=describe(proposal), why=proposal.rationale[:300], id=short_id(proposal.id))
    else:
        message = tr("I'd like to use {call}.\nApprove or reject it (proposal {id}).",
                     call=describe(proposal), id=short_id(proposal.id))
    if "injection" in (proposal.flags or []):
        message = tr("Careful: some text in this call reads like an instruction to me rather than your own "
                     "words.\n{proposal}", proposal=message)
    return message


async def create_proposal(
    uow: UnitOfWork,
    user_id: uuid.UUID,
    tool_name: str,
    arguments: Mapping[str, Any],
    actor: AiActor,
    *,
    flags: Sequence[str] = (),
    ttl: timedelta = DEFAULT_TTL,
) -> Proposal:
    """Stage one call. `arguments` must already be validated and coerced (the executor does that first, so
    a call with bad arguments never becomes a proposal)."""
    stored = arguments_json(arguments)
    mission = _uuid_or_none(actor.mission_id)
    proposal = Proposal(
        id=uuid.uuid4(), user_id=user_id, created_at=uow.now, expires_at=uow.now + ttl, status="pending",
        tool_name=tool_name, arguments=stored, args_hash=args_hash(tool_name, arguments),
        actor=actor.model_dump(mode="json"), rationale=actor.rationale, flags=list(flags), mission_id=mission,
    )
    uow.session.add(proposal)
    await uow.session.flush()
    return proposal


def _uuid_or_none(value: str | None) -> uuid.UUID | None:
    try:
        return uuid.UUID(value) if value else None
    except ValueError:
        return None
