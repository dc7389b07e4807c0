"""/export and /delete_me: the export holds every personal table (or says why not) and only the person's rows,
one export a minute; /delete_me asks first, a foreign or second press does nothing, and once confirmed and the
goodbye is settled no row of any table refers to the person, while another person's data stays as it was.
Through the fake Telegram the goodbye arrives as a real message and the export as a document."""

from __future__ import annotations

import asyncio
import io
import json
import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from nio import RoomSendResponse, UploadResponse
from sqlalchemy import Column, ForeignKey, MetaData, Table, func, select, text, update

from adapters.console.chat import ConsoleChat, ConsoleConfig
from adapters.matrix.outbound import MatrixDelivery as Delivery
from adapters.telegram.adapter import TelegramAdapter
from app.tables import target_metadata
from bot.dialog import Dialog
from bot.inbound import Inbound
from bot.rooms import register_room
from brain import data_rights
from brain.actions.models import ActionToken
from brain.core import Brain
from brain.data_rights import EXPORT_EXCLUDED, FAREWELL_KIND, personal_tables
from brain.outbox.models import PENDING, Outbound, OutboxMessage
from brain.outbox.service import mark_sent
from brain.people.models import Identity
from brain.people.service import resolve_identity
from tests.e2e.conftest import Person
from tests.telegram.conftest import make_adapter, press, running, send, user_id_of
from tests.telegram.fake_bot_api import FakeBotAPI
from tests.telegram.fake_bot_api import Person as TelegramPerson

EXPORT_NAME = re.compile(r"^companion-export-\d{4}-\d{2}-\d{2}\.json$")


async def user_of(brain: Brain, handle: str, platform: str = "test") -> uuid.UUID:
    async with brain.transactions.read() as session:
        found = await session.scalar(select(Identity.user_id).where(Identity.platform == platform,
                                                                    Identity.platform_id == handle))
    assert found is not None
    return found


def user_tables() -> list[Table]:
    """Every table of the metadata with a user_id column (events included), found independently of the code
    under test."""
    return [t for t in target_metadata.sorted_tables if "user_id" in t.c]


async def references(brain: Brain, user_id: uuid.UUID) -> dict[str, int]:
    """Rows in any table that refer to the person: their users row, and rows of every user_id table."""
    counts: dict[str, int] = {}
    async with brain.transactions.read() as session:
        users = target_metadata.tables["users"]
        counts["users"] = int(await session.scalar(
            select(func.count()).select_from(users).where(users.c.id == user_id)) or 0)
        for table in user_tables():
            counts[table.name] = int(await session.scalar(
                select(func.count()).select_from(table).where(table.c.user_id == user_id)) or 0)
    return {name: n for name, n in counts.items() if n}


async def use_a_lot(who: Person, marker: str) -> None:
    """Logs, a goal, a memory: rows in many tables, all with the person's marker."""
    for line in (f"/task {marker} shopping tomorrow", "/water 300", f"/meal lunch {marker} pasta 600 kcal",
                 f"/event {marker} dentist tomorrow 14:00", f"/place {marker} Cafe", "/goal 8 glasses of water a day",
                 f"/remember {marker} likes blue herons"):
        reply = await who.send(line)
        assert "went wrong" not in reply, (line, reply)


def document_of(who: Person) -> tuple[dict[str, Any], Outbound]:
    (message,) = [m for m in who.last if m.document is not None]
    return json.loads(message.document or b""), message


async def settle_farewells(brain: Brain) -> int:
    """What any sender does with the goodbye: send it and mark it sent."""
    async with brain.transactions.begin() as uow:
        rows = (await uow.session.scalars(select(OutboxMessage).where(
            OutboxMessage.kind == FAREWELL_KIND, OutboxMessage.status == PENDING))).all()
        for row in rows:
            await mark_sent(uow.session, row.id, uow.now)
    return len(rows)


# ---- export ------------------------------------------------------------------------------------------------

