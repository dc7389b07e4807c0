"""Three people (Berlin in English, New York in German, Tokyo in English) use every feature through the dialog:
tasks, calendar, drinks, meals, places, goals, streaks, /remember, an AI proposal, a ritual, /activity, /undo,
/export and /week. Each person has a distinctive marker in everything they write. Afterwards each one's
/today, /recall, /activity, /proposals, export file and the data behind their /week chart hold their own
marker and nothing of the other two."""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import select

import bot.commands.week as week_command
from bot.dialog import Dialog
from brain.core import Brain
from brain.events.actor import ai
from brain.memory.api import Memory
from brain.people.models import Identity
from brain.projections.week import WeekSeries
from tests.e2e.conftest import Person


@dataclass
class Someone:
    chat: Person
    marker: str
    zone: str
    water_ml: int
    kcal: int
    user_id: uuid.UUID | None = None


PEOPLE = (  # handle, language, zone, marker, water, kcal
    ("iso-alice", "en", "Europe/Berlin", "AlbatrossQx", 310, 610),
    ("iso-bruno", "de", "America/New_York", "BisonZv", 470, 770),
    ("iso-chiyo", "en", "Asia/Tokyo", "CormorantWk", 730, 930),
)


async def use_everything(brain: Brain, who: Someone) -> None:
    m, chat = who.marker, who.chat
    for line in (
        "/start", f"/tz {who.zone}", f"/task {m} report today", f"/task {m} finished chore", f"/done {m} finished",
        f"/event {m} dinner today 23:00", f"/water {who.water_ml}", "/coffee", f"/meal lunch {m} soup {who.kcal} kcal",
        f"/place {m} Cafe", "/goal 8 glasses of water a day", "/streaks", f"/remember {m} keeps a heron named {m}",
        "/ritual morning", f"/task {m} taken back", "/undo", "/tasks",
    ):
        await chat.send(line)
    async with brain.transactions.read() as session:
        who.user_id = await session.scalar(select(Identity.user_id).where(Identity.platform_id == chat.handle))
    assert who.user_id is not None
    # What the companion does with a write it may not make on its own: a proposal, waiting for the person.
    proposed = await brain.tools.execute(who.user_id, "create_task", {"title": f"{m} proposed plan"},
                                         ai(f"{m} asked for a plan"))
    assert proposed.ok and proposed.data["status"] == "proposed"


def foreign(text: str, who: Someone, everyone: list[Someone]) -> list[str]:
    """The other people's markers and ids that appear in `text`."""
    found = []
    for other in everyone:
        if other is who:
            continue
        found += [s for s in (other.marker, str(other.user_id), other.chat.handle) if s in text]
    return found


@pytest.mark.slow
async def test_no_person_sees_anything_of_another(brain: Brain, dialog: Dialog, memory: Memory,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    everyone = [Someone(Person(dialog, handle, language), marker, zone, water, kcal)
                for handle, language, zone, marker, water, kcal in PEOPLE]
    for who in everyone:
        await use_everything(brain, who)
    await dialog.settle()

    charted: list[WeekSeries] = []
    draw = week_command.render_week_chart

    def spy(series: WeekSeries, render: Any) -> bytes:
        charted.append(series)
        return draw(series, render)

    monkeypatch.setattr(week_command, "render_week_chart", spy)

    for who in everyone:
        chat = who.chat
        today = await chat.send("/today")
        assert who.marker in today and not foreign(today, who, everyone), today

        recalled = await chat.send(f"/recall heron named {who.marker}")
        assert who.marker in recalled and not foreign(recalled, who, everyone), recalled
        for other in everyone:  # asking about another person's words finds nothing of theirs
            if other is not who:
                assert not foreign(await chat.send(f"/recall {other.marker} heron"), who, everyone)

        activity = await chat.send("/activity")
        assert f"{who.marker} proposed plan" in activity and not foreign(activity, who, everyone), activity
        pending = await chat.send("/proposals")
        assert f"{who.marker} proposed plan" in pending and not foreign(pending, who, everyone), pending

        await chat.send("/export")
        (document,) = [m.document for m in chat.last if m.document is not None]
        exported = json.loads(document or b"")
        raw = json.dumps(exported, ensure_ascii=False)
        assert exported["user"]["id"] == str(who.user_id) and who.marker in raw
        assert not foreign(raw, who, everyone)
        assert {r["user_id"] for rows in exported["tables"].values() for r in rows} == {str(who.user_id)}
        assert sum(r["quantity_ml"] for r in exported["tables"]["drink_entries"] if r["drink_type"] == "water") \
            == who.water_ml

        before = len(charted)
        await chat.send("/week")
        assert any(m.image_png for m in chat.last)
        (series,) = charted[before:]
        assert sum(series.water_ml) == who.water_ml and sum(series.kcal) == who.kcal
        assert sum(series.tasks_done) == 1

    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [r.getMessage() for r in caplog.records]
