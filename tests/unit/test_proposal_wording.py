"""A proposal reads as the action in the person's words, in both languages: every tool an assistant may be asked to
approve has a template of its own, so no reply shows a tool's name or its argument names."""

from __future__ import annotations

from typing import Any

import pytest

from brain.core import default_registry
from brain.i18n import Renderer
from brain.tools.proposal_wording import TEMPLATES, action_text

# One call for each write tool, with the arguments a model would give.
EXAMPLES: dict[str, tuple[dict[str, Any], str, str]] = {
    "log_drink": ({"drink_type": "alcohol", "name": "beer", "quantity_ml": 330, "count": 2},
                  "Log 2 × 330 ml beer", "2 × 330 ml beer eintragen"),
    "log_drink_preset": ({"preset": "Flat white"}, "Log your drink «Flat white»",
                         "Dein Getränk «Flat white» eintragen"),
    "create_drink_preset": ({"name": "Flat white", "drink_type": "coffee", "quantity_ml": 200},
                            "Save «Flat white» (200 ml) as a drink you log with one tap",
                            "«Flat white» (200 ml) als Getränk speichern, das du mit einem Tipp einträgst"),
    "correct_last_drink": ({"quantity_ml": 500, "drink_type": "tea"}, "Correct your last drink: 500 ml, tea",
                           "Dein letztes Getränk korrigieren: 500 ml, Tee"),
    "undo_last_drink": ({"drink_type": "coffee"}, "Take back your last coffee",
                        "Dein letztes Getränk (Kaffee) zurücknehmen"),
    "delete_drink": ({"entry_id": "3f9a"}, "Delete a drink from your log", "Ein Getränk aus deinem Log löschen"),
    "log_meal": ({"description": "Pasta", "meal_type": "lunch", "kcal": 650}, "Log lunch: «Pasta» (650 kcal)",
                 "Mittagessen eintragen: «Pasta» (650 kcal)"),
    "correct_last_meal": ({"kcal": 400}, "Correct your last meal: 400 kcal",
                          "Deine letzte Mahlzeit korrigieren: 400 kcal"),
    "delete_meal": ({"meal_id": "3f9a"}, "Delete a meal from your log", "Eine Mahlzeit aus deinem Log löschen"),
    "visit_place": ({"place": "Café Luna"}, "Check you in at «Café Luna»", "Dich bei «Café Luna» einchecken"),
    "delete_visit": ({"visit": "1"}, "Delete the visit no. 1", "Besuch Nr. 1 löschen"),
    "log_location": ({"lat": 52.5, "lng": 13.4}, "Store where you are now", "Speichern, wo du gerade bist"),
    "start_tracking": ({}, "Turn on location tracking", "Standortverfolgung einschalten"),
    "stop_tracking": ({}, "Turn off location tracking", "Standortverfolgung ausschalten"),
    "create_reminder": ({"text": "Call mom", "at": "2026-12-05T09:00:00+01:00"},
                        "Remind you of «Call mom» on Saturday, December 5 at 9:00\u202fAM",
                        "Dich an «Call mom» erinnern: Samstag, 5. Dezember um 09:00"),
    "delete_reminder": ({"reminder": "dentist"}, "Delete the reminder «dentist»", "Erinnerung «dentist» löschen"),
    "set_task_reminder": ({"task": "Taxes", "minutes_before": 30},
                          "Remind you of the task «Taxes» 30 minutes before it is due",
                          "Dich 30 Minuten vor der Fälligkeit an die Aufgabe «Taxes» erinnern"),
    "create_goal": ({"title": "Read daily", "metric": "event_count", "event_type": "TaskCompleted", "target": 1},
                    "Start the goal «Read daily»", "Ziel «Read daily» beginnen"),
    "create_goal_from_template": ({"template": "tasks_5"}, "Start the goal «5 tasks done a day»",
                                  "Ziel «5 erledigte Aufgaben pro Tag» beginnen"),
    "skip_streak_day": ({"streak": "water"}, "Count today as a skip day for your water streak",
                        "Heute als Pausentag für deine Serie Wasser zählen"),
    "draft_ritual": ({"title": "Wind down"}, "Draft the ritual «Wind down» for you to look at",
                     "Ritual «Wind down» als Entwurf zum Ansehen anlegen"),
    "undo_rule_adaptation": ({"adaptation_id": "3f9a"}, "Undo what a reminder learned about you",
                             "Zurücknehmen, was eine Erinnerung über dich gelernt hat"),
}


def test_every_tool_that_writes_has_a_template() -> None:
    writes = {tool.name for tool in default_registry().all() if tool.policy != "read"}
    assert writes - set(TEMPLATES) == set()


@pytest.mark.parametrize("tool", sorted(EXAMPLES))
def test_a_proposal_says_the_action_in_the_persons_words(tool: str) -> None:
    arguments, english, german = EXAMPLES[tool]
    text = action_text(tool, arguments, year=2026)
    assert Renderer("en", "Europe/Berlin")(text) == english
    assert Renderer("de", "Europe/Berlin")(text) == german
    for locale in ("en", "de"):
        said = Renderer(locale, "Europe/Berlin")(text)
        assert tool not in said and not any(f"{name}:" in said for name in arguments)
