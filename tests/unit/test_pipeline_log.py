"""The pipeline log buffers without waiting for the database, groups rows into spans with parents, records
failures inside a span, flushes in batches (periodically and on close) and keeps rows when a flush fails."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from brain.clock import FixedClock
from brain.memory.models import LOG_KINDS
from brain.pipeline_log import PipelineLog


class FakeSession:
    """Stands in for an AsyncSession: records the rows of each batch insert."""

    def __init__(self, sink: FakeDatabase) -> None:
        self.sink = sink

    async def __aenter__(self) -> FakeSession:
        return self

    async def __aexit__(self, *exc: object) -> bool:
        return False

    def begin(self) -> FakeSession:
        return self

    async def execute(self, statement: Any, rows: list[dict[str, Any]]) -> None:
        if self.sink.fail_next:
            self.sink.fail_next = False
            raise ConnectionError("database went away")
        self.sink.batches.append(list(rows))


class FakeDatabase:
    def __init__(self) -> None:
        self.batches: list[list[dict[str, Any]]] = []
        self.fail_next = False

    def sessions(self) -> Any:  # stands in for async_sessionmaker()
        return FakeSession(self)

    @property
    def rows(self) -> list[dict[str, Any]]:
        return [row for batch in self.batches for row in batch]


@pytest.fixture
def db() -> FakeDatabase:
    return FakeDatabase()


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(datetime(2026, 11, 30, 7, 30, tzinfo=UTC))


def test_there_are_the_eleven_kinds() -> None:
    assert len(LOG_KINDS) == 11
    assert {"input", "prompt", "calculation", "switch", "db_write", "output", "error", "remark", "span_start",
            "span_end", "token"} == set(LOG_KINDS)


async def test_logging_only_buffers_until_a_flush(db: FakeDatabase, clock: FixedClock) -> None:
    log = PipelineLog(db.sessions, clock, flush_interval_s=3600)
    user, turn = uuid.uuid4(), uuid.uuid4()
    log.log("input", "dialog", {"text": "hi"}, user_id=user, turn_id=turn)
    log.log("output", "dialog", {"text": "hello"}, user_id=user, turn_id=turn)
    assert db.rows == [] and log.pending == 2
    assert await log.flush() == 2
    assert len(db.batches) == 1
    assert [r["kind"] for r in db.rows] == ["input", "output"]
    assert db.rows[0]["at"] == clock.now()
    assert {r["turn_id"] for r in db.rows} == {turn}
    await log.close()


async def test_an_unknown_kind_is_refused(db: FakeDatabase, clock: FixedClock) -> None:
    log = PipelineLog(db.sessions, clock)
    with pytest.raises(ValueError):
        log.log("db_read", "memory")
    await log.close()


async def test_spans_get_their_own_ids_and_carry_their_parent(db: FakeDatabase, clock: FixedClock) -> None:
    log = PipelineLog(db.sessions, clock, flush_interval_s=3600)
    user, turn = uuid.uuid4(), uuid.uuid4()
    async with log.span("turn", user_id=user, turn_id=turn) as outer:
        outer.log("calculation", "score", {"score": 0.7})
        async with log.span("recall", user_id=user, turn_id=turn, parent=outer) as inner:
            inner.log("switch", "depth", {"decision": 1})
    await log.close()
    rows = db.rows
    assert [r["kind"] for r in rows] == ["span_start", "calculation", "span_start", "switch", "span_end", "span_end"]
    assert outer.span_id != inner.span_id
    assert outer.span_id.version == 4 and inner.span_id.version == 4
    assert [r["span_id"] for r in rows] == [outer.span_id, outer.span_id, inner.span_id, inner.span_id,
                                            inner.span_id, outer.span_id]
    assert {r["parent_span_id"] for r in rows if r["span_id"] == inner.span_id} == {outer.span_id}
    assert {r["parent_span_id"] for r in rows if r["span_id"] == outer.span_id} == {None}
    assert rows[-1]["content"] == {"status": "ok"}


async def test_parallel_spans_do_not_mix(db: FakeDatabase, clock: FixedClock) -> None:
    log = PipelineLog(db.sessions, clock, flush_interval_s=3600)

    async def task(name: str) -> uuid.UUID:
        async with log.span(name, user_id=None, turn_id=None) as span:
            await asyncio.sleep(0)
            span.log("remark", name, f"from {name}")
            return span.span_id

    first, second = await asyncio.gather(task("a"), task("b"))
    await log.close()
    assert first != second
    assert {r["name"] for r in db.rows if r["span_id"] == first} == {"a"}
    assert {r["name"] for r in db.rows if r["span_id"] == second} == {"b"}


async def test_a_failure_inside_a_span_is_logged_and_still_raised(db: FakeDatabase, clock: FixedClock) -> None:
    log = PipelineLog(db.sessions, clock, flush_interval_s=3600)
    with pytest.raises(KeyError):
        async with log.span("promotion", user_id=None, turn_id=None):
            raise KeyError("missing")
    await log.close()
    kinds = [r["kind"] for r in db.rows]
    assert kinds == ["span_start", "error", "span_end"]
    assert db.rows[1]["content"]["type"] == "KeyError"
    assert db.rows[2]["content"] == {"status": "error"}


async def test_close_flushes_what_is_left(db: FakeDatabase, clock: FixedClock) -> None:
    log = PipelineLog(db.sessions, clock, flush_interval_s=3600)
    for i in range(25):
        log.log("token", "llm", {"total": i})
    await log.close()
    assert len(db.rows) == 25
    assert log.pending == 0


async def test_the_writer_flushes_in_the_background(db: FakeDatabase, clock: FixedClock) -> None:
    log = PipelineLog(db.sessions, clock, flush_interval_s=0.0)
    log.log("remark", "tick", "one")
    for _ in range(1000):  # yields to the writer task; no wall-clock waiting
        if db.rows:
            break
        await asyncio.sleep(0)
    assert len(db.rows) == 1
    await log.close()


async def test_a_failed_flush_keeps_the_rows_for_the_next_one(db: FakeDatabase, clock: FixedClock) -> None:
    log = PipelineLog(db.sessions, clock, flush_interval_s=3600)
    log.log("remark", "x", "kept")
    db.fail_next = True
    assert await log.flush() == 0
    assert log.pending == 1
    assert await log.flush() == 1
    assert [r["content"] for r in db.rows] == ["kept"]
    await log.close()


async def test_forgetting_a_person_drops_their_buffered_rows(db: FakeDatabase, clock: FixedClock) -> None:
    log = PipelineLog(db.sessions, clock, flush_interval_s=3600)
    gone, kept = uuid.uuid4(), uuid.uuid4()
    log.log("input", "dialog", {"text": "secret"}, user_id=gone)
    log.log("input", "dialog", {"text": "fine"}, user_id=kept)
    assert log.discard(gone) == 1
    await log.close()
    assert [r["user_id"] for r in db.rows] == [kept]
