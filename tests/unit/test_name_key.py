"""`name_key`: the spellings of one name meet ("Jürgen", "Juergen", "Jurgen"; "Straße", "Strasse"; "Café", "cafe"),
and a key is its own key, so folding both sides of a comparison, or folding twice, agrees."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brain.names import name_key

UMLAUTS = {"ä": ("ae", "a"), "ö": ("oe", "o"), "ü": ("ue", "u"), "Ä": ("Ae", "A"), "Ö": ("Oe", "O"), "Ü": ("Ue", "U"),
           "ß": ("ss",)}


@pytest.mark.parametrize(("spellings"), [
    ("Jürgen", "Juergen", "Jurgen", "JÜRGEN", "jurgen"),
    ("Straße", "Strasse", "STRASSE"),
    ("Café  Luna", "cafe luna", " CAFÉ Luna "),
    ("Bäckerei Müller", "Baeckerei Mueller", "backerei muller"),
    ("Øresund", "Oeresund", "Oresund"),
    ("Łódź", "Lodz"),
])
def test_spellings_of_one_name_share_a_key(spellings: tuple[str, ...]) -> None:
    assert len({name_key(spelling) for spelling in spellings}) == 1


def test_different_names_keep_different_keys() -> None:
    assert len({name_key(n) for n in ("Jürgen", "Jörg", "Anna", "Anne", "Hanna", "Bern", "Berlin")}) == 7


@given(st.text(alphabet=st.sampled_from("abcdeghlmnorstuzABJMSäöüÄÖÜß -"), max_size=20), st.data())
def test_an_umlaut_written_as_a_digraph_or_left_off_has_the_same_key(name: str, data: st.DataObject) -> None:
    plain = "".join(data.draw(st.sampled_from(UMLAUTS[c])) if c in UMLAUTS else c for c in name)
    assert name_key(plain) == name_key(name)


@given(st.text(max_size=30))
def test_a_key_is_its_own_key(name: str) -> None:
    assert name_key(name_key(name)) == name_key(name)
