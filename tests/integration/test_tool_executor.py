"""The tool executor end to end: lookup, coercion, AI policy and the handler's unit of work. Every
refusal is a structured ToolResult with a code and leaves the database exactly as it was."""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from brain.clock import FixedClock
from brain.core import Brain
from brain.events.actor import USER, ai
from brain.events.catalog import DrinkLogged
from brain.events.store import EventRecord, query_events
from brain.i18n import DOMAIN, LOCALES_DIR, Renderer, Text
from brain.modules.drink import service
from brain.modules.drink.models import DrinkEntry
from brain.modules.drink.tools import TOOLS as DRINK_TOOLS
from brain.people.models import User
from brain.people.service import resolve_identity
from brain.store.database import Database
from brain.tools.registry import ToolRegistry
from brain.tools.spec import ToolContext, ToolParam, ToolResult, ToolSpec
from rules.wiring import build_brain


async def snapshot(brain: Brain) -> tuple[int, int]:
    """(drink entries, events) in the whole database."""
    async with brain.transactions.read() as s:
        entries = await s.scalar(select(func.count()).select_from(DrinkEntry))
        events = await s.scalar(select(func.count()).select_from(EventRecord))
    return int(entries or 0), int(events or 0)


async def new_user(brain: Brain) -> User:
    async with brain.transactions.begin() as uow:
        return await resolve_identity(uow.session, "test", f"u-{uuid.uuid4()}", default_locale="en",
                                      default_timezone="Europe/Berlin")


# ---- refusals before any write -----------------------------------------------------------------
async def test_unknown_tool_is_refused(brain: Brain, user: User) -> None:
    before = await snapshot(brain)
    result = await brain.tools.execute(user.id, "brew_coffee", {}, USER)
    assert not result.ok and result.error_code == "unknown_tool"
    assert isinstance(result.message, Text)
    assert await snapshot(brain) == before


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"drink_type": "water", "quantity_ml": -5}, "out_of_range"),
        ({"drink_type": "water", "quantity_ml": 0}, "out_of_range"),
        ({"drink_type": "water", "quantity_ml": 100000}, "out_of_range"),
        ({"drink_type": "water", "quantity_ml": "a glass"}, "bad_type"),
        ({"drink_type": "water", "quantity_ml": 2.5}, "bad_type"),
        ({"drink_type": "water", "quantity_ml": True}, "bad_type"),
        ({"drink_type": "beer"}, "bad_enum"),
        ({"drink_type": 7}, "bad_enum"),
        ({"quantity_ml": 250}, "missing_parameter"),
        ({}, "missing_parameter"),
        ({"drink_type": "water", "mood": "thirsty"}, "unknown_parameter"),
        ({"drink_type": "water", "name": "x" * 101}, "too_long"),
        ({"drink_type": "water", "name": "tea\x00"}, "bad_text"),
        (["water", 250], "bad_arguments"),
        ("water 250", "bad_arguments"),
    ],
    ids=lambda v: repr(v)[:40],
)
async def test_invalid_log_drink_arguments_are_refused_and_nothing_is_written(
    brain: Brain, user: User, arguments: object, code: str
) -> None:
    seen: list[object] = []
    brain.bus.subscribe_all(seen.append)
    before = await snapshot(brain)
    result = await brain.tools.execute(user.id, "log_drink", arguments, USER)
    assert not result.ok
    assert result.error_code == code
    assert isinstance(result.message, Text) and result.message.msgid
    assert await snapshot(brain) == before
    assert seen == []


async def test_unknown_person_is_refused(brain: Brain) -> None:
    before = await snapshot(brain)
    result = await brain.tools.execute(uuid.uuid4(), "log_drink", {"drink_type": "water"}, USER)
    assert not result.ok and result.error_code == "unknown_user"
    assert await snapshot(brain) == before


async def test_handler_failure_result_rolls_back_and_is_returned(brain: Brain, user: User) -> None:
    before = await snapshot(brain)
    result = await brain.tools.execute(user.id, "delete_drink", {"entry_id": "not-a-uuid"}, USER)
    assert not result.ok and result.error_code == "not_found"
    result = await brain.tools.execute(user.id, "delete_drink", {"entry_id": str(uuid.uuid4())}, USER)
    assert not result.ok and result.error_code == "not_found"
    assert await snapshot(brain) == before


# ---- successful calls --------------------------------------------------------------------------
async def test_string_amount_is_coerced_and_the_drink_is_logged(brain: Brain, user: User) -> None:
    seen: list[object] = []
    brain.bus.subscribe(DrinkLogged, seen.append)
    result = await brain.tools.execute(user.id, "log_drink", {"drink_type": "Water", "quantity_ml": "250"}, USER)
    assert result.ok, result
    assert result.error_code is None
    assert result.data["water_ml"] == 250 and result.data["total_count"] == 1
    async with brain.transactions.read() as s:
        entry = await s.get(DrinkEntry, uuid.UUID(result.data["entry_id"]))
        events = await query_events(s, user.id)
    assert entry is not None and entry.quantity_ml == 250 and entry.drink_type == "water"
    assert [e.type for e in events] == ["DrinkLogged"]
    assert events[0].meta.actor.kind == "user"
    assert len(seen) == 1


