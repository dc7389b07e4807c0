"""Deciding what the assistant proposed: Approve / Reject buttons under every proposal, /approve <id>,
/reject <id> [reason] (also gives the reason for one already rejected), and /proposals (the open ones)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, select, update

from bot.commands import Command
from bot.delivery.keyboards import take_off_keyboards
from bot.turn import APPROVE, NO_REASON, REJECT, Turn
from brain.actions.models import ActionToken
from brain.actions.service import redeem_action
from brain.companion.models import Proposal
from brain.core import Brain
from brain.errors import DomainError
from brain.i18n import N_, Renderer, Text, ntr, tr
from brain.people.models import User
from brain.tools.proposal_wording import action_text
from brain.tools.proposals import ProposalDecision, add_reason, approve, expire_proposals, pending, reject
from brain.tools.staging import short_id

LIST_LIMIT = 10
REASON_WAIT = timedelta(minutes=30)  # how long after "Why? (optional)" the next message is read as the reason
EXPIRED = tr("That proposal has expired; nothing was done. The assistant can propose it again.")


def proposal_question(proposal_id: object) -> ColumnElement[bool]:
    """The Approve and Reject buttons of one proposal (a condition on `ActionToken`, for `take_off_keyboards`)."""
    return ActionToken.kind.in_((APPROVE, REJECT)) & (ActionToken.payload["proposal_id"].astext == str(proposal_id))


async def _take_off_buttons(turn: Turn, decision: ProposalDecision) -> None:
    """A proposal decided by command: the Approve / Reject buttons of the message that asked go, and the button of
    the decision counts as used, as if pressed (a Matrix message with these choices is closed saying what was
    chosen; a later press of either is "already used")."""
    if decision.ok and decision.proposal_id is not None and decision.status in ("approved", "rejected"):
        chosen = APPROVE if decision.status == "approved" else REJECT
        async with turn.brain.transactions.begin() as uow:
            await uow.session.execute(
                update(ActionToken)
                .where(ActionToken.user_id == turn.user.id, ActionToken.kind == chosen, ActionToken.used_at.is_(None),
                       proposal_question(decision.proposal_id))
                .values(used_at=uow.now))
            await take_off_keyboards(await uow.session.connection(), turn.user.id,
                                     proposal_question(decision.proposal_id))


async def expire_with_keyboards(brain: Brain) -> int:
    """Marks overdue proposals expired (`expire_proposals`), and edits each one's question to say so, in its
    person's language: its buttons go. Returns how many expired."""
    async with brain.transactions.begin() as uow:
        due = (await uow.session.execute(
            select(Proposal.id, Proposal.user_id, User.locale, User.timezone)
            .join(User, User.id == Proposal.user_id)
            .where(Proposal.status == "pending", Proposal.expires_at <= uow.now))).all()
        expired = await expire_proposals(uow.session, uow.now)
        connection = await uow.session.connection()
        for proposal_id, user_id, locale, zone in due:
            await take_off_keyboards(connection, user_id, proposal_question(proposal_id),
                                     note=Renderer(locale, zone)(EXPIRED))
    return expired


def _say_decision(turn: Turn, decision: ProposalDecision) -> None:
    if decision.ok and decision.status == "rejected" and decision.proposal_id is not None:
        turn.say(decision.message, tr("You can tell the assistant why with /reject {id} <reason>.",
                                      id=short_id(decision.proposal_id)))
        return
    turn.say(decision.message)


# ---- commands ------------------------------------------------------------------------------------------
async def approve_command(turn: Turn, args: str) -> None:
    ref = args.split()[0] if args.split() else ""
    if not ref:
        turn.say(tr("Usage: /approve <id>, e.g. /approve 3f9a1c2e. /proposals lists the open ones."))
        return
    decision = await approve(turn.brain, turn.user.id, ref)
    await _take_off_buttons(turn, decision)
    _say_decision(turn, decision)


async def reject_command(turn: Turn, args: str) -> None:
    ref, _, reason = args.strip().partition(" ")
    if not ref:
        turn.say(tr("Usage: /reject <id> [reason], e.g. /reject 3f9a1c2e not this week."))
        return
    decision = await reject(turn.brain, turn.user.id, ref, reason.strip() or None)
    await _take_off_buttons(turn, decision)
    if decision.ok and reason.strip():
        turn.say(decision.message)
    else:
        _say_decision(turn, decision)


