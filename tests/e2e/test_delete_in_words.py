"""Something to delete named by its words alone, without a model: what it may be among the person's own entries is
offered a button each, and nothing is deleted before the tap. (The clock says Monday 2026-11-30, 08:30 in Berlin.)"""

from __future__ import annotations

from sqlalchemy import select

from brain.modules.food.models import Meal
from brain.modules.todo.models import Task


async def test_the_entries_a_word_names_are_offered_and_only_the_one_tapped_is_deleted(
        person, brain, db_state) -> None:
    bea = person(language="de")
    await bea.send("Pizza zum Abendessen")
    await bea.send("/aufgabe Pizza bestellen")
    before = await db_state()
    asked = await bea.send("lösche die Pizza")
    assert asked.startswith("Was soll ich löschen?")
    assert list(bea.buttons()) == ["🍽 Abendessen: Pizza", "✓ Aufgabe: Pizza bestellen"]
    assert await db_state() == before  # nothing deleted by the words alone
    assert "gelöscht" in await bea.press(bea.buttons()["🍽 Abendessen: Pizza"])
    async with brain.transactions.read() as s:
        assert (await s.scalars(select(Meal))).all() == []
        assert [t.title for t in (await s.scalars(select(Task))).all()] == ["Pizza bestellen"]


async def test_one_entry_is_offered_alone_and_nothing_found_or_named_says_so(person, brain, db_state) -> None:
    alice, bob = person(), person()
    await alice.send("/event Dentist tomorrow 10:00")
    await bob.send("pizza for dinner")
    assert (await alice.send("delete the dentist")).startswith("Delete this?")
    assert list(alice.buttons()) == ["📅 Dentist, Tue, Dec 1"]
    assert "Deleted Dentist." in await alice.press(alice.buttons()["📅 Dentist, Tue, Dec 1"])
    before = await db_state()
    # Another person's pizza is not hers to see or delete.
    assert (await alice.send("delete the pizza")).startswith("I found nothing called “pizza” to delete")
    assert "To delete something" in await alice.send("delete it")  # names nothing: how each kind is deleted
    assert await db_state() == before
