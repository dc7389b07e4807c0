"""/goal from the inbound line to the reply: the overview with its template buttons, a template
created by one tap, the guided custom flow to the end (also across a restart), the phrase path,
pause/resume/stop, and buttons that are not the person's own (or were tampered with) refused."""

from __future__ import annotations

from sqlalchemy import func, select

from bot.access import AccessPolicy
from bot.dialog import Dialog
from brain.actions.models import ActionToken
from brain.events.actor import USER
from brain.events.store import EventRecord
from brain.goals.models import Goal, GoalPeriod
from brain.people.models import Identity
from tests.e2e.conftest import Person

TEMPLATE_BUTTONS = (
    "+ 8 glasses of water a day", "+ 5 tasks a day", "+ 3 meals a day", "+ at most 2,000 kcal a day",
    "+ 3 new places a week", "+ at most 3 coffees a day", "+ 2,000 ml of water a day", "+ water 7 days in a row",
    "+ 20 tasks a week", "+ 80 g of protein a day", "+ a place visited every day", "+ at most 14 coffees a week",
)


async def _goals(brain) -> list[Goal]:  # type: ignore[no-untyped-def]
    async with brain.transactions.read() as session:
        return list((await session.scalars(select(Goal).order_by(Goal.created_at))).all())


async def _set_water_target(brain, who: Person, ml: int) -> None:  # type: ignore[no-untyped-def]
    """The day's water target set on its own, as the AI's set_drink_goal does (no command sets it)."""
    async with brain.transactions.read() as session:
        user_id = await session.scalar(select(Identity.user_id).where(Identity.platform_id == who.handle))
    assert (await brain.tools.execute(user_id, "set_drink_goal", {"daily_ml": ml}, USER)).ok


async def _goal_state(brain) -> tuple[int, ...]:  # type: ignore[no-untyped-def]
    """Rows of the goal tables and events: equal before and after means nothing was written."""
    async with brain.transactions.read() as session:
        return tuple([int(await session.scalar(select(func.count()).select_from(model)) or 0)
                      for model in (Goal, GoalPeriod, EventRecord)])


async def test_goal_lists_the_templates_and_one_tap_creates_one(person, brain) -> None:
    alice = person()
    reply = await alice.send("/goal")
    assert "No goals yet" in reply
    buttons = alice.buttons()
    assert set(TEMPLATE_BUTTONS) | {"Custom goal…"} == set(buttons)
    assert "New goal: 8 glasses of water a day" in await alice.press(buttons["+ 8 glasses of water a day"])
    for _ in range(3):
        await alice.send("/water")
    overview = await alice.send("/goal")
    assert "1. 8 glasses of water a day (each water you log counts as one): 3/8 today" in overview
    assert "+ 8 glasses of water a day" not in alice.buttons()  # what is in use is not offered again
    assert "+ 5 tasks a day" in alice.buttons()


async def test_a_templates_number_is_written_the_persons_way(person, brain) -> None:
    bea = person(language="de")
    await bea.send("/goal")
    button = bea.buttons()["+ höchstens 2.000 kcal pro Tag"]
    assert "Neues Ziel: Höchstens 2.000 kcal pro Tag" in await bea.press(button)
    [goal] = await _goals(brain)
    assert (goal.title, goal.target) == ("Höchstens 2.000 kcal pro Tag", 2000)


async def test_aliases_reach_the_same_command(person) -> None:
    alice = person()
    for alias in ("/ziel", "/goals", "/ziele"):
        assert "No goals yet" in await alice.send(alias)


