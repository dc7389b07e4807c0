"""Proposals: AI tool calls the person approves or rejects before they run. The executor stages one when the
policy gate says "propose" (`brain.tools.staging`); `approve` runs exactly that call once, under the AI actor that
proposed it; `reject` records an optional reason that `take_feedback` hands to the model's next turn once.

People refer to a proposal by its short id, the first 8 hex characters of its uuid, resolved only among
their own proposals. A foreign and an unknown id get the same answer.

Approve runs the call in the same transaction that locks the proposal row (`SELECT ... FOR UPDATE`) and
marks it approved, so a double click or two concurrent approvals execute it once: the second waits for the
lock and then finds it decided. When the approved call itself fails, the proposal stays approved (decided by
the person) with the failure stored as its result; it is never run a second time."""

from __future__ import annotations

import json
import logging
import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import String, bindparam, cast, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from brain.companion.models import Proposal
from brain.events.actor import AiActor, actor_from_json
from brain.i18n import Text, tr
from brain.people.models import User
from brain.store.unit_of_work import UnitOfWork
from brain.tools import policy
from brain.tools.spec import ToolResult
from brain.tools.staging import args_summary, describe, short_id

if TYPE_CHECKING:
    from brain.kernel import Kernel

log = logging.getLogger(__name__)

MIN_REF_LENGTH = 4
MAX_REASON_LENGTH = 500
_HEX = re.compile(r"^[0-9a-f]+$")


# ---- finding one ----------------------------------------------------------------------------------------
async def find_proposal(
    session: AsyncSession, user_id: uuid.UUID, ref: uuid.UUID | str, *, for_update: bool = False
) -> Proposal | None:
    """One of the person's proposals by uuid or by a prefix of its hex (at least 4 characters, usually the
    8 of `short_id`). None when it is unknown, foreign or ambiguous."""
    proposal_id = await _resolve(session, user_id, ref)
    if proposal_id is None:
        return None
    stmt = select(Proposal).where(Proposal.user_id == user_id, Proposal.id == proposal_id)
    if for_update:
        stmt = stmt.with_for_update().execution_options(populate_existing=True)
    return await session.scalar(stmt)


async def _resolve(session: AsyncSession, user_id: uuid.UUID, ref: uuid.UUID | str) -> uuid.UUID | None:
    if isinstance(ref, uuid.UUID):
        return ref
    cleaned = ref.strip().lower().lstrip("#").replace("-", "")
    if not MIN_REF_LENGTH <= len(cleaned) <= 32 or not _HEX.match(cleaned):
        return None
    if len(cleaned) == 32:
        return uuid.UUID(cleaned)
    # Only hex reaches the LIKE pattern, so it holds no wildcards.
    hex_id = func.replace(cast(Proposal.id, String), "-", "")
    found = (await session.scalars(
        select(Proposal.id).where(Proposal.user_id == user_id, hex_id.like(f"{cleaned}%")).limit(2)
    )).all()
    return found[0] if len(found) == 1 else None


# ---- deciding -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ProposalDecision:
    """The answer to approve / reject / add_reason. `ok` is true when this call decided (or annotated) the
    proposal; `status` is the proposal's status afterwards ('' when it was not found); `result` is the
    executed call's result after an approval."""

    ok: bool
    message: Text
    status: str = ""
    code: str | None = None
    proposal_id: uuid.UUID | None = None
    result: ToolResult | None = None


_NOT_FOUND = "not_found"


def _not_found() -> ProposalDecision:
    return ProposalDecision(False, tr("I can't find that proposal. /proposals lists the open ones."),
                            code=_NOT_FOUND)


def _already(proposal: Proposal) -> ProposalDecision:
    messages = {
        "approved": tr("That proposal was already approved."),
        "rejected": tr("That proposal was already rejected."),
        "expired": tr("That proposal has expired; nothing was done. The assistant can propose it again."),
    }
    return ProposalDecision(False, messages.get(proposal.status, tr("That proposal was already decided.")),
                            proposal.status, "expired" if proposal.status == "expired" else "already_decided",
                            proposal.id)


