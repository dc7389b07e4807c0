"""The companion on the bot side: how a companion turn's outcome is said (the answer, then one message with
Approve / Reject per proposal it staged), /stop for the person's running turn, and /audit (tool usage of
the AI over the last 7 days; only for the identities in COMPANION_ADMINS)."""

from __future__ import annotations

from bot.access import is_owner
from bot.commands import Command
from bot.turn import Turn
from brain.companion.agent import TurnOutcome
from brain.i18n import N_, Text, ntr, tr

MAX_AUDIT_LINES = 30


def model_down_text() -> Text:
    return tr("I can't reach my language model right now; commands and buttons still work.")


def say_outcome(turn: Turn, outcome: TurnOutcome) -> None:
    """The answer of a companion turn, then its proposals, each with Approve / Reject."""
    if outcome.stopped:
        turn.say(tr("Stopped."))
    elif outcome.text.strip():
        turn.say_markdown(outcome.text.strip())
    elif not outcome.proposals:
        # The model said nothing: say what its calls did, so the person is not left guessing.
        done = [c.message for c in outcome.calls if c.message]
        if done:
            turn.say(*done)
        else:
            turn.say(tr("I have no answer to that."))
    for call in outcome.proposals:
        assert call.proposal_id is not None
        message: Text | str = call.result.message if call.result is not None and call.result.message else call.message
        turn.say(message, buttons=turn.proposal_buttons(call.proposal_id))


async def stop(turn: Turn, args: str) -> None:
    companion = turn.brain.companion
    control = companion.turns.get(turn.user.id) if companion is not None else None
    if control is None:
        turn.say(tr("Nothing is running right now."))
        return
    control.stop()  # the running turn answers "Stopped."


async def audit(turn: Turn, args: str) -> None:
    from brain.companion.audit import DEFAULT_DAYS, tool_usage

    companion = turn.brain.companion
    inbound = turn.inbound
    if companion is None or not (companion.is_admin(inbound.platform, inbound.platform_user_id)
                                 or await is_owner(turn.brain, inbound.platform, inbound.platform_user_id)):
        turn.say(tr("/audit is only for administrators."))
        return
    async with turn.brain.transactions.read() as session:
        report = await tool_usage(session, turn.brain.registry, turn.now)
    lines: list[Text | str] = [ntr("Tool use by the assistant in the last {days} days: {count} call.",
                                   "Tool use by the assistant in the last {days} days: {count} calls.",
                                   report.calls, days=DEFAULT_DAYS)]
    for usage in report.tools[:MAX_AUDIT_LINES]:
        lines.append(ntr("{name}: {count} call, {failures} failed, {proposed} proposed, {denied} refused",
                         "{name}: {count} calls, {failures} failed, {proposed} proposed, {denied} refused",
                         usage.calls, name=usage.name, failures=usage.failures, proposed=usage.proposed,
                         denied=usage.denied))
    if report.invented:
        lines.append(tr("Invented tool names: {names}", names=", ".join(
            f"{u.name} ({u.calls})" for u in report.invented[:MAX_AUDIT_LINES])))
    if report.unused:
        lines.append(tr("Never used: {names}", names=", ".join(report.unused)))
    turn.say(*lines)


COMMANDS = (
    Command("stop", "/stop", N_("Stop what the assistant is doing right now"), stop, aliases=("stopp",)),
    Command("audit", "/audit", N_("How the assistant used its tools (administrators)"), audit, admin=True),
)