async def test_the_custom_flow_creates_a_goal_step_by_step(person, brain) -> None:
    alice = person()
    await alice.send("/goal")
    assert "What should the goal count?" in await alice.press(alice.buttons()["Custom goal…"])
    assert set(alice.buttons()) == {"Water glasses", "Coffees", "Tasks done", "Meals", "Calories (kcal)",
                                    "New places"}
    assert "at least or at most" in await alice.press(alice.buttons()["Coffees"])
    assert "how many" in await alice.press(alice.buttons()["At most"])
    assert set(alice.buttons()) == {"1 coffee", "2 coffees", "3 coffees", "4 coffees"}
    assert "Per day, per week or per month?" in await alice.press(alice.buttons()["2 coffees"])
    assert "New goal: At most 2 coffees a day." in await alice.press(alice.buttons()["Per day"])
    [goal] = await _goals(brain)
    assert (goal.metric, goal.event_type, goal.filter_field, goal.filter_value) == (
        "event_count", "DrinkLogged", "drink_type", "coffee")
    assert (goal.comparison, goal.target, goal.period) == ("<=", 2, "day")
    await alice.send("/coffee 3")
    assert "1. At most 2 coffees a day: 3/2 today (over the limit)" in await alice.send("/goal")


async def test_the_flow_survives_a_restart_because_its_state_is_in_the_buttons(person, brain) -> None:
    alice = person()
    await alice.send("/goal")
    await alice.press(alice.buttons()["Custom goal…"])
    await alice.press(alice.buttons()["New places"])
    await alice.press(alice.buttons()["At least"])
    await alice.press(alice.buttons()["3 new places"])
    week = alice.buttons()["Per week"]
    restarted = Person(Dialog(brain, default_locale="en",
                              default_timezone="Europe/Berlin", access=AccessPolicy.open()), alice.handle)
    assert "New goal: At least 3 new places a week." in await restarted.press(week)
    [goal] = await _goals(brain)
    assert (goal.event_type, goal.period, goal.comparison) == ("PlaceCreated", "week", ">=")


async def test_a_phrase_creates_a_goal_and_an_unreadable_one_creates_nothing(person, brain) -> None:
    alice = person()
    assert "New goal: At least 2,000 ml of water a day." in await alice.send("/goal drink 2000 ml water a day")
    assert "New goal: At most 3 coffees a day." in await alice.send("/ziel max 3 Kaffee am Tag")
    assert "New goal: At least 3 new places a week." in await alice.send("/goal 3 neue Orte pro Woche")
    water, coffee, places = await _goals(brain)
    assert (water.metric, water.field, water.target, water.filter_value) == ("event_sum", "quantity_ml", 2000, "water")
    assert (coffee.comparison, coffee.target) == ("<=", 3)
    assert places.period == "week"
    await alice.send("/water 500")
    assert "1. At least 2,000 ml of water a day: 500/2,000 today" in await alice.send("/goal")

    before = await _goal_state(brain)
    reply = await alice.send("/goal learn the violin")
    assert "couldn't read that as a goal" in reply and "/goal 8 glasses of water a day" in reply
    assert "already have" in await alice.send("/goal max 3 Kaffee am Tag")
    assert await _goal_state(brain) == before


async def test_an_absurd_target_is_refused_with_the_range_and_nothing_changes(person, brain) -> None:
    alice = person()
    before = await _goal_state(brain)
    assert "That is out of range for a goal: 1 glass of water to 80 glasses of water a day." in await alice.send(
        "/goal 1000000 glasses of water a day")
    assert "1 glass of water to 560 glasses of water a week" in await alice.send("/goal 600 glasses of water a week")
    assert "0 kcal to 20,000 kcal a day" in await alice.send("/goal 25000 kcal a day")  # a limit may be none at all
    assert "1 ml of water to 20,000 ml of water a day" in await alice.send("/goal 25 l water a day")
    bea = person(language="de")
    assert "Das geht als Ziel nicht: möglich sind 1 Glas Wasser bis 80 Gläser Wasser pro Tag." in await bea.send(
        "/ziel 1000000 Gläser Wasser am Tag")
    assert await _goal_state(brain) == before
    assert "New goal: At least 80 glasses of water a day." in await alice.send("/goal 80 glasses of water a day")