async def proposals_command(turn: Turn, args: str) -> None:
    async with turn.brain.transactions.read() as session:
        waiting = await pending(session, turn.user.id, turn.now)
    if not waiting:
        turn.say(tr("Nothing is waiting for your approval."))
        return
    turn.say(ntr("One proposal is waiting for you:", "{count} proposals are waiting for you:", len(waiting)))
    for proposal in waiting[:LIST_LIMIT]:
        lines: list[Text | str] = [tr("{action}?", action=action_text(proposal.tool_name, proposal.arguments or {},
                                                                 year=proposal.created_at.year))]
        if proposal.rationale and not (proposal.actor or {}).get("quotes_person"):
            lines.append(tr("Why: {why}", why=proposal.rationale[:300]))
        if "injection" in (proposal.flags or []):
            lines.append(tr("Careful: some text in this call reads like an instruction to me rather than your own "
                            "words."))
        lines.append(tr("Expires at {time} (proposal {id}).", time=turn.render.time_of(proposal.expires_at),
                        id=short_id(proposal.id)))
        turn.say(*lines, buttons=turn.proposal_buttons(proposal.id))


# ---- buttons -------------------------------------------------------------------------------------------
async def approve_pressed(turn: Turn, payload: dict[str, Any]) -> None:
    _say_decision(turn, await approve(turn.brain, turn.user.id, str(payload.get("proposal_id", ""))))


async def reject_pressed(turn: Turn, payload: dict[str, Any]) -> None:
    """Rejected at once; then "Why? (optional)": the next message is the reason, or "No reason" ends the wait."""
    decision = await reject(turn.brain, turn.user.id, str(payload.get("proposal_id", "")))
    if not (decision.ok and decision.status == "rejected" and decision.proposal_id is not None):
        _say_decision(turn, decision)
        return
    turn.say(decision.message, buttons=[[turn.button(tr("No reason"), NO_REASON,
                                                     proposal_id=str(decision.proposal_id),
                                                     asked_at=turn.now.isoformat())]])
    turn.ask(tr("Why? (optional)"))


def waits_for_reason(payload: dict[str, Any], now: datetime) -> bool:
    """Whether the "Why?" of a rejection (its "No reason" button's payload) still takes the next message."""
    try:
        asked = datetime.fromisoformat(str(payload.get("asked_at", "")))
    except ValueError:
        return False
    return timedelta(0) <= now - asked <= REASON_WAIT


async def take_reason(turn: Turn, token: str, text: str) -> bool:
    """The person's message after "Why? (optional)" as the reason of that rejection; True when taken."""
    try:
        async with turn.brain.transactions.begin() as uow:
            action = await redeem_action(uow.session, turn.user.id, token, now=uow.now)
    except DomainError:
        return False  # pressed "No reason" a moment ago, or expired: the message goes its usual way
    decision = await add_reason(turn.brain, turn.user.id, str(action.payload.get("proposal_id", "")), text)
    async with turn.brain.transactions.begin() as uow:  # the "No reason" button of the question just answered
        await take_off_keyboards(await uow.session.connection(), turn.user.id, ActionToken.token == token)
    turn.say(decision.message)
    return True


async def no_reason_pressed(turn: Turn, payload: dict[str, Any]) -> None:
    turn.say(tr("Okay, no reason."))


COMMANDS = (
    Command("approve", "/approve 3f9a1c2e", N_("Approve what the assistant proposed"), approve_command,
            aliases=("genehmigen",)),
    Command("reject", N_("/reject 3f9a1c2e not this week"), N_("Reject a proposal, optionally with a reason"),
            reject_command, aliases=("ablehnen",)),
    Command("proposals", "/proposals", N_("What the assistant proposed and waits for you"), proposals_command,
            aliases=("vorschläge", "vorschlaege")),
)
ACTIONS = {APPROVE: approve_pressed, REJECT: reject_pressed, NO_REASON: no_reason_pressed}
