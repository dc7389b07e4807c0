"""Crash safety of the real bot process (`companion run` on the fake Telegram): killed with SIGKILL at random
moments under traffic from several people, restarted, then checked in the database and in the fake Bot API's
record (the harness and its invariants are in tests/reliability/crash.py; `benchmarks/crash.py` runs 30 kills)."""

from __future__ import annotations

import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

from brain.store.embedded import to_libpq_url
from tests.fakes.ollama_server import FakeOllama
from tests.reliability.crash import (
    IN_FLIGHT_AT_STOP,
    BotProcess,
    CrashConfig,
    bot_environment,
    daytime_zone,
    run_crashes,
)
from tests.telegram.fake_bot_api import FakeBotAPI, Person


@pytest.mark.slow
async def test_random_kills_lose_no_acknowledged_write_and_double_nothing(database_url: str) -> None:
    # All eight pushes (morning and evening of four people) in the first whole minute at least 15 s ahead.
    report = await run_crashes(CrashConfig(database_url, kills=3, seed=9, people=4, slots=1, settle_within=90))
    assert report.kills == 3
    assert report.violations == [], report
    # The run covered what it claims to: acknowledged writes of each kind, due push slots, promoted memories.
    assert sum(report.acknowledged.values()) >= 10, report
    assert {"drink", "task", "meal"} <= set(report.acknowledged), report
    assert report.slots_due == 8, report
    assert report.memory_promoted >= 1, report
    assert report.outbox_failed == [], report
    assert report.errors_logged == 0, "\n\n".join(report.error_lines)


@pytest.mark.slow
async def test_a_reply_in_flight_when_the_process_dies_is_not_sent_again(api: FakeBotAPI, database_url: str) -> None:
    model = FakeOllama()
    model_url = await model.start()
    data_dir = Path(tempfile.mkdtemp(prefix="crfl", dir="/tmp"))
    zone = daytime_zone(datetime.now(UTC))
    bot = BotProcess(bot_environment(api, database_url, data_dir, model_url, zone), data_dir / "bot.log", api)
    alice = Person(880_901, "Alice")
    try:
        await bot.start()
        # Telegram takes the message and answers late: the process dies after it arrived, before "sent" is stored.
        api.slow("sendMessage", delay=10.0, when=lambda params: "crash-inflight" in str(params.get("text")))
        api.push(api.text(alice, "/task crash-inflight"))
        await api.wait_for("sendMessage", chat_id=alice.id, where=lambda c: "crash-inflight" in c.text, within=30)
        await bot.kill()
        await bot.start()
        api.push(api.text(alice, "/help"))
        await api.wait_for("sendMessage", chat_id=alice.id, where=lambda c: "What I understand" in c.text, within=30)
        assert await bot.stop() == 0
        arrived = [c for c in api.calls_of("sendMessage", alice.id) if "crash-inflight" in c.text]
        assert len(arrived) == 1, [c.text for c in arrived]
        # Its outcome was unknown to the restarted process: failed with that reason, not sent again.
        async with await psycopg.AsyncConnection.connect(to_libpq_url(database_url), autocommit=True) as conn:
            rows = await (await conn.execute(
                "SELECT status, last_error FROM outbox WHERE text LIKE '%crash-inflight%'")).fetchall()
        assert [(status, str(error).startswith(IN_FLIGHT_AT_STOP)) for status, error in rows] == [("failed", True)]
    finally:
        await bot.ensure_dead()
        await model.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