async def test_pause_resume_and_stop_with_a_confirmation(person, brain) -> None:
    alice = person()
    await alice.send("/goal 5 tasks a day")
    assert "Paused" in await alice.send("/goal pause 1")
    assert "(paused)" in await alice.send("/goal")
    assert "counts again" in await alice.send("/goal resume 1")
    assert "Which goal?" in await alice.send("/goal stop")
    assert "There is no goal number 4" in await alice.send("/goal stop 4")
    assert "Stop the goal At least 5 tasks done a day?" in await alice.send("/goal stop tasks")
    assert "Fine, the goal stays." in await alice.press(alice.buttons()["Keep it"])
    assert [g.status for g in await _goals(brain)] == ["active"]
    await alice.send("/goal stop 1")
    assert "Stopped At least 5 tasks done a day." in await alice.press(alice.buttons()["Stop it"])
    assert [g.status for g in await _goals(brain)] == ["abandoned"]
    assert "No goals yet" in await alice.send("/goal")


async def test_history_shows_the_running_period(person) -> None:
    alice = person()
    await alice.send("/goal 2 meals a day")
    await alice.send("lunch: soup 300 kcal")
    history = await alice.send("/goal history 1")
    assert "At least 2 meals a day, period by period:" in history and "1/2 (running)" in history


async def test_someone_elses_or_a_tampered_flow_button_is_refused(person, brain) -> None:
    alice, bob = person(), person()
    await alice.send("/goal")
    await alice.press(alice.buttons()["Custom goal…"])
    await alice.press(alice.buttons()["Water glasses"])
    await alice.press(alice.buttons()["At least"])
    await alice.press(alice.buttons()["8 glasses of water"])
    per_day = alice.buttons()["Per day"]
    before = await _goal_state(brain)
    assert "not valid" in await bob.press(per_day)
    assert "not valid" in await bob.press("forgedtoken123")
    assert await _goal_state(brain) == before

    # A button whose stored payload was changed behind our back: validated, refused, nothing written.
    for payload in ({"measure": "water_glasses", "comparison": ">=", "target": 9999, "period": "day"},
                    {"measure": "sleep"}, {"measure": "coffees", "comparison": "<"}):
        async with brain.transactions.begin() as uow:
            owner = select(ActionToken.user_id).where(ActionToken.token == per_day)
            alice_id = (await uow.session.scalars(owner)).one()
            token = f"tampered{len(str(payload))}"
            uow.session.add(ActionToken(token=token, user_id=alice_id, kind="goal_flow", payload=payload,
                                        single_use=True, expires_at=uow.now.replace(year=2030)))
        assert "not valid" in await alice.press(token)
    assert await _goal_state(brain) == before
    assert "New goal: At least 8 glasses of water a day." in await alice.press(per_day)  # her own still works


async def test_undo_still_removes_the_drink_that_reached_a_goal(person, brain) -> None:
    alice = person()
    await alice.send("/goal 2 glasses of water a day")
    await alice.send("/water 250")
    await alice.send("/water 500")
    assert "✓" in await alice.send("/goal")
    # GoalReached names the 500 ml as its cause; that must not make /undo skip it as if undone.
    assert "500 ml" in await alice.send("/undo")
    assert "1/2 today" in await alice.send("/goal")


async def test_a_daily_kcal_or_water_goal_is_also_the_target_today_measures_against(person) -> None:
    alice = person()
    await alice.send("/goal at most 1800 kcal a day")
    await alice.send("/goal")
    assert "+ at most 2,000 kcal a day" not in alice.buttons()  # the same number, one target
    assert "+ 8 glasses of water a day" in alice.buttons()
    assert "Today: 650 of 1,800 kcal" in await alice.send("/meal lunch pasta 650 kcal")
    await alice.send("/goal 1,5 l water a day")
    today = await alice.send("/today")
    assert "Water: 0 ml of 1,500 ml" in today and "Meals: 1 · 650 of 1,800 kcal" in today
    assert "Stopped" in await alice.send("/undo")  # the water goal, and the water target with it; not the kcal one
    await alice.send("/goal at most 3 coffees a day")  # counts, not the kcal or water target
    assert "650 of 1,800 kcal" in await alice.send("/today")


