"""`companion import FILE`: a person's /export taken back in. Into a fresh install, export -> import -> export
gives the same document; beside another person whose memory ids are taken already, the person's memory comes
with new ids and its edges still join the same memories (also from an export that still gave each edge an id);
a person already here is refused, and nothing is written then."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from app.cli import cli
from bot.access import AccessPolicy
from bot.dialog import Dialog
from brain.core import Brain
from brain.data_import import ImportRefused, import_person, read_document
from brain.data_rights import export_person
from brain.memory.api import Memory
from brain.memory.embedder import WordLlamaEmbedder
from brain.people.models import Identity, User
from brain.pipeline_log import PipelineLog
from brain.store.database import Database
from tests.e2e.conftest import Person

LINES = ("/task {m} shopping tomorrow", "/water 300", "/coffee 2", "/meal lunch {m} pasta 600 kcal",
         "/event {m} dentist tomorrow 14:00", "/place {m} Cafe", "/goal 8 glasses of water a day", "/quiet 22-7",
         "/remember {m} met Jürgen in Lisbon", "/remember Jürgen from Lisbon likes blue herons",
         "/remember {m} visited Lisbon with Jürgen in May", "/ritual")


async def lives_a_lot(who: Person, marker: str) -> None:
    for line in LINES:
        reply = await who.send(line.format(m=marker))
        assert "went wrong" not in reply, (line, reply)


async def person_id(brain: Brain, handle: str) -> uuid.UUID:
    async with brain.transactions.read() as session:
        found = await session.scalar(select(Identity.user_id).where(Identity.platform_id == handle))
    assert found is not None
    return found


async def exported(brain: Brain, user_id: uuid.UUID) -> dict[str, Any]:
    body, _ = await export_person(brain, user_id)
    return dict(json.loads(body))


async def test_export_import_export_into_a_fresh_install_gives_the_same_document(
        brain: Brain, person, memory: Memory, fresh_database_url: str, clock, tmp_path: Path) -> None:
    alice = person()
    await lives_a_lot(alice, "AliceMarkerQx")
    assert memory.log is not None
    await memory.log.flush()
    alice_id = await person_id(brain, alice.handle)
    original = await exported(brain, alice_id)
    tables = original["tables"]
    assert tables["memory_nodes"] and tables["memory_edges"] and tables["events"] and tables["pipeline_log"]
    assert tables["tasks"] and tables["drink_entries"] and tables["goals"] and tables["identities"]
    file = tmp_path / "companion-export.json"
    file.write_text(json.dumps(original))

    runner = CliRunner()
    done = await asyncio.to_thread(runner.invoke, cli, ["import", str(file)], env={"DATABASE_URL": fresh_database_url})
    assert done.exit_code == 0, done.output
    assert f"Imported the person {alice_id}" in done.output

    target = Brain(Database(fresh_database_url, pool_size=2), clock=clock)
    try:
        assert await exported(target, alice_id) == original
        async with target.transactions.read() as session:  # the embeddings are there again, from the texts
            vectors = (await session.execute(select(func.count()).select_from(memory_table()).where(
                memory_table().c.embedding.is_not(None)))).scalar_one()
        assert vectors == len(tables["memory_nodes"])

        again = await asyncio.to_thread(runner.invoke, cli, ["import", str(file)],
                                        env={"DATABASE_URL": fresh_database_url})
        assert again.exit_code == 1 and "here already" in again.output
    finally:
        await target.close()


def memory_table() -> Any:
    from app.tables import target_metadata

    return target_metadata.tables["memory_nodes"]


async def test_beside_a_person_whose_ids_are_taken_the_memory_is_renumbered_and_its_edges_follow(
        brain: Brain, person, memory: Memory, fresh_database_url: str, clock) -> None:
    alice = person()
    await lives_a_lot(alice, "AliceMarkerQx")
    original = await exported(brain, await person_id(brain, alice.handle))

    target = Brain(Database(fresh_database_url, pool_size=2), clock=clock)
    embedder = WordLlamaEmbedder()
    target.memory = Memory(target, embedder, log=PipelineLog(target.db.sessions, target.clock))
    try:
        carol = Person(Dialog(target, default_locale="en",
                              default_timezone="Europe/Berlin", access=AccessPolicy.open()), "carol")
        await lives_a_lot(carol, "CarolMarkerVb")  # takes the memory ids 1, 2, 3 and the first event numbers
        # As an export made before migration 0044 wrote it: edges with an id of their own, which is not kept.
        older = json.loads(json.dumps(original))
        for number, edge in enumerate(older["tables"]["memory_edges"], start=1):
            edge["id"] = number
        report = await import_person(target, read_document(json.dumps(older).encode()), embedder)
        assert {"memory_nodes", "events"} <= set(report.renumbered)
        assert report.rows["memory_edges"] == len(original["tables"]["memory_edges"])
        moved = await exported(target, report.user_id)
    finally:
        await target.memory.log.close()
        await target.close()

    def joined(document: dict[str, Any]) -> list[tuple[str, str]]:
        text = {node["id"]: node["text"] for node in document["tables"]["memory_nodes"]}
        return sorted((text[e["a_id"]], text[e["b_id"]]) for e in document["tables"]["memory_edges"])

    assert joined(moved) == joined(original) and joined(original)
    assert {n["id"] for n in moved["tables"]["memory_nodes"]}.isdisjoint(
        {n["id"] for n in original["tables"]["memory_nodes"]})
    texts = sorted(n["text"] for n in original["tables"]["memory_nodes"])
    assert sorted(n["text"] for n in moved["tables"]["memory_nodes"]) == texts


async def test_a_person_already_here_is_refused_and_nothing_is_written(brain: Brain, person, memory: Memory) -> None:
    alice = person()
    await lives_a_lot(alice, "AliceMarkerQx")
    document = await exported(brain, await person_id(brain, alice.handle))
    async with brain.transactions.read() as session:
        people = await session.scalar(select(func.count()).select_from(User))
    with pytest.raises(ImportRefused, match="here already"):
        await import_person(brain, document, WordLlamaEmbedder())
    document["user"]["id"] = str(uuid.uuid4())  # another id, but the same chat account
    with pytest.raises(ImportRefused, match="belongs to another person"):
        await import_person(brain, document, WordLlamaEmbedder())
    async with brain.transactions.read() as session:
        assert await session.scalar(select(func.count()).select_from(User)) == people


@pytest.mark.parametrize(("raw", "reason"), [
    (b"not json", "not a JSON document"),
    (b'{"format": "something-else"}', "not a companion export"),
    (b'{"format": "companion-export", "version": 99, "user": {}, "tables": {}}', "version 99"),
])
def test_a_document_that_is_no_export_of_this_version_is_refused(raw: bytes, reason: str) -> None:
    with pytest.raises(ImportRefused, match=reason):
        read_document(raw)
