"""/start in Telegram: the setup by buttons to its end, and a restart of the bot in the middle of it (a new
Application and dialog over the same database) that resumes where the person was."""

from __future__ import annotations

from datetime import time

from sqlalchemy import select

from bot.access import AccessPolicy
from bot.dialog import Dialog
from brain.core import Brain
from brain.onboarding.models import OnboardingState
from brain.people.models import User
from tests.telegram.conftest import make_adapter, press, replies_after, send, toast, user_id_of
from tests.telegram.fake_bot_api import FakeBotAPI


async def test_the_setup_to_its_end_by_buttons_and_a_shared_location(api: FakeBotAPI, person, brain: Brain,
                                                                     telegram) -> None:  # type: ignore[no-untyped-def]
    bea = person("Bea", language_code="de")
    (language,) = await send(api, bea, "/start")
    assert "Bea" in language.text
    assert list(language.buttons())[:2] == ["English", "Deutsch ✓"]  # asked in German, Telegram's language
    (zone,) = await press(api, bea, "English", language)
    assert "Step 2 of 4" in zone.text
    api.push(api.location(bea, 48.2082, 16.3738))
    (quiet,) = await replies_after(api, bea.id, 2, 1)
    assert "Vienna (Central European Time)" in quiet.text and "Step 3 of 4" in quiet.text
    (water,) = await press(api, bea, "9:00\u202fPM – 6:00\u202fAM", quiet)
    assert "Step 4 of 4" in water.text
    (done,) = await press(api, bea, "3,000 ml", water)
    assert "3,000 ml" in done.text and "All set." in done.text
    async with brain.transactions.read() as session:
        user = await session.get(User, await user_id_of(brain, bea))
        assert user is not None
        assert (user.locale, user.timezone, user.quiet_start, user.quiet_end) == (
            "en", "Europe/Vienna", time(21, 0), time(6, 0))
    # Each answered question lost its keyboard.
    assert len(await api.wait_for("editMessageReplyMarkup", chat_id=bea.id, count=3)) == 3


async def test_a_restart_in_the_middle_of_the_setup_resumes_it(api: FakeBotAPI, person, brain: Brain) -> None:
    alice = person()
    before = make_adapter(brain, Dialog(brain, default_locale="en",
                                        default_timezone="Europe/Berlin", access=AccessPolicy.open()), api)
    await before.start()
    try:
        (language,) = await send(api, alice, "/start")
        (zone,) = await press(api, alice, "Skip", language)
        assert "Step 2 of 4" in zone.text
    finally:
        await before.stop()

    after = make_adapter(brain, Dialog(brain, default_locale="en", default_timezone="Europe/Berlin",
                                       access=AccessPolicy.open()), api)
    await after.start()
    try:
        (welcome,) = await send(api, alice, "/start")
        assert "Welcome back" in welcome.text and "Step 2 of 4" in welcome.text
        sent = len(api.calls_of("sendMessage", alice.id))
        # A button from before the restart: told in the callback answer, nothing new in the chat.
        assert "already answered" in await toast(api, alice, "Deutsch", language)
        assert len(api.calls_of("sendMessage", alice.id)) == sent
        (quiet,) = await send(api, alice, "Wien")  # the city, typed after the restart
        assert "Vienna (Central European Time)" in quiet.text and "Step 3 of 4" in quiet.text
        (water,) = await press(api, alice, "Skip", quiet)
        (done,) = await press(api, alice, "1,500 ml", water)
        assert "All set." in done.text
    finally:
        await after.stop()
    async with brain.transactions.read() as session:
        state = await session.scalar(select(OnboardingState).where(
            OnboardingState.user_id == await user_id_of(brain, alice)))
    assert state is not None and state.step == "done"