async def test_export_holds_every_personal_table_and_only_the_persons_rows(brain: Brain, person, memory) -> None:
    alice, bob = person(), person()
    await use_a_lot(alice, "AliceMarkerQx")
    await use_a_lot(bob, "BobMarkerZv")
    await alice.send("/week")  # a picture in the outbox: left out of the export, with a note
    reply = await alice.send("/export")
    assert "JSON file" in reply
    data, message = document_of(alice)
    alice_id, bob_id = await user_of(brain, alice.handle), await user_of(brain, bob.handle)

    assert EXPORT_NAME.match(message.document_name or "")
    assert data["format"] == "companion-export" and data["version"] == 1
    assert data["exported_at"].startswith("2026-11-30T07:30")
    assert data["user"]["id"] == str(alice_id) and data["user"]["timezone"] == "Europe/Berlin"
    personal = {p.name for p in personal_tables()}
    assert set(data["tables"]) == personal - set(EXPORT_EXCLUDED)
    assert set(data["not_exported"]) == set(EXPORT_EXCLUDED)
    tables = data["tables"]
    assert any("AliceMarkerQx" in t["title"] for t in tables["tasks"])
    assert any("AliceMarkerQx" in m["description"] for m in tables["meals"])
    assert any("AliceMarkerQx" in e["title"] for e in tables["calendar_events"])
    assert any("AliceMarkerQx" in p["name"] for p in tables["places"])
    assert tables["drink_entries"] and tables["goals"] and tables["events"]
    assert any("AliceMarkerQx" in n["text"] for n in tables["memory_nodes"])
    assert all("embedding" not in n and "search" not in n for n in tables["memory_nodes"])
    assert [i["platform_id"] for i in tables["identities"]] == [alice.handle]
    pictures = [m["image_png"] for m in tables["outbox"] if m["image_png"] is not None]
    assert pictures and all(p.startswith("(left out:") for p in pictures)
    assert tables["tasks"][0]["created_at"].startswith("2026-") and "T" in tables["tasks"][0]["created_at"]
    everything = json.dumps(data)
    assert "BobMarkerZv" not in everything and str(bob_id) not in everything
    assert {row["user_id"] for rows in tables.values() for row in rows} == {str(alice_id)}


MOMENT = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([+-]\d{2}:\d{2}|Z)$")


def strings_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings_in(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings_in(v)]
    return []


async def test_every_moment_in_the_export_is_in_utc_also_inside_event_payloads(person) -> None:
    """The export says its times are in UTC: an event planned at 14:00 in Berlin (+01:00) is stored in its payload
    with that offset, and written into the export as 13:00 UTC, as are the tool calls that carried it."""
    alice = person()
    await alice.send("/event Dentist tomorrow 14:00")
    await alice.send("/export")
    data, _ = document_of(alice)
    (created,) = [e for e in data["tables"]["events"] if e["type"] == "CalendarEventCreated"]
    assert created["payload"]["start_time"] == "2026-12-01T13:00:00+00:00"
    assert created["payload"]["end_time"].endswith("+00:00")
    moments = [s for s in strings_in(data) if MOMENT.match(s)]
    assert moments and all(s.endswith("+00:00") for s in moments), [s for s in moments if not s.endswith("+00:00")]
    assert any("UTC" in note for note in data["notes"])


def test_every_table_with_user_rows_is_exported_or_excluded_with_a_reason() -> None:
    personal = {p.name for p in personal_tables()}
    for table in user_tables():
        assert table.name in personal, f"{table.name} has a user_id column but is not treated as personal"
    for name, reason in EXPORT_EXCLUDED.items():
        assert name in personal, f"{name} is excluded from the export but is no personal table"
        assert len(reason) > 10


def test_a_table_reached_only_through_a_foreign_key_is_personal_too() -> None:
    metadata = MetaData()
    Table("users", metadata, Column("id", primary_key=True))
    Table("notes", metadata, Column("id", primary_key=True), Column("user_id", ForeignKey("users.id")))
    Table("note_tags", metadata, Column("id", primary_key=True), Column("note_id", ForeignKey("notes.id")))
    Table("settings", metadata, Column("key", primary_key=True))
    found = {p.name: p for p in personal_tables(metadata)}
    assert set(found) == {"notes", "note_tags"}
    sql = str(found["note_tags"].rows_of(uuid.uuid4()))
    assert "note_tags.note_id IN (SELECT notes.id" in sql and "notes.user_id" in sql


async def test_the_export_reads_in_one_repeatable_read_read_only_transaction(
        brain: Brain, user: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, str]] = []
    collect = data_rights._collect

    async def spy(session: Any, user_id: uuid.UUID, now: Any) -> dict[str, Any]:
        seen.append((await session.scalar(text("SHOW transaction_isolation")),
                     await session.scalar(text("SHOW transaction_read_only"))))
        return await collect(session, user_id, now)

    monkeypatch.setattr(data_rights, "_collect", spy)
    body, name = await data_rights.export_person(brain, user.id)
    assert seen == [("repeatable read", "on")]
    assert json.loads(body)["user"]["id"] == str(user.id) and EXPORT_NAME.match(name)


