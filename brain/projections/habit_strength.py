"""Habit strength as Loop Habit Tracker computes it: an exponential moving average of daily check-ins
that a day without a check-in lets decay and a skipped day leaves alone. Pure functions; the streak
projection applies them incrementally, one stored value per streak."""

from __future__ import annotations

import math
from collections.abc import Sequence

DAILY = 1.0


def multiplier(frequency: float) -> float:
    """The share of yesterday's score that survives one day: a daily habit halves in 13 days unchecked."""
    return 0.5 ** (math.sqrt(frequency) / 13.0)


def next_score(previous: float, checked: bool, frequency: float = DAILY) -> float:
    m = multiplier(frequency)
    return previous * m + (1.0 if checked else 0.0) * (1.0 - m)


def score_over(days: Sequence[bool | None], start: float = 0.0) -> float:
    """The score after a run of daily outcomes: True checked, False missed, None skipped (no change)."""
    score = start
    for checked in days:
        if checked is not None:
            score = next_score(score, checked)
    return score


def decayed(score: float, missed_days: int, frequency: float = DAILY) -> float:
    """`score` after `missed_days` days without a check-in, in one step rather than one per day."""
    return score * multiplier(frequency) ** max(missed_days, 0)
