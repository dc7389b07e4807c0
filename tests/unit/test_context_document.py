"""The context document as a pure function: which sections and lines it writes, how streaks at risk
stand out, and how it keeps within the token budget by dropping whole lines, least important first."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from brain.context import GoalLine, build_context_document, estimate_tokens
from brain.i18n import Renderer, tr
from brain.projections.correlations import Correlation
from brain.projections.day_snapshot import DaySnapshot, EventSummary, TaskSummary
from brain.projections.streaks import StreakView

BERLIN = ZoneInfo("Europe/Berlin")
MONDAY = date(2026, 11, 30)


def at(hour: int, minute: int = 0, day: date = MONDAY) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=BERLIN)


def snapshot(**changes: object) -> DaySnapshot:
    base = DaySnapshot(
        day=MONDAY, tasks_open=7, tasks_done_today=2, tasks_overdue=1,
        tasks_due_today=[TaskSummary("t1", "File the tax return", MONDAY, 3), TaskSummary("t2", "Buy milk", MONDAY, 0)],
        events_today=2,
        upcoming=[EventSummary("e1", "Dentist", at(14), at(15), False),
                  EventSummary("e2", "Team dinner", at(19), at(21), False),
                  EventSummary("e3", "Flight to Rome", at(7, day=date(2026, 12, 2)), at(9, day=date(2026, 12, 2)),
                               False)],
        next_event=None, water_ml=750, water_goal_ml=2000, water_percent=38, coffee_count=2, coffee_ml=300,
        other_ml=0, meals=1, kcal=450, kcal_goal=2000, kcal_percent=23, protein=20, protein_goal=60,
        places_visited=["Office", "Gym"], tracking=True,
    )
    base = replace(base, next_event=base.upcoming[0])
    return replace(base, **changes)  # type: ignore[arg-type]


def streak(name: str, status: str, current: int, longest: int = 10, skipped_today: bool = False) -> StreakView:
    return StreakView(streak=name, current=current, longest=longest, last_active=MONDAY, status=status,  # type: ignore[arg-type]
                      strength=0.5, skipped_today=skipped_today)


def correlation(r: float, text: str) -> Correlation:
    return Correlation(metric_a="coffee_count", metric_b="tasks_done", module_a="drink", module_b="todo", r=r,
                       p=0.001, n=30, direction="positive" if r > 0 else "negative", effect_percent=30,
                       sentence=tr(text))


GOALS = [GoalLine("8 glasses of water a day", 3, 8, ">=", "day", False),
         GoalLine("At most 2000 kcal a day", 450, 2000, "<=", "day", True),
         GoalLine("3 new places a week", 3, 3, ">=", "week", True)]
STREAKS = [streak("water", "at_risk", 12), streak("tasks", "active", 4), streak("meals", "broken", 0, longest=9)]
CORRELATIONS = [correlation(0.71, "On days with more coffee you have 30% more completed tasks."),
                correlation(-0.52, "Fewer meals with more meetings."),
                correlation(0.41, "Third."), correlation(0.35, "Fourth, never shown.")]
PATTERNS = ["Drinks most water in the afternoon", "Prefers short answers"]
PROPOSALS = ["Create task “Call the landlord” (waiting for approval)"]


@pytest.fixture(scope="module")
def en() -> Renderer:
    return Renderer("en", "Europe/Berlin")


def full(render: Renderer, budget: int = 5000) -> str:
    return build_context_document(render, snapshot(), goals=GOALS, streaks=STREAKS, patterns=PATTERNS,
                                  correlations=CORRELATIONS, proposals=PROPOSALS, budget_tokens=budget)


def test_a_roomy_budget_keeps_every_section_in_order(en: Renderer) -> None:
    text = full(en)
    headers = [line for line in text.splitlines() if line.startswith("#")]
    assert headers == ["## About the person, Monday, November 30, 2026", "### Today", "### Goals", "### Streaks",
                       "### Known patterns", "### Correlations", "### Pending proposals"]


def test_today_lists_counts_next_events_and_due_titles(en: Renderer) -> None:
    text = full(en)
    for expected in [
        "- Tasks: 7 open · 2 done today · 1 overdue",
        "- Calendar: 2 events today",
        "- Water: 750 ml of 2,000 ml (38%)",
        "- Coffee: 2",
        "- Meals: 1 · 450 of 2,000 kcal",
        "- Protein: 20 of 60 g",
        "- Places today: Office, Gym",
        "- Next event: Dentist, 2:00\u202fPM–3:00\u202fPM",
        "- Later: Team dinner, 7:00\u202fPM–9:00\u202fPM",
        "- Due today: File the tax return (priority 3)",
        "- Due today: Buy milk",
        "- Location tracking is on",
    ]:
        assert expected in text.splitlines(), expected
    # An event on another day names its day.
    assert any(line.startswith("- Later: Flight to Rome, ") and "Dec" in line for line in text.splitlines())


def test_an_empty_day_says_so_and_leaves_out_optional_lines(en: Renderer) -> None:
    text = build_context_document(en, snapshot(events_today=0, upcoming=[], next_event=None, coffee_count=0,
                                               protein_goal=None, places_visited=[], tracking=False,
                                               tasks_due_today=[]))
    assert "- Calendar: nothing today" in text.splitlines()
    for absent in ("Coffee", "Protein", "Places", "Next event", "Due today", "tracking", "### Goals", "### Streaks"):
        assert absent not in text


def test_goals_show_progress_against_the_target_and_whether_reached(en: Renderer) -> None:
    lines = full(en).splitlines()
    assert "- 8 glasses of water a day: 3 of 8 today" in lines
    assert "- At most 2000 kcal a day: 450, at most 2,000 today — within the limit" in lines
    assert "- 3 new places a week: 3 of 3 this week — reached" in lines


def test_streaks_at_risk_come_first_and_stand_out(en: Renderer) -> None:
    text = full(en)
    section = text.split("### Streaks\n")[1].split("###")[0].splitlines()
    assert section == ["- ⚠ water: 12 days in a row — AT RISK, not done yet today",
                       "- tasks: 4 days in a row",
                       "- meals: broken (record: 9 days)"]


def test_a_skip_day_keeps_a_streak_from_being_at_risk(en: Renderer) -> None:
    text = build_context_document(en, snapshot(), streaks=[streak("water", "at_risk", 5, skipped_today=True)])
    assert "- water: 5 days in a row (today is a skip day)" in text.splitlines()
    assert "AT RISK" not in text


def test_only_the_top_three_correlations_appear_with_their_r(en: Renderer) -> None:
    lines = full(en).splitlines()
    assert "- On days with more coffee you have 30% more completed tasks. (r = 0.71)" in lines
    assert "- Fewer meals with more meetings. (r = -0.52)" in lines
    assert not any("Fourth" in line for line in lines)


def test_the_default_budget_is_kept(en: Renderer) -> None:
    many_patterns = [f"Pattern number {i} about how this person spends a typical afternoon" for i in range(40)]
    text = build_context_document(en, snapshot(), goals=GOALS, streaks=STREAKS, patterns=many_patterns,
                                  correlations=CORRELATIONS, proposals=PROPOSALS)
    assert estimate_tokens(text) <= 500
    assert math.ceil(len(text) / 4) == estimate_tokens(text)
    # Patterns go before correlations, and the later patterns before the earlier ones.
    assert "Pattern number 0 " in text and "Pattern number 39 " not in text
    assert "(r = 0.71)" in text


@pytest.mark.parametrize("budget", [40, 70, 100, 130, 160, 200, 260, 320, 400])
def test_lines_are_dropped_whole_and_least_important_first(en: Renderer, budget: int) -> None:
    complete = full(en).splitlines()
    text = full(en, budget)
    kept = text.splitlines()
    # Never a half line: every line is one of the complete document's lines.
    assert set(kept) <= set(complete)
    assert kept[0].startswith("## About the person")
    if len(kept) > 1:
        assert estimate_tokens(text) <= budget
    rank = {  # the promised order of importance (lower survives longer)
        "- Tasks:": 0, "- Water:": 0, "- ⚠ water": 1, "- 8 glasses": 2, "- Next event:": 4,
        "- On days with more coffee": 6, "- Drinks most water": 7, "- Due today: File": 8,
    }
    present = {prefix: any(line.startswith(prefix) for line in kept) for prefix in rank}
    for more, less in [(a, b) for a in rank for b in rank if rank[a] < rank[b]]:
        assert present[more] or not present[less], (more, less, budget)
    # A section without lines has no header left.
    for i, line in enumerate(kept):
        if line.startswith("###"):
            assert i + 1 < len(kept) and kept[i + 1].startswith("- ")


def test_a_tight_budget_keeps_today_and_the_streak_at_risk(en: Renderer) -> None:
    text = full(en, 100)
    assert "- Tasks: 7 open · 2 done today · 1 overdue" in text
    assert "AT RISK" in text
    assert "Due today" not in text and "Known patterns" not in text


def test_the_german_document_renders(en: Renderer) -> None:
    text = full(Renderer("de", "Europe/Berlin"))
    assert text.startswith("## ") and "{" not in text
    assert "2.000" in text and "30. November 2026" in text


@pytest.mark.parametrize("value, state", [(1800, "within the limit"), (2300, "over the limit")])
def test_a_limit_goal_says_whether_the_person_is_within_it_before_the_period_ends(
    en: Renderer, value: int, state: str,
) -> None:
    # `reached` of a limit goal stays False until its period is over; the line reads value and target.
    goal = GoalLine("At most 2000 kcal a day", value, 2000, "<=", "day", False)
    text = build_context_document(en, snapshot(), goals=[goal])
    assert f"- At most 2000 kcal a day: {value:,}, at most 2,000 today — {state}" in text.splitlines()