async def test_a_second_export_within_a_minute_is_refused(brain: Brain, person) -> None:
    alice = person()
    await alice.send("/task Something")
    await alice.send("/export")
    assert document_of(alice)[0]["tables"]["tasks"]
    reply = await alice.send("/export")
    assert "just sent you an export" in reply
    assert all(m.document is None for m in alice.last)
    async with brain.transactions.begin() as uow:  # a minute later (by the database's clock)
        await uow.session.execute(update(OutboxMessage).values(created_at=text("now() - interval '61 seconds'")))
    await alice.send("/export")
    assert document_of(alice)[0]["format"] == "companion-export"


# ---- delete_me ---------------------------------------------------------------------------------------------

async def test_delete_me_erases_every_row_of_the_person_and_nothing_of_another(brain: Brain, person,
                                                                                 memory) -> None:
    alice, bob = person(), person()
    await use_a_lot(alice, "AliceMarkerQx")
    await use_a_lot(bob, "BobMarkerZv")
    await alice.send("/export")
    await alice.send("250 ml water")  # free text: short-term memory capture
    await alice.dialog.settle()
    assert memory.log is not None
    await memory.log.flush()
    alice_id, bob_id = await user_of(brain, alice.handle), await user_of(brain, bob.handle)
    before = await references(brain, alice_id)
    assert {"tasks", "meals", "memory_nodes", "events", "outbox", "identities", "pulse_states"} <= set(before)
    bob_before = await references(brain, bob_id)

    reply = await alice.send("/delete_me")
    assert "cannot be undone" in reply
    assert set(alice.buttons()) == {"Delete everything", "Keep my data"}
    await alice.press(alice.buttons()["Delete everything"])
    await memory.log.flush()

    left = await references(brain, alice_id)
    assert left == {"users": 1, "outbox": 1}  # the bare row carrying the goodbye, until it is sent
    async with brain.transactions.read() as session:
        (goodbye,) = (await session.scalars(select(OutboxMessage).where(OutboxMessage.user_id == alice_id))).all()
    assert goodbye.text == "All your data is deleted. If you write again, you start fresh."
    assert (goodbye.platform, goodbye.chat_id, goodbye.kind) == ("test", alice.handle, FAREWELL_KIND)

    assert await settle_farewells(brain) == 1
    assert await references(brain, alice_id) == {}
    assert await references(brain, bob_id) == bob_before
    assert "BobMarkerZv" in await bob.send("/tasks")

    # Writing again starts fresh: a new person with none of the old data.
    assert "AliceMarkerQx" not in await alice.send("/tasks")
    assert await user_of(brain, alice.handle) != alice_id


async def test_keep_my_data_deletes_nothing(brain: Brain, person) -> None:
    alice = person()
    await alice.send("/task Keep this")
    alice_id = await user_of(brain, alice.handle)
    await alice.send("/delete_me")
    before = await references(brain, alice_id)
    reply = await alice.press(alice.buttons()["Keep my data"])
    assert "Nothing was deleted" in reply
    after = await references(brain, alice_id)
    assert after["tasks"] == before["tasks"] == 1 and after["identities"] == 1


async def test_another_persons_press_and_a_second_press_do_nothing(brain: Brain, person) -> None:
    alice, mallory = person(), person()
    await alice.send("/task Alice's task")
    alice_id = await user_of(brain, alice.handle)
    await alice.send("/delete_me")
    confirm = alice.buttons()["Delete everything"]
    assert "not valid" in await mallory.press(confirm)
    assert (await references(brain, alice_id))["tasks"] == 1

    await alice.press(confirm)
    assert set(await references(brain, alice_id)) == {"users", "outbox"}
    second = await alice.press(confirm)  # the erased person's token is gone with them
    assert "not valid" in second
    assert set(await references(brain, alice_id)) == {"users", "outbox"}
    async with brain.transactions.read() as session:
        farewells = await session.scalar(select(func.count()).select_from(OutboxMessage)
                                         .where(OutboxMessage.kind == FAREWELL_KIND))
    assert farewells == 1


# ---- through the fake Telegram -----------------------------------------------------------------------------

@pytest.fixture
async def telegram(brain: Brain, dialog: Dialog, api: FakeBotAPI) -> AsyncIterator[TelegramAdapter]:
    async with running(make_adapter(brain, dialog, api)) as adapter:
        yield adapter


