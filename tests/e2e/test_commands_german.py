"""German command words people type for lists and logs (plurals, everyday words) reach the commands."""

from __future__ import annotations

from collections.abc import Callable

from tests.e2e.conftest import Person


async def test_german_plurals_and_everyday_words_reach_their_commands(person: Callable[..., Person]) -> None:
    bea = person(language="de")
    assert "Mittagessen eingetragen: Salat" in await bea.send("/mahlzeit mittag Salat 400 kcal")
    assert "eingetragen" in await bea.send("/termin Zahnarzt morgen 14:00")
    assert "Zahnarzt" in await bea.send("/termine")
    assert "Zahnarzt" in await bea.send("/kalender")
    assert "Café Luna" in await bea.send("/ort Café Luna")
    assert "Café Luna" in await bea.send("/orte")
