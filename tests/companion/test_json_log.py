"""LOG_FORMAT=json: one JSON object per line, for log collectors. Every line written while a person's message is
handled names that person by their internal id, a line inside a companion turn also carries the turn id under
which the pipeline log traced it, and no line holds what the person wrote; lines outside name nobody."""

from __future__ import annotations

import io
import json
import logging
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.log_format import JsonFormatter, configure_logging
from bot.settings import SettingsError, load_settings
from brain.core import Brain
from brain.log_context import about
from brain.memory.models import PipelineLogEntry
from brain.pipeline_log import PipelineLog
from tests.fakes.ollama_server import FakeOllama, Script


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield stream
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def parsed(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


async def turn_ids(brain: Brain, user_id: uuid.UUID) -> list[uuid.UUID]:
    async with brain.transactions.read() as session:
        return list((await session.scalars(select(PipelineLogEntry.turn_id).where(
            PipelineLogEntry.name == "companion.turn", PipelineLogEntry.kind == "span_start",
            PipelineLogEntry.user_id == user_id))).all())


async def test_lines_of_a_companion_turn_carry_the_persons_id_and_the_turn_id_and_no_text(
        brain: Brain, person, fake: FakeOllama, companion, json_lines: io.StringIO) -> None:
    companion._log = log = PipelineLog(brain.db.sessions, brain.clock)
    # Each model server answers once with an error: the client logs the failed attempt inside the turn, and retries.
    fake.script(Script(status=500, error="overloaded"), Script(content="Noted."),
                Script(status=500, error="overloaded"), Script(content="Noted too."))
    alice, bob = person(), person()
    assert await alice.send("Alice's secret diary line") == "Noted."
    assert await bob.send("Bob's secret diary line") == "Noted too."
    await log.close()
    logging.getLogger("tests.outside").warning("after the turns")

    lines = parsed(json_lines)
    assert all(set(line) >= {"time", "level", "logger", "message", "person_id", "turn_id"} for line in lines)
    failed = [line for line in lines if str(line["message"]).startswith("model call failed")]
    people = [(await alice.user()).id, (await bob.user()).id]
    assert [line["person_id"] for line in failed] == [str(p) for p in people]
    assert [line["turn_id"] for line in failed] == [str((await turn_ids(brain, p))[0]) for p in people]
    assert lines[-1]["message"] == "after the turns"
    assert lines[-1]["person_id"] is None and lines[-1]["turn_id"] is None
    assert "secret diary" not in json_lines.getvalue()


def test_outside_a_person_and_a_turn_the_ids_are_null_and_an_exception_is_kept(json_lines: io.StringIO) -> None:
    person, turn = uuid.uuid4(), uuid.uuid4()
    with about(person):
        with about(turn=turn):
            logging.getLogger("tests.inside").info("both")
        logging.getLogger("tests.inside").info("person only")
    try:
        raise ValueError("broken")
    except ValueError:
        logging.getLogger("tests.outside").exception("neither")
    both, person_only, neither = parsed(json_lines)
    assert (both["person_id"], both["turn_id"]) == (str(person), str(turn))
    assert (person_only["person_id"], person_only["turn_id"]) == (str(person), None)
    assert (neither["person_id"], neither["turn_id"], neither["level"]) == (None, None, "ERROR")
    assert "ValueError: broken" in str(neither["exception"])


def test_log_format_is_text_or_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOG_FORMAT", raising=False)
    assert load_settings().log_format == "text"
    assert load_settings(LOG_FORMAT="json").log_format == "json"
    with pytest.raises(SettingsError, match="LOG_FORMAT"):
        load_settings(LOG_FORMAT="yaml")


def test_configure_logging_writes_json_lines_to_the_file(tmp_path: Path) -> None:
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    root.handlers.clear()
    try:
        configure_logging("INFO", "json", filename=tmp_path / "companion.log")
        logging.getLogger("tests.file").info("to the file")
        for handler in root.handlers:
            handler.close()
    finally:
        root.handlers[:], root.level = saved[0], saved[1]
    [line] = [json.loads(text) for text in (tmp_path / "companion.log").read_text().splitlines()]
    assert line["message"] == "to the file" and line["logger"] == "tests.file"