async def test_undoing_a_daily_water_goal_puts_the_day_s_target_back_and_the_next_undo_the_water(person) -> None:
    alice = person()
    await alice.send("/water 250")
    await alice.send("/goal 3 l water a day")
    assert "Stopped At least 3,000 ml of water a day." in await alice.send("/undo")
    assert "Water: 250 ml of 2,000 ml (13%)" in await alice.send("/today")  # the default again: there was none
    assert "Removed 250 ml water. Water today: 0 of 2,000 ml." in await alice.send("/undo")


async def test_stopping_a_daily_water_goal_puts_back_the_target_it_replaced(person, brain) -> None:
    alice = person()
    await alice.send("/today")
    await _set_water_target(brain, alice, 2500)
    await alice.send("/goal 3 l water a day")
    assert "Water: 0 ml of 3,000 ml" in await alice.send("/today")
    await alice.send("/goal stop 1")
    assert "Stopped" in await alice.press(alice.buttons()["Stop it"])
    assert "Water: 0 ml of 2,500 ml" in await alice.send("/today")


async def test_a_target_set_after_the_goal_stays_when_the_goal_is_stopped(person, brain) -> None:
    alice = person()
    await alice.send("/goal 3 l water a day")
    await _set_water_target(brain, alice, 2500)
    await alice.send("/goal stop 1")
    await alice.press(alice.buttons()["Stop it"])
    assert "Water: 0 ml of 2,500 ml" in await alice.send("/today")  # not the goal's number any more: left alone


async def test_undoing_a_daily_kcal_goal_in_german_puts_the_target_back_before_the_lunch_goes(person) -> None:
    alice = person(language="de")
    await alice.send("/lang de")
    await alice.send("/meal lunch pasta 650 kcal")
    await alice.send("/goal max 1500 kcal am Tag")
    assert "Höchstens 1.500 kcal pro Tag beendet." in await alice.send("/undo")
    assert "Mahlzeiten: 1 · 650 von 2.000 kcal" in await alice.send("/today")
    assert "Mittagessen gelöscht: pasta." in await alice.send("/undo")
    assert "Mahlzeiten: 0 · 0 von 2.000 kcal" in await alice.send("/today")


async def test_a_goal_asked_for_in_words_is_set_as_the_command_would(brain, person) -> None:
    alice = person()
    assert await alice.send("set a goal: max 2 coffees a day") == "New goal: At most 2 coffees a day."
    assert (await person(language="de").send("Neues Ziel: 8 Gläser Wasser am Tag")).startswith("Neues Ziel:")
    before = await _goal_state(brain)
    assert "couldn't read that as a goal" in await alice.send("set a goal: be happier")
    assert "Ziel" not in await alice.send("Ziel erreicht!")  # no colon: no goal asked for
    assert await _goal_state(brain) == before
    assert [g.title for g in await _goals(brain)][:1] == ["At most 2 coffees a day"]


async def test_a_goal_the_companion_titled_reads_in_the_language_switched_to(person, brain) -> None:
    bea = person(language="de")
    await bea.send("/goal max 2 Kaffee am Tag")
    await bea.send("/goal")
    await bea.press(bea.buttons()["+ 8 Gläser Wasser pro Tag"])
    async with brain.transactions.read() as session:
        user_id = await session.scalar(select(Identity.user_id).where(Identity.platform_id == bea.handle))
    assert (await brain.tools.execute(user_id, "create_goal", {  # a title of her own
        "title": "Mein Essensziel", "metric": "event_count", "event_type": "MealLogged", "target": 3, "period": "day",
        "comparison": ">="}, USER)).ok
    assert [g.title for g in await _goals(brain)] == [
        "Höchstens 2 Kaffee pro Tag", "8 Gläser Wasser pro Tag (jedes eingetragene Wasser zählt als ein Glas)",
        "Mein Essensziel"]
    await bea.send("/lang en")
    assert [g.title for g in await _goals(brain)] == [
        "At most 2 coffees a day", "8 glasses of water a day (each water you log counts as one)", "Mein Essensziel"]
    assert "1. At most 2 coffees a day: 0/2 today" in await bea.send("/goal")
