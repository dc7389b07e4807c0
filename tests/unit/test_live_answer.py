"""The pacing of an answer shown while it is written (`bot.delivery.stream.LiveAnswer`), on a clock moved by the
test: first shown after `first_after`, edited at most once every `every`, split into messages as the platform
splits it, held by flood control, and given up when a show's outcome is unknown."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from bot.delivery.stream import GRACE_S, STEP_S, LiveAnswer, Pace
from bot.delivery.transport import ChatHeld, OutcomeUnknown, Outgoing, SendFailure

LIMIT = 10  # characters per message of the fake platform


class Time:
    """A clock that moves only when the test says so; `sleep` waits for it."""

    def __init__(self) -> None:
        self.now = 0.0
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sleepers.append((self.now + seconds, future))
        await future

    async def advance(self, seconds: float) -> None:
        self.now += seconds
        for deadline, future in list(self._sleepers):
            if deadline <= self.now + 1e-9 and not future.done():
                future.set_result(None)
        await settle()


async def settle() -> None:
    """Lets every task that can run do so (the fake platform answers at once)."""
    for _ in range(50):
        await asyncio.sleep(0)


class Platform:
    """Records shows and edits; `fail_next` makes the next request raise."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, str]] = []  # (what, message id, text)
        self.fail_next: SendFailure | None = None
        self._ids = 0

    def drafts(self, text: str) -> Sequence[str]:
        return [text[i:i + LIMIT] for i in range(0, len(text), LIMIT)] or [""]

    def _fail(self) -> None:
        failure, self.fail_next = self.fail_next, None
        if failure is not None:
            raise failure

    async def show(self, chat_id: str, text: str) -> str:
        self._fail()
        self._ids += 1
        self.requests.append(("show", str(self._ids), text))
        return str(self._ids)

    async def revise(self, chat_id: str, message_id: str, text: str) -> None:
        self._fail()
        self.requests.append(("edit", message_id, text))

    async def finish(self, outgoing: Outgoing, message_id: str, part: object) -> None:
        raise AssertionError("the sender finishes, not the live answer")

    async def retract(self, chat_id: str, message_id: str) -> None:
        raise AssertionError("the sender retracts, not the live answer")


def live(platform: Platform, time: Time) -> LiveAnswer:
    return LiveAnswer(platform, "chat", pace=Pace(first_after=1.0, every=1.0), clock=time.clock, sleep=time.sleep)


async def test_nothing_is_shown_before_the_first_second_then_all_that_was_written() -> None:
    platform, time = Platform(), Time()
    answer = live(platform, time)
    await answer.piece("Hel")
    await time.advance(0.5)
    await answer.piece("lo")
    await time.advance(0.4)
    assert platform.requests == []
    await time.advance(0.1)
    assert platform.requests == [("show", "1", "Hello")]


async def test_the_answer_is_edited_at_most_once_a_second() -> None:
    platform, time = Platform(), Time()
    answer = live(platform, time)
    await answer.piece("Hi")
    await time.advance(1.0)
    for piece in (" a", " b", " c"):
        await answer.piece(piece)
        await time.advance(0.3)
    assert platform.requests == [("show", "1", "Hi")]  # 0.9 s after the show: no edit yet
    await time.advance(0.1)
    assert platform.requests[1:] == [("edit", "1", "Hi a b c")]  # the three pieces in one edit
    await time.advance(5.0)
    assert len(platform.requests) == 2  # nothing new written: no edit


async def test_a_short_answer_is_never_shown_early() -> None:
    platform, time = Platform(), Time()
    answer = live(platform, time)
    await answer.piece("Done.")
    await time.advance(0.5)
    assert await answer.close() is None
    assert platform.requests == []


async def test_closing_waits_until_one_more_edit_is_allowed_and_says_what_shows_the_answer() -> None:
    platform, time = Platform(), Time()
    answer = live(platform, time)
    await answer.piece("Hello")
    await time.advance(1.0)
    await time.advance(0.25)
    closing = asyncio.ensure_future(answer.close())
    await settle()
    assert not closing.done() and time.slept[-1] == 0.75  # the finished answer may follow 1 s after the show
    await time.advance(0.75)
    shown = await closing
    assert shown is not None and shown.ids == ["1"] and shown.texts == ["Hello"]


