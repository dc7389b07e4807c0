"""Amounts as people type them, thousands separators included: the bot writes "2,000 ml" (en) and "2.000 ml" (de),
and whatever it writes must read back as the same amount."""

from __future__ import annotations

import pytest
from babel.numbers import format_decimal
from hypothesis import given
from hypothesis import strategies as st

from bot.parsing.amounts import parse_number, parse_volume_ml


@pytest.mark.parametrize("text, ml", [
    ("1,500 ml", 1500), ("1,500ml", 1500), ("1,000ml", 1000), ("2.000 ml", 2000), ("2.000", 2000),
    ("1.500", 1500), ("12,500", 12500), ("1.500,5 ml", 1500), ("1,500.5ml", 1500),
])
def test_thousands_separators_group_digits(text: str, ml: int) -> None:
    assert parse_volume_ml(text) == ml


@pytest.mark.parametrize("text, ml", [
    ("0,5 l", 500), ("1.5 l", 1500), ("1,5l", 1500), ("0.5", 500), ("1,50", 1500), ("0,500 l", 500),
    ("250", 250), ("33cl", 330),
])
def test_decimals_stay_decimals(text: str, ml: int) -> None:
    assert parse_volume_ml(text) == ml


@pytest.mark.parametrize("text, ml", [("1.500 l", 1_500_000), ("2,500 l", 2_500_000)])
def test_three_digits_after_a_separator_are_thousands_even_in_litres(text: str, ml: int) -> None:
    assert parse_volume_ml(text) == ml  # far too much: the drink tool refuses it in words


@pytest.mark.parametrize("text", ["1.500.5", "1..5", "-5", "1,5,0", "9" * 400, "lots", ""])
def test_what_is_no_number_is_none(text: str) -> None:
    assert parse_number(text) is None
    assert parse_volume_ml(text) is None


@pytest.mark.parametrize("text, number", [("250,5", 250.5), ("1.200", 1200), ("1,200", 1200), ("0,5", 0.5),
                                          ("1.500.000", 1_500_000), ("1.200,75", 1200.75)])
def test_parse_number(text: str, number: float) -> None:
    assert parse_number(text) == number


@given(st.integers(min_value=1, max_value=10**9), st.sampled_from(["en", "de"]))
def test_amounts_the_bot_writes_read_back_the_same(ml: int, locale: str) -> None:
    written = format_decimal(ml, locale=locale)
    assert parse_volume_ml(f"{written} ml") == ml
    assert parse_volume_ml(f"{written}ml") == ml
    assert parse_number(written) == ml