async def test_missing_amount_uses_the_default_portion(brain: Brain, user: User) -> None:
    result = await brain.tools.execute(user.id, "log_drink", {"drink_type": "coffee"}, USER)
    assert result.ok
    assert result.data["coffee_ml"] == service.DEFAULT_PORTION_ML["coffee"]


async def test_ai_actor_may_log_a_drink_on_its_own(brain: Brain, user: User) -> None:
    actor = ai("the person said they had a glass of water", mission_id="m-1")
    result = await brain.tools.execute(user.id, "log_drink", {"drink_type": "water", "quantity_ml": 300}, actor)
    assert result.ok
    async with brain.transactions.read() as s:
        (logged,) = await query_events(s, user.id)
    assert logged.meta.actor == actor


async def test_ai_actor_may_read_progress(brain: Brain, user: User) -> None:
    result = await brain.tools.execute(user.id, "get_drink_progress", {}, ai())
    assert result.ok and result.data["water_ml"] == 0


async def test_ai_actor_is_denied_delete_drink_and_the_entry_stays(brain: Brain, user: User) -> None:
    logged = await brain.tools.execute(user.id, "log_drink", {"drink_type": "water"}, USER)
    before = await snapshot(brain)
    result = await brain.tools.execute(user.id, "delete_drink", {"entry_id": logged.data["entry_id"]}, ai("oops"))
    assert not result.ok and result.error_code == "policy_denied"
    assert await snapshot(brain) == before
    # The same call by the person goes through.
    deleted = await brain.tools.execute(user.id, "delete_drink", {"entry_id": logged.data["entry_id"]}, USER)
    assert deleted.ok
    assert await snapshot(brain) == (before[0] - 1, before[1] + 1)


async def test_policy_is_checked_before_arguments(brain: Brain, user: User) -> None:
    result = await brain.tools.execute(user.id, "delete_drink", {"bogus": 1}, ai())
    assert result.error_code == "policy_denied"


# ---- unexpected handler errors -----------------------------------------------------------------
async def _write_then_crash(ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
    await service.log_drink(ctx.uow, ctx.user, ctx.actor, "water", args["ml"])
    await ctx.uow.session.flush()  # the rows really reached the database before the crash
    raise RuntimeError("handler bug")


CRASHING = ToolSpec("crash_after_write", "drink", "Writes a drink, then fails.",
                    (ToolParam("ml", "integer", "Amount.", required=True, minimum=1, maximum=5000),),
                    "write", _write_then_crash)


@pytest.fixture
async def crashing_brain(database_url: str, clock: FixedClock) -> AsyncIterator[Brain]:
    registry = ToolRegistry([*DRINK_TOOLS, CRASHING])
    b = build_brain(Database(database_url, pool_size=2), clock=clock, registry=registry)
    try:
        yield b
    finally:
        await b.close()


async def test_unexpected_handler_error_returns_internal_error_and_leaves_nothing_behind(
    crashing_brain: Brain, caplog: pytest.LogCaptureFixture
) -> None:
    person = await new_user(crashing_brain)
    seen: list[object] = []
    crashing_brain.bus.subscribe_all(seen.append)
    before = await snapshot(crashing_brain)
    with caplog.at_level(logging.ERROR, logger="brain.tools.executor"):
        result = await crashing_brain.tools.execute(person.id, "crash_after_write", {"ml": "250"}, USER)
    assert not result.ok and result.error_code == "internal_error"
    assert isinstance(result.message, Text)
    assert "handler bug" not in result.message.msgid  # internals are logged, not shown
    assert await snapshot(crashing_brain) == before
    assert seen == []
    assert any(r.exc_info and isinstance(r.exc_info[1], RuntimeError) for r in caplog.records)
    # The executor is still usable afterwards.
    ok = await crashing_brain.tools.execute(person.id, "log_drink", {"drink_type": "water"}, USER)
    assert ok.ok


# ---- rendering of refusals ---------------------------------------------------------------------
def _catalogue(locale: str) -> Path:
    return LOCALES_DIR / locale / "LC_MESSAGES" / f"{DOMAIN}.mo"


@pytest.mark.parametrize("locale", ["en", "de"])
async def test_refusal_message_renders_in_each_language(brain: Brain, user: User, locale: str) -> None:
    if not _catalogue(locale).exists():
        pytest.skip(f"{_catalogue(locale)} is not compiled (run `make locales`)")
    render = Renderer(locale, "Europe/Berlin")
    for name, arguments in [("log_drink", {"drink_type": "water", "quantity_ml": 100000}),
                            ("log_drink", {"drink_type": "beer"}), ("no_such_tool", {}),
                            ("delete_drink", {"entry_id": "x"})]:
        result = await brain.tools.execute(user.id, name, arguments, USER if name != "delete_drink" else ai())
        assert result.message is not None
        text = render(result.message)
        assert isinstance(text, str) and text.strip()


def _source(text: Text) -> str:
    """The English source string with its (possibly nested) parameters filled, without catalogues."""
    return text.msgid.format(**{k: _source(v) if isinstance(v, Text) else v for k, v in text.params.items()})


async def test_refusal_message_source_text_fills_its_placeholders(brain: Brain, user: User) -> None:
    """Independent of compiled catalogues: the English source string takes all its parameters."""
    result = await brain.tools.execute(user.id, "log_drink", {"drink_type": "water", "quantity_ml": 100000}, USER)
    assert result.message is not None
    text = _source(result.message)
    assert "5000" in text and "{" not in text
