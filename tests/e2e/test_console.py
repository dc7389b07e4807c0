"""The terminal chat: in-process over the test database, and as the real `companion run` process
reading a pipe on the embedded PostgreSQL (the README's `make run`)."""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from adapters.console.chat import ConsoleChat, ConsoleConfig


async def test_console_prints_replies_and_numbered_buttons(brain, dialog) -> None:
    out = io.StringIO()
    chat = ConsoleChat(brain, dialog, ConsoleConfig(io.StringIO("/water 250\n/today\n"), out, person="tester"))
    assert await chat.run() == 0
    text = out.getvalue()
    assert "Logged 250 ml water" in text
    assert "Water: 250 ml of 2,000 ml (13%)" in text
    assert "[1] +250 ml water" in text


async def test_console_number_picks_a_button_of_the_last_reply(brain, dialog) -> None:
    out = io.StringIO()
    chat = ConsoleChat(brain, dialog, ConsoleConfig(io.StringIO("/water 250\n2\n"), out, person="tester"))
    await chat.run()
    assert "Water today: 750 of 2,000 ml" in out.getvalue()


async def test_console_ignores_blank_lines_and_ends_at_end_of_input(brain, dialog) -> None:
    out = io.StringIO()
    chat = ConsoleChat(brain, dialog, ConsoleConfig(io.StringIO("\n\n   \n"), out, person="tester"))
    assert await chat.run() == 0
    assert out.getvalue() == ""


async def test_quit_ends_the_chat_and_what_follows_is_not_read(brain, dialog) -> None:
    for word in ("/quit", "/EXIT", "/beenden"):
        out = io.StringIO()
        chat = ConsoleChat(brain, dialog, ConsoleConfig(io.StringIO(f"/water 250\n{word}\n/water 500\n"), out,
                                                        person=f"tester-{word}"))
        assert await chat.run() == 0
        text = out.getvalue()
        assert "Logged 250 ml water" in text and "Logged 500 ml" not in text and "don't know" not in text, text


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


async def test_the_greeting_of_an_interactive_terminal_names_quit_in_the_persons_language(brain, dialog) -> None:
    out = io.StringIO()
    await ConsoleChat(brain, dialog, ConsoleConfig(_Terminal("/lang de\n"), out, person="anna")).run()
    assert out.getvalue().startswith("Companion. /help lists what I understand; /quit or Ctrl-D ends the chat.\n")
    out = io.StringIO()
    await ConsoleChat(brain, dialog, ConsoleConfig(_Terminal("/quit\n"), out, person="anna")).run()
    assert out.getvalue().startswith("Companion. /help zeigt, was ich verstehe; /quit oder Strg-D beendet den Chat.")


async def _one_tick(brain, dialog, out: io.StringIO, lines: str) -> None:
    """The terminal chat's lines, then one tick of its scheduler (`_pulse_ticker`), which prints what came."""
    from app.cli import _pulse_ticker
    from bot.settings import Settings

    chat = ConsoleChat(brain, dialog, ConsoleConfig(io.StringIO(lines), out, person="tester"))
    await chat.run()
    await _pulse_ticker(Settings(idle_hold_minutes=0), brain, dialog, chat, asyncio.Event(), once=True)


async def test_the_terminal_chat_sends_the_morning_summary_at_the_persons_time(brain, dialog, clock) -> None:
    berlin = ZoneInfo("Europe/Berlin")
    clock.set(datetime(2026, 12, 1, 6, 59, tzinfo=berlin))
    out = io.StringIO()
    await _one_tick(brain, dialog, out, "/morning 07:00\n")
    assert "Good morning" not in out.getvalue()
    clock.set(datetime(2026, 12, 1, 7, 0, 30, tzinfo=berlin))
    await _one_tick(brain, dialog, out, "")
    assert out.getvalue().count("Good morning") == 1


