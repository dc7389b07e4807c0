"""Deciding what the assistant proposed: Approve / Reject buttons under every proposal, /approve <id>,
/reject <id> [reason] (also gives the reason for one already rejected), and /proposals (the open ones)."""

from __future__ import annotations

from typing import Any

from bot.commands import Command
from bot.turn import APPROVE, REJECT, Turn
from brain.i18n import N_, Text, ntr, tr
from brain.tools.proposals import ProposalDecision, approve, pending, reject
from brain.tools.staging import describe, short_id

LIST_LIMIT = 10


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
    _say_decision(turn, await approve(turn.brain, turn.user.id, ref))


async def reject_command(turn: Turn, args: str) -> None:
    ref, _, reason = args.strip().partition(" ")
    if not ref:
        turn.say(tr("Usage: /reject <id> [reason], e.g. /reject 3f9a1c2e not this week."))
        return
    decision = await reject(turn.brain, turn.user.id, ref, reason.strip() or None)
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
        lines: list[Text | str] = [tr("{id}: {call}", id=short_id(proposal.id), call=describe(proposal))]
        if proposal.rationale:
            lines.append(tr("Why: {why}", why=proposal.rationale[:300]))
        if "injection" in (proposal.flags or []):
            lines.append(tr("Careful: some text in this call reads like an instruction to me rather than your own "
                            "words."))
        lines.append(tr("Expires at {time}.", time=turn.render.time_of(proposal.expires_at)))
        turn.say(*lines, buttons=turn.proposal_buttons(proposal.id))


# ---- buttons -------------------------------------------------------------------------------------------
async def approve_pressed(turn: Turn, payload: dict[str, Any]) -> None:
    _say_decision(turn, await approve(turn.brain, turn.user.id, str(payload.get("proposal_id", ""))))


async def reject_pressed(turn: Turn, payload: dict[str, Any]) -> None:
    _say_decision(turn, await reject(turn.brain, turn.user.id, str(payload.get("proposal_id", ""))))


COMMANDS = (
    Command("approve", "/approve 3f9a1c2e", N_("Approve what the assistant proposed"), approve_command,
            aliases=("genehmigen",)),
    Command("reject", N_("/reject 3f9a1c2e not this week"), N_("Reject a proposal, optionally with a reason"),
            reject_command, aliases=("ablehnen",)),
    Command("proposals", "/proposals", N_("What the assistant proposed and waits for you"), proposals_command,
            aliases=("vorschläge", "vorschlaege")),
)
ACTIONS = {APPROVE: approve_pressed, REJECT: reject_pressed}
