"""`companion backup` and `companion restore`: a database with people, their logs, events and memories, backed up
from a server of one's own (DATABASE_URL) and restored into an empty data directory (the embedded server), holds
every row of every table again; a restore never goes into a database that has tables already."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner

from app.cli import cli
from brain.memory.api import Memory
from brain.store.embedded import EmbeddedPostgres, to_libpq_url
from tests.e2e.conftest import Person

pytestmark = pytest.mark.slow  # starts an embedded PostgreSQL of its own


def every_row(libpq_uri: str) -> dict[str, list[str]]:
    """Each table of the public schema with its rows as text, sorted."""
    with psycopg.connect(libpq_uri) as conn:
        tables = [name for (name,) in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")]
        return {name: sorted(row for (row,) in conn.execute(f'SELECT t::text FROM "{name}" AS t'))
                for name in tables}


async def lives_a_little(who: Person, marker: str) -> None:
    for line in (f"/task {marker} shopping tomorrow", "/water 300", f"/meal lunch {marker} pasta 600 kcal",
                 f"/event {marker} dentist tomorrow 14:00", f"/place {marker} Cafe", "/goal 8 glasses of water a day",
                 f"/remember {marker} likes blue herons", f"/remember {marker} was born in Lisbon"):
        reply = await who.send(line)
        assert "went wrong" not in reply, (line, reply)


@pytest.fixture
def empty_data_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="crs", dir="/tmp"))  # short: PostgreSQL's socket lives there
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


async def test_a_backup_restored_into_an_empty_data_directory_has_every_person_event_and_memory(
        person, memory: Memory, database_url: str, empty_data_dir: Path, tmp_path: Path) -> None:
    await lives_a_little(person(), "AliceMarkerQx")
    await lives_a_little(person(), "BobMarkerZv")
    assert memory.log is not None
    await memory.log.flush()
    before = every_row(to_libpq_url(database_url))
    assert len(before["users"]) == 2 and before["events"] and len(before["memory_nodes"]) == 4
    assert sum("AliceMarkerQx" in row for row in before["memory_nodes"]) == 2

    runner = CliRunner()
    file = tmp_path / "companion.backup"
    backed_up = runner.invoke(cli, ["backup", str(file)], env={"DATABASE_URL": database_url})
    assert backed_up.exit_code == 0, backed_up.output
    restored = runner.invoke(cli, ["restore", str(file)], env={"DATABASE_URL": "",
                                                                "COMPANION_DATA_DIR": str(empty_data_dir)})
    assert restored.exit_code == 0, restored.output

    embedded = EmbeddedPostgres(empty_data_dir, shared_buffers_mb=None)
    embedded.start()
    try:
        after = every_row(embedded.libpq_uri)
    finally:
        embedded.stop()
    assert after == before

    again = runner.invoke(cli, ["restore", str(file)], env={"DATABASE_URL": "",
                                                             "COMPANION_DATA_DIR": str(empty_data_dir)})
    assert again.exit_code == 1
    assert "not empty" in again.output