async def _withdrawn_by_settings(brain: Kernel, uow: UnitOfWork, proposal: Proposal,
                                 actor: AiActor) -> ProposalDecision | None:
    """A proposal made under settings the person has tightened since (deletions no longer allowed, or the tool
    set to "deny") is withdrawn instead of run: the approval button was sent under the old rules, and pressing
    it must not bypass the new ones. None when the call may still run."""
    tool = brain.tools.registry.get(proposal.tool_name)
    if tool is None:
        return None  # the executor reports an unknown tool itself
    settings = await policy.load_settings(uow.session, proposal.user_id)
    verdict = policy.decide(tool, actor, arguments=dict(proposal.arguments), settings=settings)
    if verdict.decision != "deny":
        return None
    proposal.status, proposal.decided_at, proposal.decided_by = "expired", uow.now, "policy"
    log.info("proposal %s withdrawn at approval: %s is now denied (%s)", proposal.id, tool.name, verdict.basis)
    return ProposalDecision(False, tr("Your settings no longer let the assistant use {name}, so I won't run this "
                                      "proposal; nothing was done. You can change that in /settings.",
                                      name=tool.name), "expired", "withdrawn", proposal.id)


def _expire_if_due(proposal: Proposal, now: datetime) -> bool:
    if proposal.status == "pending" and proposal.expires_at <= now:
        proposal.status, proposal.decided_at, proposal.decided_by = "expired", now, "auto-expire"
        return True
    return False


async def approve(brain: Kernel, user_id: uuid.UUID, proposal_id: uuid.UUID | str) -> ProposalDecision:
    """Run the proposed call once, under its AI actor, and mark the proposal approved, all in one
    transaction that holds the proposal's row lock. Not the gate again (the person is deciding), but the
    executor's validation and handler, with the coerced arguments checked against the stored hash."""
    async with brain.transactions.begin() as uow:
        proposal = await find_proposal(uow.session, user_id, proposal_id, for_update=True)
        if proposal is None:
            return _not_found()
        if _expire_if_due(proposal, uow.now) or proposal.status != "pending":
            return _already(proposal)
        user = await uow.session.get(User, user_id)
        if user is None:
            return _not_found()
        actor = actor_from_json(proposal.actor)
        if not isinstance(actor, AiActor):  # only AI calls are ever staged; anything else is not ours to run
            log.error("proposal %s carries a non-AI actor %r", proposal.id, proposal.actor)
            return _not_found()
        pid = proposal.id
        refused = await _withdrawn_by_settings(brain, uow, proposal, actor)
        if refused is not None:
            return refused
        result = await brain.tools.execute_approved(uow, user, proposal.tool_name, dict(proposal.arguments), actor,
                                                    args_hash=proposal.args_hash)
        if result.error_code == "hash_mismatch":
            # Never run, never decided: somebody changed the stored call. The person can reject it.
            return ProposalDecision(False, result.message or tr("That proposal cannot be run."), "pending",
                                    "hash_mismatch", pid, result)
        # Rows of the locked proposal may have been expired by a rolled-back savepoint: re-read before writing.
        await uow.session.refresh(proposal)
        proposal.status, proposal.decided_at, proposal.decided_by = "approved", uow.now, "user"
        proposal.result = _result_json(result)
    if result.ok:
        return ProposalDecision(True, tr("Approved. {result}", result=result.message or tr("Done.")),
                                "approved", None, pid, result)
    return ProposalDecision(True, tr("Approved, but it did not work: {result}",
                                     result=result.message or tr("Something went wrong.")),
                            "approved", result.error_code, pid, result)


async def reject(
    brain: Kernel, user_id: uuid.UUID, proposal_id: uuid.UUID | str, reason: str | None = None
) -> ProposalDecision:
    """Reject a pending proposal, with an optional reason for the assistant. On a proposal already
    rejected without a reason, a given reason is added instead (see `add_reason`)."""
    reason = _clean_reason(reason)
    async with brain.transactions.begin() as uow:
        proposal = await find_proposal(uow.session, user_id, proposal_id, for_update=True)
        if proposal is None:
            return _not_found()
        if proposal.status == "rejected" and reason and not proposal.reason:
            return _note_reason(proposal, reason)
        if _expire_if_due(proposal, uow.now) or proposal.status != "pending":
            return _already(proposal)
        proposal.status, proposal.decided_at, proposal.decided_by = "rejected", uow.now, "user"
        proposal.reason, proposal.reason_delivered = reason, False
        call = describe(proposal)
        pid = proposal.id
    if reason:
        return ProposalDecision(True, tr("Rejected: {call}. I'll tell the assistant why: {reason}", call=call,
                                         reason=reason), "rejected", None, pid)
    return ProposalDecision(True, tr("Rejected: {call}. Nothing was done.", call=call), "rejected", None, pid)


