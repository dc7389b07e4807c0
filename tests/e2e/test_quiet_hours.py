"""/quiet: quiet hours shown and changed without running the whole setup again."""

from __future__ import annotations

from datetime import time

from sqlalchemy import select

from brain.core import Brain
from brain.people.models import Identity, User


async def quiet_hours(brain: Brain, handle: str) -> tuple[time, time]:
    async with brain.transactions.read() as session:
        user = await session.scalar(select(User).join(Identity, Identity.user_id == User.id)
                                    .where(Identity.platform_id == handle))
        assert user is not None
        return user.quiet_start, user.quiet_end


async def test_quiet_shows_and_sets_the_quiet_hours(person, brain: Brain) -> None:
    alice = person()

    async def send(line: str) -> str:
        return (await alice.send(line)).replace("\u202f", " ")  # CLDR puts a narrow space before AM/PM

    assert "Quiet hours: 10:00 PM to 7:00 AM." in await send("/quiet")
    assert "Quiet hours are now 11:00 PM to 6:30 AM" in await send("/quiet 23:00-06:30")
    assert await quiet_hours(brain, alice.handle) == (time(23, 0), time(6, 30))
    assert "Quiet hours: 11:00 PM to 6:30 AM." in await send("/pulse")


async def test_quiet_in_german_and_bad_spans_change_nothing(person, brain: Brain) -> None:
    bob = person(language="de")
    assert "Ruhezeit ist jetzt von 22:00 bis 06:00" in await bob.send("/ruhezeit von 22 bis 6")
    for bad in ("/quiet banana", "/quiet 25-7", "/quiet 22-22"):
        assert "Ruhezeit so: /ruhezeit 22-7" in await bob.send(bad)
    assert await quiet_hours(brain, bob.handle) == (time(22, 0), time(6, 0))
    assert "/help" in await bob.send("/hilfe")
