"""/week from an inbound line to the outbox: a reply that carries the chart as PNG bytes, which the
console saves to a file and points to."""

from __future__ import annotations

import io
import struct
from collections.abc import Callable
from pathlib import Path

from adapters.console.chat import ConsoleChat, ConsoleConfig
from bot.dialog import Dialog
from brain.core import Brain
from tests.e2e.conftest import Person

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


async def test_week_replies_with_a_chart_of_the_last_seven_days(person: Callable[..., Person]) -> None:
    alice = person()
    await alice.send("/water 500")
    assert (await alice.send("/week")).splitlines() == [  # the numbers in words too, from the first day logged
        "Your last 7 days", "Water: 500 ml a day on average over 1 day; goal reached on 0 days.", "Tasks done: 0"]
    [reply] = alice.last
    assert reply.image_png is not None and reply.image_png.startswith(PNG_SIGNATURE)
    assert struct.unpack(">II", reply.image_png[16:24]) == (1000, 700)


async def test_woche_is_the_german_alias(person: Callable[..., Person]) -> None:
    bob = person(language="de")
    assert (await bob.send("/woche")).splitlines() == ["Deine letzten 7 Tage",
                                                      "In diesen sieben Tagen ist noch nichts eingetragen."]
    [reply] = bob.last
    assert reply.image_png is not None and reply.image_png.startswith(PNG_SIGNATURE)


async def test_console_saves_the_week_chart_and_prints_its_path(brain: Brain, dialog: Dialog, tmp_path: Path) -> None:
    out = io.StringIO()
    config = ConsoleConfig(io.StringIO("/week\n"), out, person="tester", pictures_dir=tmp_path)
    chat = ConsoleChat(brain, dialog, config)
    assert await chat.run() == 0
    [(saved, content)] = pictures_in(tmp_path)
    assert f"[picture: {saved}]" in out.getvalue()
    assert content.startswith(PNG_SIGNATURE)


def pictures_in(folder: Path) -> list[tuple[Path, bytes]]:
    return [(path, path.read_bytes()) for path in folder.glob("*.png")]