async def test_no_reminder_interrupts_the_first_minutes_of_an_opened_terminal_chat(brain, dialog, clock) -> None:
    """Opening the chat is like a first message: the idle hold keeps the water reminder, due at 14:00 with
    nothing drunk, until the person has left the chat alone for a while."""
    from app.cli import _pulse_ticker
    from bot.settings import Settings

    berlin = ZoneInfo("Europe/Berlin")
    clock.set(datetime(2026, 12, 1, 14, 0, 30, tzinfo=berlin))
    out = io.StringIO()
    chat = ConsoleChat(brain, dialog, ConsoleConfig(io.StringIO(""), out, person="tester"))
    await chat.run()
    await _pulse_ticker(Settings(), brain, dialog, chat, asyncio.Event(), once=True)
    assert "glass of water" not in out.getvalue()
    clock.set(datetime(2026, 12, 1, 15, 30, 30, tzinfo=berlin))  # the next water slot, long after
    await _pulse_ticker(Settings(), brain, dialog, chat, asyncio.Event(), once=True)
    assert "Time for a glass of water" in out.getvalue()


async def test_the_terminal_chat_sends_no_morning_summary_when_it_is_off(brain, dialog, clock) -> None:
    berlin = ZoneInfo("Europe/Berlin")
    clock.set(datetime(2026, 12, 1, 7, 55, tzinfo=berlin))
    out = io.StringIO()
    await _one_tick(brain, dialog, out, "/morning off\n")
    clock.set(datetime(2026, 12, 1, 8, 0, 30, tzinfo=berlin))  # the rule engine's old fixed time
    await _one_tick(brain, dialog, out, "")
    assert "Morning summary is off" in out.getvalue() and "Good morning" not in out.getvalue()


@pytest.mark.slow
def test_companion_run_on_embedded_postgres_shows_water_progress() -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="crun", dir="/tmp"))
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL"}}
    env.update(COMPANION_DATA_DIR=str(data_dir), DEFAULT_LOCALE="en", DEFAULT_TIMEZONE="Europe/Berlin")
    companion = Path(sys.executable).with_name("companion")
    try:
        done = subprocess.run([str(companion), "run"], input="/water 250\n/today\n", capture_output=True,
                              text=True, env=env, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        assert "Water: 250 ml of 2,000 ml (13%)" in done.stdout
        # A second start reuses the data directory and keeps what was logged.
        again = subprocess.run([str(companion), "run"], input="/today\n", capture_output=True, text=True, env=env,
                               timeout=120, check=False)
        assert again.returncode == 0, again.stderr
        assert "Water: 250 ml of 2,000 ml" in again.stdout
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.mark.slow
def test_bad_setting_stops_the_start_with_a_clear_message() -> None:
    env = dict(os.environ, DEFAULT_TIMEZONE="Mars/Olympus", COMPANION_DATA_DIR="/tmp/never-used")
    companion = Path(sys.executable).with_name("companion")
    done = subprocess.run([str(companion), "run"], input="", capture_output=True, text=True, env=env, timeout=60,
                          check=False)
    assert done.returncode == 2
    assert "DEFAULT_TIMEZONE" in done.stderr and "IANA" in done.stderr


class Screen(io.StringIO):
    """The terminal: what was written, and a wait for a text to appear."""

    def __init__(self) -> None:
        super().__init__()
        self.changed = asyncio.Event()

    def write(self, text: str) -> int:
        self.changed.set()
        return super().write(text)

    async def shows(self, text: str, within: float = 10.0) -> None:
        async with asyncio.timeout(within):
            while text not in self.getvalue():
                self.changed.clear()
                await self.changed.wait()


async def test_the_terminal_prints_a_companion_answer_as_it_is_written_and_only_once(brain, dialog, llm,
                                                                                     fake_ollama) -> None:
    from brain.companion.agent import Companion, CompanionConfig
    from tests.fakes.ollama_server import ChunkGate, Script, call

    brain.companion = Companion(brain, llm, CompanionConfig())
    gate = ChunkGate()
    fake_ollama.script(Script(content="One, two, three, four.", chunks=4, gate=gate,
                              tool_calls=[call("create_task", title="Call mom")]),
                       Script(content="Proposed."))
    screen = Screen()
    chat = ConsoleChat(brain, dialog, ConsoleConfig(io.StringIO("count to four\n"), screen, person="tester"))
    running = asyncio.create_task(chat.run())
    await gate.allow(1)
    await screen.shows("One, t")
    assert "wo, th" not in screen.getvalue()  # the rest is not written yet
    await gate.allow(3)
    assert await running == 0
    printed = screen.getvalue()
    assert printed.count("One, two, three, four.") == 1  # printed as it came, not again by its outbox row
    assert printed.startswith("One, two, three, four.\n\nProposed.\n")
    assert "[1] Approve   [2] Reject" in printed  # the proposal after it, with its buttons
