"""The goal templates (stable ids, translatable titles) and the measures custom goals are made
of (water glasses, coffees, tasks done, ...) and the most a goal on each can ask, with the translated wording of a
goal's title.
Pure data: the service turns a template or a measure into a goal."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from brain.i18n import N_, Text, ntr, tr


@dataclass(frozen=True)
class GoalTemplate:
    id: str
    title: str  # an N_() msgid, rendered in the person's language when the goal is made; may say {target}
    label: str  # an N_() msgid for the "+ ..." button; may say {target}
    metric: str
    event_type: str
    target: float
    period: str
    comparison: str
    field: str | None = None
    filter_field: str | None = None
    filter_value: str | None = None

    # The target goes in as a number, so it is written the person's way ("2,000 kcal", "2.000 kcal").
    @property
    def title_text(self) -> Text:
        return tr(self.title, target=int(self.target))

    @property
    def label_text(self) -> Text:
        return tr(self.label, target=int(self.target))

    @property
    def measures(self) -> str:
        return measure_key(self.metric, self.event_type, self.field, self.filter_field, self.filter_value, self.period)


def measure_key(metric: str, event_type: str, field: str | None, filter_field: str | None, filter_value: str | None,
                period: str) -> str:
    """What a goal measures and over which period, whatever its target or direction: two goals with the same key
    are two targets for one number (a template is not offered again next to a goal that already measures it)."""
    return "|".join((metric, event_type, field or "", filter_field or "", (filter_value or "").casefold(), period))


TEMPLATES: dict[str, GoalTemplate] = {t.id: t for t in (
    # A "glass" is one logged water, whatever its size: people log glasses, not millilitres.
    GoalTemplate("water_8_glasses", N_("8 glasses of water a day (each water you log counts as one)"),
                 N_("8 glasses of water a day"), "event_count", "DrinkLogged", 8, "day", ">=",
                 filter_field="drink_type", filter_value="water"),
    GoalTemplate("tasks_5", N_("5 tasks done a day"), N_("5 tasks a day"), "event_count", "TaskCompleted", 5, "day",
                 ">="),
    GoalTemplate("meals_3", N_("3 meals a day"), N_("3 meals a day"), "event_count", "MealLogged", 3, "day", ">="),
    GoalTemplate("kcal_max_2000", N_("At most {target} kcal a day"), N_("at most {target} kcal a day"), "event_sum",
                 "MealLogged", 2000, "day", "<=", field="calories"),
    GoalTemplate("places_3_new", N_("3 new places a week"), N_("3 new places a week"), "event_count",
                 "PlaceCreated", 3, "week", ">="),
    GoalTemplate("coffee_max_3", N_("At most 3 coffees a day"), N_("at most 3 coffees a day"), "event_count",
                 "DrinkLogged", 3, "day", "<=", filter_field="drink_type", filter_value="coffee"),
    GoalTemplate("water_2000_ml", N_("At least {target} ml of water a day"), N_("{target} ml of water a day"),
                 "event_sum", "DrinkLogged", 2000, "day", ">=", field="quantity_ml", filter_field="drink_type",
                 filter_value="water"),
    GoalTemplate("water_streak_7", N_("Water 7 days in a row"), N_("water 7 days in a row"), "streak_days",
                 "DrinkLogged", 7, "day", ">=", field="water"),
    GoalTemplate("tasks_20_week", N_("20 tasks done a week"), N_("20 tasks a week"), "event_count", "TaskCompleted",
                 20, "week", ">="),
    GoalTemplate("protein_80", N_("At least {target} g of protein a day"), N_("{target} g of protein a day"),
                 "event_sum", "MealLogged", 80, "day", ">=", field="protein"),
    GoalTemplate("place_visit_daily", N_("Visit a place every day"), N_("a place visited every day"), "event_count",
                 "PlaceVisited", 1, "day", ">="),
    GoalTemplate("coffee_max_14_week", N_("At most 14 coffees a week"), N_("at most 14 coffees a week"),
                 "event_count", "DrinkLogged", 14, "week", "<=", filter_field="drink_type", filter_value="coffee"),
)}
TEMPLATE_IDS: tuple[str, ...] = tuple(TEMPLATES)


@dataclass(frozen=True)
class Measure:
    """Something a custom goal counts or sums, as people name it ("glasses of water", "kcal")."""

    key: str
    label: str  # an N_() msgid for the guided flow's button
    metric: str
    event_type: str
    amount: Callable[[int], Text]  # "{count} glasses of water"
    targets: tuple[int, ...]  # what the guided flow offers
    # The highest target that still means something for one day (a week and a month take their days' worth):
    # above it a goal is a typo or a joke ("1000000 glasses of water a day"), and it is refused.
    most_a_day: int
    default_comparison: str = ">="
    default_period: str = "day"
    field: str | None = None
    filter_field: str | None = None
    filter_value: str | None = None
    in_flow: bool = True


MEASURES: dict[str, Measure] = {m.key: m for m in (
    Measure("water_glasses", N_("Water glasses"), "event_count", "DrinkLogged",
            lambda n: ntr("{count} glass of water", "{count} glasses of water", n), (4, 6, 8, 10, 12),
            most_a_day=80, filter_field="drink_type", filter_value="water"),
    Measure("water_ml", N_("Water (ml)"), "event_sum", "DrinkLogged",
            lambda n: ntr("{count} ml of water", "{count} ml of water", n), (1500, 2000, 2500, 3000),
            most_a_day=20_000, field="quantity_ml", filter_field="drink_type", filter_value="water", in_flow=False),
    Measure("coffees", N_("Coffees"), "event_count", "DrinkLogged",
            lambda n: ntr("{count} coffee", "{count} coffees", n), (1, 2, 3, 4),
            most_a_day=30, default_comparison="<=", filter_field="drink_type", filter_value="coffee"),
    Measure("tasks", N_("Tasks done"), "event_count", "TaskCompleted",
            lambda n: ntr("{count} task done", "{count} tasks done", n), (1, 3, 5, 10), most_a_day=100),
    Measure("meals", N_("Meals"), "event_count", "MealLogged",
            lambda n: ntr("{count} meal", "{count} meals", n), (2, 3, 4, 5), most_a_day=20),
    Measure("kcal", N_("Calories (kcal)"), "event_sum", "MealLogged",
            lambda n: ntr("{count} kcal", "{count} kcal", n), (1500, 1800, 2000, 2500),
            most_a_day=20_000, default_comparison="<=", field="calories"),
    Measure("protein", N_("Protein (g)"), "event_sum", "MealLogged",
            lambda n: ntr("{count} g of protein", "{count} g of protein", n), (50, 80, 100, 120),
            most_a_day=1_000, field="protein", in_flow=False),
    Measure("new_places", N_("New places"), "event_count", "PlaceCreated",
            lambda n: ntr("{count} new place", "{count} new places", n), (1, 2, 3, 5),
            most_a_day=50, default_period="week"),
)}
FLOW_MEASURES: tuple[str, ...] = tuple(key for key, m in MEASURES.items() if m.in_flow)
_PERIOD_DAYS: dict[str, int] = {"day": 1, "week": 7, "month": 31}


def most_for(measure: Measure, period: str) -> int:
    """The highest target a goal on `measure` may have over `period`."""
    return measure.most_a_day * _PERIOD_DAYS[period]


def measure_of(metric: str, event_type: str, field: str | None, filter_field: str | None,
               filter_value: str | None) -> Measure | None:
    """The measure a goal's definition is (however it was made: a phrase, the flow, a template, the model), or None
    for one no measure names (a count of teas, a streak)."""
    wanted = (metric, event_type, field, filter_field, (filter_value or "").casefold() or None)
    return next((m for m in MEASURES.values()
                 if (m.metric, m.event_type, m.field, m.filter_field, m.filter_value) == wanted), None)


_GOAL_TITLES: dict[tuple[str, str], str] = {
    (">=", "day"): N_("At least {amount} a day"),
    (">=", "week"): N_("At least {amount} a week"),
    (">=", "month"): N_("At least {amount} a month"),
    ("<=", "day"): N_("At most {amount} a day"),
    ("<=", "week"): N_("At most {amount} a week"),
    ("<=", "month"): N_("At most {amount} a month"),
    ("=", "day"): N_("Exactly {amount} a day"),
    ("=", "week"): N_("Exactly {amount} a week"),
    ("=", "month"): N_("Exactly {amount} a month"),
}


def goal_title(measure: Measure, comparison: str, target: float, period: str) -> Text:
    """'At least 8 glasses of water a day', in words the person's language can translate whole."""
    count = int(target) if float(target).is_integer() else round(target)
    return tr(_GOAL_TITLES[(comparison, period)], amount=measure.amount(count))
