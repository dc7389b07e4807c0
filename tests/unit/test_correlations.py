"""Correlations as pure maths: r and p match scipy, the filters (cross-module, |r|, p, days, constant
series) drop what they should, and the sentence reads right in English and renders in German."""

from __future__ import annotations

from datetime import date, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import pearsonr

from brain.i18n import Renderer
from brain.projections.correlations import correlate, effect_percent, pearson
from brain.projections.daily_metrics import metric_modules

START = date(2026, 10, 1)
MODULES = metric_modules()


def series(values) -> dict[date, float]:  # type: ignore[no-untyped-def]
    return {START + timedelta(days=i): float(v) for i, v in enumerate(values)}


def linked(n: int, strength: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(10, 3, n)
    return x, strength * x + rng.normal(0, 3, n)


@pytest.mark.parametrize("n, strength, seed", [(14, 1.0, 1), (20, 0.2, 2), (30, -0.5, 3), (60, 0.05, 4),
                                               (90, 2.0, 5), (3, 1.0, 6), (45, -0.01, 7)])
def test_r_and_p_match_scipy_pearsonr(n: int, strength: float, seed: int) -> None:
    x, y = linked(n, strength, seed)
    r, p = pearson(list(x), list(y))
    expected = pearsonr(x, y)
    assert r == pytest.approx(expected.statistic, abs=1e-9)
    assert p == pytest.approx(expected.pvalue, abs=1e-9)


# From 14 days on, as correlations use it: with 1 or 2 degrees of freedom, p of a near-perfect line
# swings with the last bit of r (1 - 1e-16 gives p ~ 1e-8), in scipy as much as here.
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3000), st.integers(0, 12)), min_size=14, max_size=90))
def test_r_and_p_match_scipy_on_count_like_data(pairs: list[tuple[int, int]]) -> None:
    xs = [float(a) for a, _ in pairs]
    ys = [float(b) for _, b in pairs]
    if len(set(xs)) == 1 or len(set(ys)) == 1:
        return
    r, p = pearson(xs, ys)
    expected = pearsonr(xs, ys)
    assert r == pytest.approx(expected.statistic, abs=1e-9)
    assert p == pytest.approx(expected.pvalue, abs=1e-9)


def test_a_perfect_line_has_r_one_and_p_zero() -> None:
    assert pearson([1, 2, 3, 4], [2, 4, 6, 8]) == (1.0, 0.0)


def test_correlate_reports_r_and_p_of_scipy_for_a_kept_pair() -> None:
    x, y = linked(40, 1.0, 11)
    [found] = correlate({"coffee_count": series(x), "tasks_done": series(y)}, MODULES)
    expected = pearsonr(x, y)
    assert found.r == pytest.approx(expected.statistic, abs=1e-9)
    assert found.p == pytest.approx(expected.pvalue, abs=1e-9)
    assert (found.n, found.module_a, found.module_b, found.direction) == (40, "drink", "todo", "positive")


def test_pairs_within_one_module_are_dropped() -> None:
    x, y = linked(30, 1.0, 12)
    assert correlate({"water_ml": series(x), "coffee_count": series(y)}, MODULES) == []


def test_weak_correlations_are_dropped_even_when_significant() -> None:
    # With many days a weak link is significant (p < 0.05) but |r| stays under 0.3.
    x, y = linked(2000, 0.2, 13)
    r, p = pearson(list(x), list(y))
    assert abs(r) < 0.3 and p < 0.05
    assert correlate({"water_ml": series(x), "tasks_done": series(y)}, MODULES) == []


def test_strong_but_not_significant_correlations_are_dropped() -> None:
    # 14 days with r around 0.4: strong enough, but p > 0.05.
    x = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]
    y = [5, 1, 4, 2, 8, 3, 9, 1, 7, 6, 2, 9, 8, 6]
    r, p = pearson(x, y)
    assert abs(r) >= 0.3 and p >= 0.05
    assert correlate({"water_ml": series(x), "tasks_done": series(y)}, MODULES) == []


