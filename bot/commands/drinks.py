"""/water, /drink and /coffee: log drinks with an optional amount."""

from __future__ import annotations

from bot.commands import Command
from bot.parsing.amounts import parse_count, parse_number, parse_volume_ml
from bot.parsing.freetext import DRINK_WORDS, MIN_BARE_ML
from bot.turn import PendingButton, Turn
from brain.i18n import N_, Text, ntr, tr
from brain.modules.drink.service import DEFAULT_PORTION_ML, DRINK_TYPES, MAX_AT_ONCE, drink_label
from brain.tools.spec import ToolResult

QUICK_WATER_ML = (250, 500)
CUP_DRINKS = frozenset({"coffee", "tea"})  # served in cups; the others in glasses


def after_drink_buttons(turn: Turn, logged: ToolResult) -> list[list[PendingButton]]:
    """The next glass of water, and Undo for exactly the drinks this reply logged (not whatever was logged last)."""
    undo_args = {"entry_ids": ",".join(logged.data.get("entry_ids") or [])} if logged.ok else {}
    return [[turn.tool_button(tr("+{ml} ml water", ml=ml), "log_drink", drink_type="water", quantity_ml=ml)
             for ml in QUICK_WATER_ML] + [turn.button(tr("Undo"), "tool", name="undo_last_drink", args=undo_args)]]


async def more_water(turn: Turn) -> None:
    """"I want to drink more water": the day's water against the goal, that the water reminders help on their own,
    and how to set a higher goal; with a glass to log now."""
    progress = await turn.tool("get_drink_progress", {})
    if not progress.ok:
        turn.say_result(progress)
        return
    turn.say(tr("Good plan! Water today: {water} of {goal} ml. I remind you through the day whenever you are behind "
                "your goal (/pulse shows when); \"my water goal is 2.5 l\" sets a higher one.",
                water=progress.data["water_ml"], goal=progress.data["water_goal_ml"]),
             buttons=[[turn.tool_button(tr("+{ml} ml water", ml=ml), "log_drink", drink_type="water", quantity_ml=ml)
                       for ml in QUICK_WATER_ML]])


# The drinks an amount said alone is offered as, in this order.
AMOUNT_ALONE_KINDS = ("water", "coffee", "tea", "juice")


async def amount_of_what(turn: Turn, ml: int) -> None:
    """ "250" alone: which drink it was, one button each (nothing is logged before the tap)."""
    turn.say(tr("{ml} ml of what?", ml=ml),
             buttons=[[turn.tool_button(turn.t(drink_label(kind)).capitalize(), "log_drink", drink_type=kind,
                                        quantity_ml=ml) for kind in AMOUNT_ALONE_KINDS]])


def _vessels(drink_type: str, count: int) -> Text:
    """'12 glasses' or '12 cups', as the drink is served."""
    if drink_type in CUP_DRINKS:
        return ntr("{count} cup", "{count} cups", count)
    return ntr("{count} glass", "{count} glasses", count)


async def _log(turn: Turn, drink_type: str, amount_text: str) -> None:
    """One rule for every drink: a bare number up to 10 counts glasses or cups (a decimal one too: "/coffee 2.5" is
    two and a half cups), from 50 it is ml, and in between the person says which (two buttons); with a unit it is
    that volume ("0.5 l")."""
    args: dict[str, object] = {"drink_type": drink_type}
    if amount_text:
        compact = amount_text.replace(" ", "")
        ml = parse_volume_ml(compact)
        bare = not any(c.isalpha() for c in compact)
        number = parse_number(compact) if bare else None
        if bare and compact.isdecimal() and 1 <= int(compact) <= MAX_AT_ONCE:
            # "/water 2" is two glasses, as free text reads "water 2", not 2 ml.
            if int(compact) > 1:
                args["count"] = int(compact)
            ml = None
        elif number is not None and not compact.isdecimal() and 0 < number <= MAX_AT_ONCE:
            # "/coffee 2.5", "/water 1,5": glasses or cups as a whole number is, in one entry.
            ml = round(number * DEFAULT_PORTION_ML.get(drink_type, DEFAULT_PORTION_ML["other"]))
        elif bare and compact.isdecimal() and MAX_AT_ONCE < int(compact) < MIN_BARE_ML:
            count = int(compact)
            portion = DEFAULT_PORTION_ML.get(drink_type, DEFAULT_PORTION_ML["other"])
            turn.say(tr("{vessels} or {ml} ml?", vessels=_vessels(drink_type, count), ml=count), buttons=[[
                turn.tool_button(_vessels(drink_type, count), "log_drink", drink_type=drink_type,
                                 quantity_ml=count * portion),
                turn.tool_button(tr("{ml} ml", ml=count), "log_drink", drink_type=drink_type, quantity_ml=count)]])
            return
        elif ml is None or (bare and 0 < ml < MIN_BARE_ML):  # "/water 12.5": 12.5 ml? Not guessed.
            turn.say(tr("I couldn't read the amount \"{text}\". Write it like 250, 250 ml or 0.5 l.",
                        text=amount_text[:40]))
            return
        if ml is not None:
            args["quantity_ml"] = ml
    result = await turn.tool("log_drink", args)
    turn.say_result(result, after_drink_buttons(turn, result))


async def water(turn: Turn, args: str) -> None:
    await _log(turn, "water", args)


async def drink(turn: Turn, args: str) -> None:
    kind, _, amount = args.partition(" ")
    # The kinds as the person reads them in their language ("Tee", "Limo"), besides the words free text knows.
    labels = {turn.render(drink_label(t)).casefold(): t for t in DRINK_TYPES if t != "other"}
    word = kind.casefold()
    drink_type = labels.get(word) or DRINK_WORDS.get(word, word) if kind else ""
    if drink_type not in DRINK_TYPES:
        turn.say(tr("Usage: /drink <kind> [amount], e.g. /drink tea 300. Kinds: {kinds}.",
                    kinds=", ".join(labels)))
        return
    await _log(turn, drink_type, amount.strip())


async def coffee(turn: Turn, args: str) -> None:
    count = parse_count(args) if args.strip().isalpha() else None  # "/coffee zwei"
    await _log(turn, "coffee", str(count) if count is not None else args.strip())


COMMANDS = (
    Command("water", "/water [250 ml]", N_("Log water"), water, aliases=("wasser",)),
    Command("drink", N_("/drink tea 300"), N_("Log any drink"), drink, aliases=("trinken",)),
    Command("coffee", "/coffee [2]", N_("Log coffee"), coffee, aliases=("kaffee",)),
)