@pytest.mark.slow
async def test_export_and_goodbye_arrive_through_telegram(brain: Brain, telegram: TelegramAdapter,
                                                          api: FakeBotAPI) -> None:
    alice = TelegramPerson(9101, "Alice", "en")
    await send(api, alice, "/task TelegramMarker report")
    alice_id = await user_id_of(brain, alice)

    api.push(api.text(alice, "/export"))
    (document,) = await api.wait_for("sendDocument", chat_id=alice.id)
    assert EXPORT_NAME.match(document.params["document_filename"])
    assert "JSON file" in document.params["caption"]
    exported = json.loads(document.params["document_content"])
    assert exported["user"]["id"] == str(alice_id)
    assert "TelegramMarker" in exported["tables"]["tasks"][0]["title"]

    (question,) = await send(api, alice, "/delete_me")
    (goodbye,) = await press(api, alice, "Delete everything", question)
    assert goodbye.text == "All your data is deleted. If you write again, you start fresh."
    # The sender commits right after Telegram took the message: poll until its transaction is through.
    async with asyncio.timeout(5):
        left = await references(brain, alice_id)
        while left:
            await asyncio.sleep(0.02)
            left = await references(brain, alice_id)


# ---- Matrix and the terminal -------------------------------------------------------------------------------

class MatrixClient:
    """Stands in for the nio client: takes uploads and room events (the real client is tested against Synapse
    in tests/matrix)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.uploads: list[tuple[bytes, str, str]] = []
        self.rooms: dict[str, Any] = {}

    async def upload(self, data: Any, content_type: str, filename: str, encrypt: bool = False,
                     filesize: int | None = None) -> tuple[UploadResponse, None]:
        self.uploads.append((data.read(), content_type, filename))
        return UploadResponse(f"mxc://hs/file{len(self.uploads)}"), None

    async def room_send(self, room_id: str, event_type: str, content: dict[str, Any], tx_id: str | None = None,
                        ignore_unverified_devices: bool = False) -> RoomSendResponse:
        self.sent.append((event_type, content))
        return RoomSendResponse(f"$event-{tx_id}", room_id)


async def test_export_and_goodbye_arrive_through_matrix(brain: Brain, dialog: Dialog) -> None:
    async with brain.transactions.begin() as uow:
        user = await resolve_identity(uow.session, "matrix", "@alice:hs", default_locale="en",
                                      default_timezone="Europe/Berlin")
        await register_room(uow.session, user.id, "!dm:hs", "@alice:hs", direct=True, now=uow.now)
    async def say(text: str | None = None, action: str | None = None) -> None:
        await dialog.handle(Inbound(platform="matrix", platform_user_id="@alice:hs", chat_id="!dm:hs",
                                    message_id=uuid.uuid4().hex, text=text, action=action))

    client = MatrixClient()
    delivery = Delivery(brain, client)  # type: ignore[arg-type]
    await say("/task MatrixMarker review")
    await say("/export")
    await delivery.pass_once()
    ((data, mimetype, filename),) = client.uploads
    assert mimetype == "application/json" and EXPORT_NAME.match(filename)
    assert "MatrixMarker" in json.loads(data)["tables"]["tasks"][0]["title"]
    (file_event,) = [c for t, c in client.sent if c.get("msgtype") == "m.file"]
    assert file_event["url"] == "mxc://hs/file1" and file_event["body"] == filename

    await say("/delete_me")
    async with brain.transactions.read() as session:
        token = (await session.scalar(select(ActionToken.token).where(ActionToken.kind == "data_delete_confirm")))
    await say(action=token)
    await delivery.pass_once()
    assert client.sent[-1][1]["body"] == "All your data is deleted. If you write again, you start fresh."
    assert await references(brain, user.id) == {}


async def test_the_terminal_saves_the_export_and_says_goodbye(brain: Brain, dialog: Dialog, tmp_path: Any) -> None:
    out = io.StringIO()
    script = "/task ConsoleMarker plan\n/export\n/delete_me\n1\n/tasks\n"
    chat = ConsoleChat(brain, dialog, ConsoleConfig(io.StringIO(script), out, person="erin", pictures_dir=tmp_path))
    first = await dialog.user_for(Inbound(platform="console", platform_user_id="erin", chat_id="erin",
                                          message_id="m0"))
    assert await chat.run() == 0
    printed = out.getvalue()
    (path,) = re.findall(r"\[file: (.+)\]", printed)
    assert EXPORT_NAME.match(Path(path).name)
    saved = await asyncio.to_thread(Path(path).read_bytes)
    assert "ConsoleMarker" in json.loads(saved)["tables"]["tasks"][0]["title"]
    assert "All your data is deleted. If you write again, you start fresh." in printed
    assert "ConsoleMarker" not in printed.split("start fresh.")[1]  # the next line is a new person's
    assert await references(brain, first.id) == {}
