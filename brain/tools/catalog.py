"""The tools of the life logs and of what is kept over them (goals, projections, the pulse), by the package that
offers each. A ritual step may call them (brain.rituals); with the rituals' own they are every tool the brain offers
(`brain.core.default_registry`)."""

from __future__ import annotations

from brain.goals import tools as goals
from brain.modules.calendar import tools as calendar
from brain.modules.drink import tools as drink
from brain.modules.food import tools as food
from brain.modules.places import tools as places
from brain.modules.todo import tools as todo
from brain.projections import tools as projections
from brain.pulse import tools as pulse
from brain.reminders import tools as reminders
from brain.tools.spec import ToolSpec

LIFE_TOOLS: tuple[ToolSpec, ...] = (
    *todo.TOOLS, *calendar.TOOLS, *drink.TOOLS, *food.TOOLS, *places.TOOLS, *goals.TOOLS, *projections.TOOLS,
    *pulse.TOOLS, *reminders.TOOLS,
)