def test_fewer_than_fourteen_shared_days_are_dropped() -> None:
    x, y = linked(13, 3.0, 14)
    assert pearson(list(x), list(y))[1] < 0.05
    assert correlate({"water_ml": series(x), "tasks_done": series(y)}, MODULES) == []
    x, y = linked(14, 3.0, 14)
    assert len(correlate({"water_ml": series(x), "tasks_done": series(y)}, MODULES)) == 1


def test_only_days_present_in_both_series_count() -> None:
    x, y = linked(20, 3.0, 15)
    a = series(x)
    b = {day: v for i, (day, v) in enumerate(series(y).items()) if i % 3}  # 13 of 20 days
    assert correlate({"water_ml": a, "tasks_done": b}, MODULES) == []


def test_constant_series_are_skipped() -> None:
    x, _ = linked(30, 1.0, 16)
    assert correlate({"water_ml": series(x), "tasks_done": series([2] * 30)}, MODULES) == []


def test_results_are_sorted_by_strength_and_negative_links_say_less() -> None:
    x, y = linked(60, 1.0, 17)
    rng = np.random.default_rng(18)
    z = -0.4 * x + rng.normal(0, 3, 60)
    found = correlate({"water_ml": series(x), "tasks_done": series(y), "kcal": series(z)}, MODULES)
    assert [abs(c.r) for c in found] == sorted((abs(c.r) for c in found), reverse=True)
    negative = [c for c in found if c.direction == "negative"]
    assert negative and all(c.r < 0 and "less" in c.sentence.msgid and c.effect_percent <= 0 for c in negative)
    assert all(c.module_a != c.module_b for c in found)


def test_effect_compares_days_above_the_median_with_the_rest() -> None:
    # Coffee above its median (2) on the last two days: water there 1500 vs 1000 elsewhere.
    assert effect_percent([0, 1, 2, 3, 4], [1000, 1000, 1000, 1500, 1500]) == 50


def test_effect_falls_back_when_most_days_sit_at_the_median() -> None:
    assert effect_percent([0, 0, 0, 0, 1, 1], [10, 10, 10, 10, 13, 13]) == 30
    assert effect_percent([1, 1, 1, 1, 1, 0], [12, 12, 12, 12, 12, 10]) == 20


def test_effect_is_unknown_when_the_other_days_are_zero() -> None:
    assert effect_percent([0, 0, 1, 1], [0, 0, 2, 3]) is None


def _coffee_water(more: bool) -> dict[str, dict[date, float]]:
    coffee = [0, 1, 2, 3] * 5
    water = [1000 + (300 if c >= 2 else 0) * (1 if more else -1) + 10 * i for i, c in enumerate(coffee)]
    return {"coffee_count": series(coffee), "tasks_done": series(water)}


def test_sentence_in_english_names_both_metrics_and_the_percent() -> None:
    [found] = correlate(_coffee_water(more=True), MODULES)
    text = Renderer("en", "Europe/Berlin")(found.sentence)
    assert text == f"On days with more coffee you have {found.effect_percent}% more completed tasks."
    assert 20 <= found.effect_percent <= 40


def test_sentence_for_a_negative_link_says_less() -> None:
    [found] = correlate(_coffee_water(more=False), MODULES)
    text = Renderer("en", "Europe/Berlin")(found.sentence)
    assert text == f"On days with more coffee you have less completed tasks (−{-found.effect_percent}%)."


def test_sentence_without_a_base_names_only_the_direction() -> None:
    coffee = [0, 0, 1, 1] * 5
    tasks = [0, 0, 3, 4] * 5
    [found] = correlate({"coffee_count": series(coffee), "tasks_done": series(tasks)}, MODULES)
    assert found.effect_percent == 0
    assert Renderer("en")(found.sentence) == "On days with more coffee you have more completed tasks."


def test_sentence_renders_in_german_without_raising() -> None:
    for more in (True, False):
        [found] = correlate(_coffee_water(more=more), MODULES)
        text = Renderer("de", "Europe/Berlin")(found.sentence)
        assert text and "{" not in text