async def add_reason(brain: Kernel, user_id: uuid.UUID, proposal_id: uuid.UUID | str, reason: str) -> ProposalDecision:
    """Give the reason for a proposal rejected without one; it reaches the assistant's next turn."""
    cleaned = _clean_reason(reason)
    async with brain.transactions.begin() as uow:
        proposal = await find_proposal(uow.session, user_id, proposal_id, for_update=True)
        if proposal is None:
            return _not_found()
        if not cleaned:
            return ProposalDecision(False, tr("Please add the reason after the id, e.g. /reject {id} not today.",
                                              id=short_id(proposal.id)), proposal.status, "empty", proposal.id)
        if proposal.status != "rejected":
            return ProposalDecision(False, tr("Only a rejected proposal can get a reason."), proposal.status,
                                    "not_rejected", proposal.id)
        if proposal.reason:
            return ProposalDecision(False, tr("That proposal already has a reason: {reason}", reason=proposal.reason),
                                    proposal.status, "has_reason", proposal.id)
        return _note_reason(proposal, cleaned)


def _note_reason(proposal: Proposal, reason: str) -> ProposalDecision:
    proposal.reason, proposal.reason_delivered = reason, False
    return ProposalDecision(True, tr("Noted why you rejected it: {reason}", reason=reason), "rejected", None,
                            proposal.id)


def _clean_reason(reason: str | None) -> str | None:
    cleaned = " ".join((reason or "").split())[:MAX_REASON_LENGTH]
    return cleaned or None


def _result_json(result: ToolResult) -> dict[str, Any]:
    data = json.loads(json.dumps(result.data, default=str))
    return {"ok": result.ok, "error_code": result.error_code,
            "message": result.message.to_json() if isinstance(result.message, Text) else result.message,
            "data": data}


# ---- housekeeping and reading ---------------------------------------------------------------------------
async def expire_proposals(session: AsyncSession, now: datetime) -> int:
    """Mark every pending proposal past its expiry as expired (all people; a scheduler job). The caller
    commits. Returns how many."""
    result = await session.execute(
        update(Proposal).where(Proposal.status == "pending", Proposal.expires_at <= now)
        .values(status="expired", decided_at=now, decided_by="auto-expire")
    )
    return int(getattr(result, "rowcount", 0) or 0)


async def pending(session: AsyncSession, user_id: uuid.UUID, now: datetime | None = None) -> list[Proposal]:
    """The person's pending proposals, oldest first; with `now`, those already past their expiry are left
    out (they are expired, even if the job has not marked them yet)."""
    if now is None:
        return list((await session.scalars(_PENDING, {"user_id": user_id})).all())
    return list((await session.scalars(_PENDING_AT, {"user_id": user_id, "now": now})).all())


# Built once (a turn reads them every time): only the values are bound per call.
_PENDING = (select(Proposal).where(Proposal.user_id == bindparam("user_id"), Proposal.status == "pending")
            .order_by(Proposal.created_at, Proposal.id))
_PENDING_AT = _PENDING.where(Proposal.expires_at > bindparam("now"))


async def recent_proposals(session: AsyncSession, user_id: uuid.UUID, limit: int) -> list[Proposal]:
    """The person's proposals of any status, newest first (for /activity)."""
    stmt = (select(Proposal).where(Proposal.user_id == user_id)
            .order_by(Proposal.created_at.desc(), Proposal.id.desc()).limit(max(1, limit)))
    return list((await session.scalars(stmt)).all())


_FEEDBACK = (select(Proposal).where(Proposal.user_id == bindparam("user_id"), Proposal.status == "rejected",
                                   Proposal.reason_delivered.is_(False))
             .order_by(Proposal.decided_at, Proposal.id).limit(bindparam("limit"))
             .with_for_update(skip_locked=True))


@dataclass(frozen=True)
class Feedback:
    """A rejection the assistant has not heard about yet."""

    proposal_id: uuid.UUID
    tool_name: str
    arguments: str  # args_summary
    reason: str | None
    rejected_at: datetime | None


async def take_feedback(session: AsyncSession, user_id: uuid.UUID, limit: int = 20) -> list[Feedback]:
    """The person's rejections not yet fed back to the model (with or without a reason), oldest first, and
    marks them delivered: each is returned once. A reason added later makes it due again. The caller
    commits; if the turn's transaction rolls back, they are delivered next time."""
    rows = (await session.scalars(_FEEDBACK, {"user_id": user_id, "limit": limit})).all()
    for row in rows:
        row.reason_delivered = True
    await session.flush()
    return [Feedback(row.id, row.tool_name, args_summary(row.arguments), row.reason, row.decided_at) for row in rows]