async def test_a_long_answer_is_shown_as_one_message_per_part() -> None:
    platform, time = Platform(), Time()
    answer = live(platform, time)
    await answer.piece("0123456789abc")
    await time.advance(1.0)
    assert platform.requests == [("show", "1", "0123456789"), ("show", "2", "abc")]
    await answer.piece("def")
    await time.advance(1.0)
    assert platform.requests[2:] == [("edit", "2", "abcdef")]  # the finished first part is left alone


async def test_flood_control_on_an_edit_holds_the_drafts_for_its_wait() -> None:
    platform, time = Platform(), Time()
    answer = live(platform, time)
    await answer.piece("Hi")
    await time.advance(1.0)
    platform.fail_next = ChatHeld(3.0)
    await answer.piece(" a")
    await time.advance(1.0)  # this edit is refused with "retry after 3 s"
    await answer.piece(" b")
    await time.advance(2.9)
    assert platform.requests == [("show", "1", "Hi")]
    await time.advance(0.1)
    assert platform.requests[1:] == [("edit", "1", "Hi a b")]


async def test_a_show_whose_outcome_is_unknown_ends_the_drafts_and_links_nothing() -> None:
    platform, time = Platform(), Time()
    answer = live(platform, time)
    platform.fail_next = OutcomeUnknown("timed out")
    await answer.piece("Hello")
    await time.advance(1.0)
    await answer.piece(" world")
    await time.advance(2.0)
    assert platform.requests == []
    assert await answer.close() is None  # the finished answer goes as a message of its own


async def test_the_models_stream_is_read_in_short_steps_until_the_answer_is_shown_then_once_per_edit() -> None:
    platform, time = Platform(), Time()
    answer = live(platform, time)
    await answer.piece("Hi")
    assert answer.rest() == pytest.approx(STEP_S)  # not shown yet: a short answer goes out at most a step late
    await time.advance(0.95)
    assert answer.rest() == pytest.approx(0.05)  # the last step ends when the answer is due to be shown
    await time.advance(0.05)
    await answer.piece(" there")
    assert platform.requests == []  # the writer waits for the read that is due now...
    assert answer.rest() == pytest.approx(1.0)  # ...which hands it the draft; the next is due a second later
    await settle()
    assert platform.requests == [("show", "1", "Hi there")]  # without a wake-up of the writer's own
    await time.advance(0.4)
    assert answer.rest() == pytest.approx(0.6)  # shown: the stream rests until the next edit is due
    await time.advance(0.6)
    await answer.piece("!")
    answer.rest()
    await settle()
    assert platform.requests[1:] == [("edit", "1", "Hi there!")]
    closing = asyncio.ensure_future(answer.close())
    await settle()
    assert answer.rest() == 0.0  # closed: read what is left at once
    await time.advance(1.0)
    await closing


async def test_while_the_model_writes_no_words_yet_the_stream_is_read_in_short_steps_too() -> None:
    platform, time = Platform(), Time()
    answer = live(platform, time)
    assert answer.rest() == pytest.approx(STEP_S)  # a thinking model: lines without words
    closing = asyncio.ensure_future(answer.close())
    await settle()
    assert answer.rest() == 0.0 and await closing is None  # closed: read what is left at once


async def test_a_paced_answer_is_shown_a_moment_after_its_due_time_when_no_read_comes() -> None:
    platform, time = Platform(), Time()
    answer = live(platform, time)
    await answer.piece("Hi")
    answer.rest()  # the stream is paced, then the model pauses: no read comes at the due time
    await settle()
    await time.advance(1.0)
    assert platform.requests == []
    await time.advance(GRACE_S)
    assert platform.requests == [("show", "1", "Hi")]


async def test_nothing_new_at_the_due_time_lets_the_stream_read_on() -> None:
    platform, time = Platform(), Time()
    answer = live(platform, time)
    await answer.piece("Hi")
    answer.rest()
    await time.advance(1.0 + GRACE_S)
    assert platform.requests == [("show", "1", "Hi")]
    await time.advance(1.0)
    assert answer.rest() == 0.0  # the edit is due and nothing is new: the writer waits for the next piece


async def test_the_models_stream_does_not_rest_while_flood_control_holds_the_chat() -> None:
    platform, time = Platform(), Time()
    answer = live(platform, time)
    await answer.piece("Hi")
    await time.advance(1.0)
    platform.fail_next = ChatHeld(30, "flood")
    await answer.piece(" there")
    await time.advance(1.0)
    assert answer.rest() == 0.0
