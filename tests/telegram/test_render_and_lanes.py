"""Pure parts of the adapter: rendering (escaping, splitting at 4096 UTF-16 units, captions, keyboards),
update conversion, when a pressed keyboard goes, and the per-chat lanes."""

from __future__ import annotations

import asyncio

from hypothesis import given
from hypothesis import strategies as st
from telegram import Bot, Update

from adapters.telegram.adapter import keyboard_is_spent
from adapters.telegram.inbound import Press, message_inbound, press_inbound
from adapters.telegram.render import MAX_CAPTION, MAX_TEXT, escape, render, split_text, utf16_length
from bot.inbound import Inbound
from bot.ordering import ChatLanes
from bot.updates import TokenState
from brain.outbox.models import Button, Outbound
from tests.telegram.fake_bot_api import TOKEN, FakeBotAPI, Person

BOT = Bot(TOKEN)


@given(st.text(alphabet=st.sampled_from("ab <&>\n😀ä"), max_size=12000), st.sampled_from([MAX_TEXT, MAX_CAPTION, 50]))
def test_split_parts_fit_after_escaping_and_keep_the_text(text: str, limit: int) -> None:
    parts = split_text(text, limit)
    assert all(utf16_length(escape(p)) <= limit for p in parts)
    assert "".join(parts).replace("\n", "") == text.replace("\n", "")


def test_a_long_text_is_cut_after_a_line_break() -> None:
    lines = "\n".join(f"line {n:04d} " + "x" * 40 for n in range(200))
    first, *_ = split_text(lines)
    assert first.endswith("x") and len(first) <= MAX_TEXT


def test_escaping_keeps_quotes_readable() -> None:
    assert escape('<b>"Tom" & Jerry</b>') == '&lt;b&gt;"Tom" &amp; Jerry&lt;/b&gt;'


def test_buttons_go_on_the_last_part_and_oversized_tokens_are_left_out() -> None:
    buttons = [[Button(label="Yes", token="tok1234567"), Button(label="Bad", token="x" * 65)]]
    parts = render(Outbound(text="a" * 5000, buttons=buttons))
    assert [p.keyboard for p in parts] == [[], [[Button(label="Yes", token="tok1234567")]]]


def test_a_picture_takes_the_first_1024_characters_as_its_caption() -> None:
    parts = render(Outbound(text="word " * 300, image_png=b"png", buttons=[[Button(label="Ok", token="tok1234567")]]))
    assert parts[0].photo == b"png" and len(parts[0].plain) <= MAX_CAPTION
    assert parts[1].photo is None and parts[1].keyboard
    assert (parts[0].plain + parts[1].plain).split() == ("word " * 300).split()
    (single,) = render(Outbound(text="Your last 7 days", image_png=b"png"))
    assert single.plain == "Your last 7 days" and single.photo == b"png"


def test_messages_become_inbounds() -> None:
    api, alice = FakeBotAPI(), Person(1, "Alice", "de")
    text = Update.de_json(api.text(alice, "/water@companion_test_bot 250") | {"update_id": 1}, BOT)
    assert text is not None and text.message is not None
    inbound = message_inbound(text.message)
    assert inbound is not None
    assert (inbound.platform, inbound.platform_user_id, inbound.chat_id, inbound.is_command) == (
        "telegram", "1", "1", True)
    assert inbound.language_code == "de" and inbound.display_name == "Alice" and inbound.location is None
    where = Update.de_json(api.location(alice, 52.5, 13.4) | {"update_id": 2}, BOT)
    assert where is not None and where.message is not None
    located = message_inbound(where.message)
    assert located is not None and located.location == (52.5, 13.4) and located.text is None


def test_a_button_press_becomes_an_action() -> None:
    update = Update.de_json({"update_id": 3, "callback_query": {
        "id": "cq1", "chat_instance": "ci", "data": "tok1234567", "from": {"id": 5, "is_bot": False, "first_name": "B"},
        "message": {"message_id": 77, "date": 0, "chat": {"id": -9, "type": "group", "title": "G"}}}}, BOT)
    assert update is not None and update.callback_query is not None
    press = press_inbound(update.callback_query)
    assert press is not None
    assert (press.inbound.action, press.inbound.chat_id, press.inbound.message_id) == ("tok1234567", "-9", "cb:cq1")
    assert (press.chat_type, press.message_id) == ("group", 77)


def test_when_a_pressed_keyboard_goes() -> None:
    def press(chat_type: str) -> Press:
        return Press(Inbound("telegram", "1", "1", "cb:1", action="tok1234567"), chat_type, 5)

    assert keyboard_is_spent(TokenState(exists=False), press("private"))
    assert keyboard_is_spent(TokenState(exists=True, owned=True, open=True, single_use=True), press("private"))
    assert not keyboard_is_spent(TokenState(exists=True, owned=True, open=True, single_use=False), press("private"))
    assert keyboard_is_spent(TokenState(exists=True, owned=True, open=False, single_use=False), press("private"))
    assert not keyboard_is_spent(TokenState(exists=True, owned=False, open=True), press("group"))
    assert keyboard_is_spent(TokenState(exists=True, owned=False, open=True), press("private"))


async def test_lanes_keep_each_keys_order_and_let_other_keys_pass() -> None:
    lanes = ChatLanes(limit=4)
    gate = asyncio.Event()
    done: list[str] = []

    async def work(name: str, wait: bool = False) -> None:
        if wait:
            await gate.wait()
        done.append(name)

    first = asyncio.create_task(lanes.run("a", work("a1", wait=True)))
    second = asyncio.create_task(lanes.run("a", work("a2")))
    other = asyncio.create_task(lanes.run("b", work("b1")))
    await other
    assert done == ["b1"] and lanes.busy("a")
    gate.set()
    await asyncio.gather(first, second)
    assert done == ["b1", "a1", "a2"] and not lanes.busy("a")
