"""Long polling on several cores (`adapters/telegram/scaleout.py`): `companion run` with TELEGRAM_PROCESSES=2 polls in
one process and hands the chats of the other share to a worker process. Shown with real processes against the fake
Bot API: a worker that is paused holds up its own chats only (their messages in order, a button press too), and
nothing of the other share; a worker that is killed is replaced while the poller answers its chats; SIGTERM stops
both."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from telegram import Update

from adapters.telegram.scaleout import chat_of, share_of
from bot.settings import Settings, SettingsError, load_settings
from tests.telegram.fake_bot_api import TOKEN, FakeBotAPI, Person

ROOT = Path(__file__).resolve().parents[2]


def test_a_chat_always_goes_to_one_share_and_chats_spread_evenly() -> None:
    assert share_of("1001", 2) == share_of("1001", 2) == 1
    assert share_of("-100123", 3) == -100123 % 3  # group chats have negative ids
    assert share_of("!room:example.org", 4) == share_of("!room:example.org", 4)
    counts = [0, 0, 0]
    for chat in range(3000):
        counts[share_of(str(7_000_000 + chat), 3)] += 1
    assert counts == [1000, 1000, 1000]


def test_the_chat_of_a_message_and_of_a_button_press() -> None:
    user = {"id": 42, "is_bot": False, "first_name": "A"}
    message = {"message_id": 5, "date": 0, "chat": {"id": -77, "type": "group"}, "from": user, "text": "hi"}
    assert chat_of(Update.de_json({"update_id": 1, "message": message}, None)) == "-77"
    press = {"id": "q", "from": user, "chat_instance": "c", "data": "t", "message": message}
    assert chat_of(Update.de_json({"update_id": 2, "callback_query": press}, None)) == "-77"
    inline = {"id": "q", "from": user, "chat_instance": "c", "data": "t", "inline_message_id": "i"}
    assert chat_of(Update.de_json({"update_id": 3, "callback_query": inline}, None)) == "42"
    assert chat_of(Update.de_json({"update_id": 4}, None)) is None
    assert chat_of("not an update") is None


def test_several_processes_are_for_long_polling_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_PROCESSES", "2")
    assert load_settings().telegram_processes == 2
    monkeypatch.setenv("TELEGRAM_TOKEN", TOKEN)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_URL", "https://bot.example.org/hook")
    with pytest.raises(SettingsError, match="TELEGRAM_PROCESSES is for long polling"):
        load_settings()
    monkeypatch.setenv("TELEGRAM_PROCESSES", "0")
    monkeypatch.delenv("TELEGRAM_WEBHOOK_URL")
    with pytest.raises(SettingsError, match="TELEGRAM_PROCESSES"):
        load_settings()
    assert Settings.model_fields["telegram_processes"].default == 1


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == pid and b"multiprocessing.spawn" in cmdline and b"resource_tracker" not in cmdline:
            found.append(int(entry))
    return found


def _exists(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


async def _worker_of(pid: int, *, other_than: int | None = None, within: float = 90.0) -> int:
    deadline = asyncio.get_running_loop().time() + within
    while asyncio.get_running_loop().time() < deadline:
        workers = [child for child in _children(pid) if child != other_than]
        if workers:
            return workers[0]
        await asyncio.sleep(0.2)
    raise AssertionError("no Telegram worker process appeared")


@pytest.mark.slow
async def test_two_processes_share_the_chats(api: FakeBotAPI, database_url: str,
                                             person: Callable[..., Person]) -> None:
    data_dir = tempfile.mkdtemp(prefix="cshare", dir="/tmp")
    env = {**os.environ, "TELEGRAM_TOKEN": TOKEN, "TELEGRAM_BASE_URL": api.base_url, "DATABASE_URL": database_url,
           "COMPANION_DATA_DIR": data_dir, "LOG_LEVEL": "WARNING", "PULSE_TICK_SECONDS": "3600",
           "TELEGRAM_PROCESSES": "2", "COMPANION_LLM": "false"}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "app.cli", "run", cwd=ROOT, env=env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    people = [person(f"P{n}") for n in range(4)]
    here = [p for p in people if share_of(str(p.id), 2) == 0]
    there = [p for p in people if share_of(str(p.id), 2) == 1]
    assert here and there
    try:
        for who in people:  # each one's first contact, in both processes
            api.push(api.text(who, "/help"))
        for who in people:
            (reply,) = await api.wait_for("sendMessage", chat_id=who.id, within=90)
            assert "What I understand" in reply.text
        worker = await _worker_of(process.pid)
        api.push(api.text(there[0], "/goal"))
        menu = (await api.wait_for("sendMessage", chat_id=there[0].id, count=2, within=30))[-1]

        # Paused, the worker holds up its own chats, button presses included, and nothing else; resumed, it answers
        # them, each chat's messages in order.
        os.kill(worker, signal.SIGSTOP)
        try:
            for who in there:
                api.push(api.text(who, "/water 250"))
                api.push(api.text(who, "/help"))
            api.push(api.press(there[0], menu.buttons()["+ 8 glasses of water a day"], menu))
            for who in here:
                api.push(api.text(who, "/water 300"))
            for who in here:
                replies = await api.wait_for("sendMessage", chat_id=who.id, count=2, within=30)
                assert "300" in replies[-1].text
            await asyncio.sleep(1.0)
            assert [len(api.calls_of("sendMessage", who.id)) for who in there] == [2] + [1] * (len(there) - 1)
            assert not api.calls_of("editMessageReplyMarkup")
        finally:
            os.kill(worker, signal.SIGCONT)
        for who in there:
            replies = await api.wait_for("sendMessage", chat_id=who.id, count=5 if who == there[0] else 3,
                                         within=30)
            texts = [reply.text for reply in replies[-3:] if not reply.text.startswith("New goal")]
            assert "250" in texts[-2] and "What I understand" in texts[-1]
        assert any(reply.text.startswith("New goal: 8 glasses of water a day")
                   for reply in api.calls_of("sendMessage", there[0].id)[2:])
        (edit,) = await api.wait_for("editMessageReplyMarkup", chat_id=there[0].id, within=30)
        assert edit.params["message_id"] == menu.params["_message_id"]

        # Killed, the worker is replaced; meanwhile the poller answers its chats.
        os.kill(worker, signal.SIGKILL)
        await asyncio.sleep(0.5)
        api.push(api.text(there[0], "/water 400"))
        replies = await api.wait_for("sendMessage", chat_id=there[0].id, count=6, within=30)
        assert "400" in replies[-1].text
        replacement = await _worker_of(process.pid, other_than=worker)
        await api.wait_for("getMe", count=3, within=90)  # the poller's, the first worker's and the replacement's
        await asyncio.sleep(1.0)  # it says it is ready right after
        os.kill(replacement, signal.SIGSTOP)  # the chats of its share are its own again
        try:
            api.push(api.text(there[0], "/help"))
            await asyncio.sleep(1.0)
            assert len(api.calls_of("sendMessage", there[0].id)) == 6
        finally:
            os.kill(replacement, signal.SIGCONT)
        await api.wait_for("sendMessage", chat_id=there[0].id, count=7, within=30)

        process.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.wait_for(process.communicate(), timeout=60)
        log = stderr.decode()
        assert process.returncode == 0, log
        assert "Telegram worker 1 ended" in log and "Telegram worker 1 started again" in log
        assert not _exists(replacement)  # stopped with the poller, and reaped
        # Every update had exactly one effect: one reply each, none twice.
        for who in people:
            assert len(api.calls_of("sendMessage", who.id)) == (7 if who == there[0] else
                                                                 3 if who in there else 2)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        shutil.rmtree(data_dir, ignore_errors=True)
