"""/link through the dialog (platform-neutral; the Matrix side is in test_matrix_bot.py): a one-time code
joins a second identity to a person; the side without entries is absorbed, two sides with entries are
refused and nothing changes; a code works once, for ten minutes, never for its own account."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select

from brain.people.linking import normalize_code
from brain.people.models import Identity, User
from tests.e2e.conftest import Person, db_state  # noqa: F401  (fixture)


def code_in(answer: str) -> str:
    return answer.split("Your link code: ", 1)[1].split()[0]


async def owners(brain, *people: Person) -> set[object]:  # type: ignore[no-untyped-def]
    async with brain.transactions.read() as session:
        return set((await session.scalars(select(Identity.user_id).where(
            Identity.platform_id.in_([p.handle for p in people])))).all())


async def user_count(brain) -> int:  # type: ignore[no-untyped-def]
    async with brain.transactions.read() as session:
        return int(await session.scalar(select(func.count()).select_from(User)) or 0)


async def test_a_new_chat_joins_the_person_who_asked_for_the_code(person, brain) -> None:
    alice, alice_elsewhere = person(), person()
    await alice.send("/water 300")
    answer = await alice.send("/link")
    assert "within 10 minutes" in answer
    await alice_elsewhere.send("/start")  # a greeting and the setup questions are not entries
    assert "Linked" in await alice_elsewhere.send(f"/link {code_in(answer)}")
    assert "Water: 300 ml" in await alice_elsewhere.send("/today")
    assert len(await owners(brain, alice, alice_elsewhere)) == 1
    assert await user_count(brain) == 1


async def test_the_chat_entering_the_code_may_be_the_one_with_the_entries(person, brain) -> None:
    empty, full = person(), person()
    answer = await empty.send("/link")
    await full.send("/water 500")
    assert "Linked" in await full.send(f"/link {code_in(answer).lower()}")  # typed in lower case: fine
    assert "Water: 500 ml" in await empty.send("/today")
    assert len(await owners(brain, empty, full)) == 1
    assert await user_count(brain) == 1


async def test_two_people_with_entries_are_not_merged_and_nothing_changes(person, brain, db_state) -> None:  # noqa: F811
    alice, bob = person(), person()
    await alice.send("/water 250")
    await bob.send("/coffee")
    answer = await alice.send("/link")
    before = await db_state()
    refusal = await bob.send(f"/link {code_in(answer)}")
    assert "Both accounts already have entries" in refusal
    assert await db_state() == before
    assert len(await owners(brain, alice, bob)) == 2
    assert "Water: 0 ml" in await bob.send("/today")


async def test_a_code_works_once_and_for_ten_minutes(person, brain, clock) -> None:
    alice, second, third = person(), person(), person()
    code = code_in(await alice.send("/link"))
    assert "Linked" in await second.send(f"/link {code}")
    assert "not valid or has expired" in await third.send(f"/link {code}")
    code = code_in(await alice.send("/link"))
    clock.advance(timedelta(minutes=10, seconds=1))
    assert "not valid or has expired" in await third.send(f"/link {code}")
    assert len(await owners(brain, alice, third)) == 2


async def test_a_new_code_replaces_the_earlier_one_and_junk_is_refused(person) -> None:
    alice, bob = person(), person()
    first = code_in(await alice.send("/link"))
    second = code_in(await alice.send("/link"))
    assert "not valid or has expired" in await bob.send(f"/link {first}")
    assert "not valid or has expired" in await bob.send("/link hello")
    assert "Linked" in await bob.send(f"/link {second}")


async def test_ones_own_code_links_nothing(person) -> None:
    alice = person()
    code = code_in(await alice.send("/link"))
    assert "already belongs to that account" in await alice.send(f"/link {code}")


def test_codes_are_read_leniently() -> None:
    assert normalize_code(" abcd-efgh ") == "ABCDEFGH"
    assert normalize_code("ABCD EFGH") == "ABCDEFGH"
    assert normalize_code("ABCD-EFG0") is None  # 0 is not in the alphabet
    assert normalize_code("ABC") is None
