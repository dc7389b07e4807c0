"""The pure slot planner: DST weeks in Berlin (spring forward) and New York (fall back), local times that do not
exist or exist twice, missed slots inside and outside the grace window, no burst after downtime, quiet hours,
pause and weekdays; and, as properties, at most one push per local day however the scheduler's runs fall."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from brain.i18n import Renderer
from brain.schedules.slots import LocalSchedule, Slot, next_occurrence, occurrences, plan
from brain.schedules.weekdays import WORKDAYS, describe_weekdays, parse_weekdays

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")
GRACE = timedelta(hours=2)
EIGHT = LocalSchedule(time(8, 0))


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]


def drive(schedule: LocalSchedule, zone: ZoneInfo, start: datetime, end: datetime, step: timedelta,
          **kwargs: object) -> list[tuple[datetime, Slot]]:
    """Runs the planner like the scheduler would (every `step`), carrying its bookkeeping; returns the sends."""
    since, now, sent = start, start, []
    while now <= end:
        decided = plan(schedule, zone, since=since, now=now, grace=GRACE, **kwargs)  # type: ignore[arg-type]
        if decided.send is not None:
            sent.append((now, decided.send))
        since = max(since, decided.decided_until)
        assert decided.next_due > now
        now += step
    return sent


def test_berlin_spring_forward_week_sends_eight_oclock_once_a_day_at_the_right_instant() -> None:
    sent = drive(EIGHT, BERLIN, utc(2026, 3, 26), utc(2026, 4, 2), timedelta(minutes=1))
    assert [s.key for _, s in sent] == [f"2026-{d}T08:00" for d in
                                         ("03-26", "03-27", "03-28", "03-29", "03-30", "03-31", "04-01")]
    # CET until Saturday (07:00 UTC), CEST from Sunday the 29th (06:00 UTC); each sent in the minute it is due.
    assert [run for run, _ in sent] == [utc(2026, 3, 26, 7), utc(2026, 3, 27, 7), utc(2026, 3, 28, 7),
                                        utc(2026, 3, 29, 6), utc(2026, 3, 30, 6), utc(2026, 3, 31, 6),
                                        utc(2026, 4, 1, 6)]
    assert all(s.local.hour == 8 and s.local.minute == 0 for _, s in sent)


def test_new_york_fall_back_week_sends_eight_oclock_once_a_day_at_the_right_instant() -> None:
    sent = drive(EIGHT, NEW_YORK, utc(2026, 10, 29), utc(2026, 11, 5), timedelta(minutes=1))
    assert [run for run, _ in sent] == [utc(2026, 10, 29, 12), utc(2026, 10, 30, 12), utc(2026, 10, 31, 12),
                                        utc(2026, 11, 1, 13), utc(2026, 11, 2, 13), utc(2026, 11, 3, 13),
                                        utc(2026, 11, 4, 13)]


def test_a_time_in_the_spring_forward_gap_happens_once_right_after_the_gap() -> None:
    sent = drive(LocalSchedule(time(2, 30)), BERLIN, utc(2026, 3, 28), utc(2026, 3, 31), timedelta(minutes=1))
    assert [(run, s.key) for run, s in sent] == [
        (utc(2026, 3, 28, 1, 30), "2026-03-28T02:30"),
        (utc(2026, 3, 29, 1, 30), "2026-03-29T02:30"),  # 03:30 CEST: 02:30 does not exist that night
        (utc(2026, 3, 30, 0, 30), "2026-03-30T02:30"),
    ]


def test_a_time_that_exists_twice_at_fall_back_happens_once_at_its_first_instant() -> None:
    sent = drive(LocalSchedule(time(1, 30)), NEW_YORK, utc(2026, 10, 31, 12), utc(2026, 11, 2, 12),
                 timedelta(minutes=1))
    assert [(run, s.key) for run, s in sent] == [
        (utc(2026, 11, 1, 5, 30), "2026-11-01T01:30"),  # 01:30 EDT; the second 01:30 (EST) is not a new slot
        (utc(2026, 11, 2, 6, 30), "2026-11-02T01:30"),
    ]


def test_a_slot_missed_while_down_is_sent_once_late_inside_the_grace_window() -> None:
    decided = plan(EIGHT, BERLIN, since=utc(2026, 11, 30, 6), now=utc(2026, 11, 30, 8, 30), grace=GRACE)
    assert decided.send is not None and decided.send.key == "2026-11-30T08:00"  # 09:30 local, 90 min late
    assert decided.missed == ()
    assert decided.decided_until == utc(2026, 11, 30, 7)
    assert decided.next_due == utc(2026, 12, 1, 7)


def test_a_slot_missed_beyond_the_grace_window_is_dropped() -> None:
    decided = plan(EIGHT, BERLIN, since=utc(2026, 11, 30, 6), now=utc(2026, 11, 30, 9, 30), grace=GRACE)
    assert decided.send is None
    assert [(m.slot.key, m.reason) for m in decided.missed] == [("2026-11-30T08:00", "late")]
    assert decided.decided_until == utc(2026, 11, 30, 7)


def test_days_of_downtime_end_in_at_most_one_push_never_a_burst() -> None:
    hourly = LocalSchedule(time(8, 0))
    decided = plan(hourly, BERLIN, since=utc(2026, 11, 26, 8), now=utc(2026, 11, 30, 7, 30), grace=GRACE)
    assert decided.send is not None and decided.send.key == "2026-11-30T08:00"
    assert [m.reason for m in decided.missed] == ["late", "late", "late"]  # Fri, Sat, Sun
    # Two slots inside the grace window (a grace of a day and a half): only the newest goes out.
    decided = plan(hourly, BERLIN, since=utc(2026, 11, 28, 8), now=utc(2026, 11, 30, 7, 30),
                   grace=timedelta(hours=36))
    assert decided.send is not None and decided.send.key == "2026-11-30T08:00"
    assert [(m.slot.key, m.reason) for m in decided.missed] == [("2026-11-29T08:00", "coalesced")]


def test_a_slot_inside_quiet_hours_waits_for_their_end_within_the_grace_window() -> None:
    early = LocalSchedule(time(6, 30))
    quiet = (time(22, 0), time(7, 0))
    at_slot = plan(early, BERLIN, since=utc(2026, 11, 30, 5), now=utc(2026, 11, 30, 5, 30), grace=GRACE, quiet=quiet)
    assert at_slot.send is None and at_slot.missed == ()
    assert at_slot.next_due == utc(2026, 11, 30, 6)  # 07:00 local
    assert at_slot.decided_until == utc(2026, 11, 30, 5)
    at_end = plan(early, BERLIN, since=at_slot.decided_until, now=at_slot.next_due, grace=GRACE, quiet=quiet)
    assert at_end.send is not None and at_end.send.key == "2026-11-30T06:30"
    late = plan(LocalSchedule(time(23, 0)), BERLIN, since=utc(2026, 11, 30, 21), now=utc(2026, 11, 30, 22),
                grace=GRACE, quiet=quiet)
    assert late.send is None and [m.reason for m in late.missed] == ["quiet"]


def test_while_paused_a_due_slot_is_dropped_and_not_sent_after_the_pause() -> None:
    paused = plan(EIGHT, BERLIN, since=utc(2026, 11, 30, 6), now=utc(2026, 11, 30, 7), grace=GRACE, paused=True)
    assert paused.send is None and [m.reason for m in paused.missed] == ["paused"]
    after = plan(EIGHT, BERLIN, since=paused.decided_until, now=utc(2026, 11, 30, 8), grace=GRACE)
    assert after.send is None and after.missed == ()


def test_weekdays_skip_the_weekend() -> None:
    workdays = LocalSchedule(time(7, 30), WORKDAYS)
    found = occurrences(workdays, BERLIN, utc(2026, 11, 27), utc(2026, 12, 3))  # Fri .. Wed
    assert [s.key for s in found] == ["2026-11-27T07:30", "2026-11-30T07:30", "2026-12-01T07:30",
                                      "2026-12-02T07:30"]
    following = next_occurrence(workdays, BERLIN, utc(2026, 11, 27, 12))
    assert following is not None and following.key == "2026-11-30T07:30"


def test_weekday_phrases_in_english_and_german() -> None:
    assert parse_weekdays("weekdays") == parse_weekdays("werktags") == WORKDAYS
    assert parse_weekdays("mon, wed, fri") == parse_weekdays("Montag Mittwoch Freitag") == 0b10101
    assert parse_weekdays("sundays") == 1 << 6
    assert parse_weekdays("") == 0b1111111
    assert parse_weekdays("someday") is None
    render = Renderer("en", "UTC")
    assert describe_weekdays(WORKDAYS, render) == "on weekdays"
    assert describe_weekdays(0b10101, render) == "Monday, Wednesday, Friday"


ZONES = ["Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Pacific/Chatham",
         "America/Sao_Paulo", "UTC", "Asia/Kathmandu"]


@settings(max_examples=40, deadline=None)
@given(zone=st.sampled_from(ZONES), hour=st.integers(0, 23), minute=st.sampled_from([0, 15, 30, 45]),
       step=st.integers(5, 90), start_day=st.integers(0, 364), days=st.sampled_from([0b1111111, WORKDAYS, 1 << 6]))
def test_every_due_slot_goes_out_once_and_on_time_however_the_runs_fall(
        zone: str, hour: int, minute: int, step: int, start_day: int, days: int) -> None:
    tz = ZoneInfo(zone)
    schedule = LocalSchedule(time(hour, minute), days)
    start = utc(2026, 1, 1) + timedelta(days=start_day)
    end = start + timedelta(days=9)
    sent = drive(schedule, tz, start, end, timedelta(minutes=step))
    keys = [s.key for _, s in sent]
    assert len(keys) == len(set(keys))  # never twice
    assert len({k[:10] for k in keys}) == len(keys)  # at most one per local day
    for run, slot in sent:
        assert slot.at <= run < slot.at + timedelta(minutes=step)  # in the first run at or after its instant
    # Runs at most 90 minutes apart with a grace of two hours lose nothing.
    expected = [s.key for s in occurrences(schedule, tz, start, end - timedelta(minutes=step))]
    assert set(expected) <= set(keys)


def test_local_dates_in_keys_are_the_persons_not_utc() -> None:
    found = occurrences(LocalSchedule(time(8, 0)), ZoneInfo("Pacific/Kiritimati"), utc(2026, 11, 29, 12),
                        utc(2026, 11, 30, 12))
    assert [s.key for s in found] == ["2026-11-30T08:00"]  # UTC+14: Nov 29, 18:00 UTC
    assert found[0].at == utc(2026, 11, 29, 18)
    assert found[0].local.date() == date(2026, 11, 30)
