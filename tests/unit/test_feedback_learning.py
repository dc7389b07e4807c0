"""What the feedback loop decides from outcome statistics, as pure functions: move a rule later after
repeated dismissals at an hour, back off after a very low action rate, within the limits (+180 min, never
into quiet hours, factor 4 at most, one change per rule per two weeks)."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from brain.feedback.learning import (
    AdaptationDecision,
    RuleSchedule,
    Tuning,
    combine,
    decide_adaptations,
    fits,
    send_hours,
)
from brain.feedback.models import BACKED_OFF, MOVED_LATER, RuleAdaptation
from brain.feedback.outcomes import HourStats, RuleStats

NOW = datetime(2026, 11, 30, 3, tzinfo=UTC)
QUIET = (time(22), time(7))
STREAK = RuleSchedule(times=(time(18),))
EVENING = RuleSchedule(times=(time(21),))
WATER = RuleSchedule(times=(time(8),), window_end=time(21))


def stats(rule: str, by_hour: dict[int, tuple[int, int, int]]) -> dict[str, RuleStats]:
    hours = {h: HourStats(*v) for h, v in by_hour.items()}
    return {rule: RuleStats(rule, nudges=sum(h.nudges for h in hours.values()),
                            acted=sum(h.acted for h in hours.values()),
                            dismissed=sum(h.dismissed for h in hours.values()), by_hour=hours)}


def decide(rule_stats: dict[str, RuleStats], schedules: dict[str, RuleSchedule], *,
           tunings: dict[str, Tuning] | None = None,
           last_change: dict[str, datetime] | None = None) -> list[AdaptationDecision]:
    return decide_adaptations(rule_stats, schedules, tunings or {}, last_change or {}, QUIET, NOW)


def test_three_dismissals_at_an_hour_move_the_rule_an_hour_later() -> None:
    (decision,) = decide(stats("streak", {18: (4, 1, 3)}), {"streak": STREAK})
    assert decision.change == MOVED_LATER and decision.local_hour == 18
    assert decision.before == Tuning() and decision.after == Tuning(offset_minutes=60)
    assert decision.row_values == Tuning(offset_minutes=60)


def test_two_dismissals_or_a_low_share_are_not_enough() -> None:
    assert decide(stats("streak", {18: (2, 0, 2)}), {"streak": STREAK}) == []
    # 3 of 6 dismissed is a share of 0.5 < 0.6; 3 of 6 acted is a fine action rate.
    assert decide(stats("streak", {18: (6, 3, 3)}), {"streak": STREAK}) == []


def test_dismissals_at_an_hour_the_rule_no_longer_sends_at_do_not_count() -> None:
    moved = {"streak": Tuning(offset_minutes=60)}
    assert decide(stats("streak", {18: (3, 0, 3)}), {"streak": STREAK}, tunings=moved) == []
    (again,) = decide(stats("streak", {19: (3, 0, 3)}), {"streak": STREAK}, tunings=moved)
    assert again.change == MOVED_LATER and again.after.offset_minutes == 120


def test_moving_stops_at_180_minutes() -> None:
    at_max = {"streak": Tuning(offset_minutes=180)}
    decisions = decide(stats("streak", {21: (3, 0, 3)}), {"streak": STREAK}, tunings=at_max)
    assert all(d.change != MOVED_LATER for d in decisions)


def test_a_rule_is_never_moved_into_quiet_hours() -> None:
    assert not fits(EVENING, 60, QUIET)
    decisions = decide(stats("evening", {21: (3, 0, 3)}), {"evening": EVENING})
    assert all(d.change != MOVED_LATER for d in decisions)
    assert fits(STREAK, 180, QUIET) and not fits(STREAK, 240, QUIET)


def test_interval_rule_moves_its_start_within_its_window() -> None:
    assert send_hours(WATER, Tuning()) == frozenset(range(8, 22))
    assert send_hours(WATER, Tuning(offset_minutes=120)) == frozenset(range(10, 22))
    (decision,) = decide(stats("water", {8: (3, 0, 3), 14: (5, 4, 0)}), {"water": WATER})
    assert decision.change == MOVED_LATER and decision.after.offset_minutes == 60


def test_very_low_action_rate_backs_off_to_every_second_then_fourth_slot() -> None:
    low = stats("water", {9: (3, 0, 1), 12: (3, 0, 0), 15: (2, 1, 0)})  # 8 nudges, 1 acted: 0.125
    (first,) = decide(low, {"water": WATER})
    assert first.change == BACKED_OFF and first.after == Tuning(backoff_factor=2)
    assert first.row_values == Tuning(backoff_factor=2)
    (second,) = decide(low, {"water": WATER}, tunings={"water": Tuning(backoff_factor=2)})
    assert second.after.backoff_factor == 4 and second.row_values.backoff_factor == 2
    assert decide(low, {"water": WATER}, tunings={"water": Tuning(backoff_factor=4)}) == []


def test_no_back_off_with_few_nudges_or_a_fair_action_rate() -> None:
    assert decide(stats("water", {9: (5, 0, 0)}), {"water": WATER}) == []
    assert decide(stats("water", {9: (10, 2, 0)}), {"water": WATER}) == []  # 0.2


def test_a_recently_changed_or_undone_rule_waits_two_weeks() -> None:
    rule_stats = stats("streak", {18: (3, 0, 3)})
    recent = {"streak": NOW - timedelta(days=3)}
    assert decide(rule_stats, {"streak": STREAK}, last_change=recent) == []
    old = {"streak": NOW - timedelta(days=15)}
    assert len(decide(rule_stats, {"streak": STREAK}, last_change=old)) == 1


def test_moving_later_is_preferred_to_backing_off() -> None:
    (decision,) = decide(stats("streak", {18: (6, 0, 6)}), {"streak": STREAK})
    assert decision.change == MOVED_LATER


def _row(change: str, offset: int = 0, factor: int = 1, active: bool = True) -> RuleAdaptation:
    return RuleAdaptation(rule="water", change=change, offset_minutes=offset, backoff_factor=factor, active=active)


def test_active_adaptations_add_up_and_undone_ones_do_not_count() -> None:
    rows = [_row(MOVED_LATER, 60), _row(MOVED_LATER, 60), _row(BACKED_OFF, factor=2),
            _row(MOVED_LATER, 60, active=False)]
    assert combine(rows) == Tuning(offset_minutes=120, backoff_factor=2)
    assert combine([_row(BACKED_OFF, factor=2)] * 3) == Tuning(backoff_factor=4)
    assert combine([]) == Tuning()
