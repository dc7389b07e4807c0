"""Every table of the brain: importing this module registers the models of each package on `Base.metadata`, which
is `metadata`. The data rights (export, erasure) and linking read it for the personal tables. It holds the
adapters' tables too once their models are imported, as the app does (app.tables lists every table)."""

from __future__ import annotations

from types import ModuleType

from brain.actions import models as actions
from brain.companion import models as companion
from brain.events import store as events
from brain.feedback import models as feedback
from brain.goals import models as goals
from brain.learning import models as learning
from brain.memory import models as memory
from brain.modules.calendar import models as calendar
from brain.modules.drink import models as drink
from brain.modules.food import models as food
from brain.modules.places import models as places
from brain.modules.todo import models as todo
from brain.onboarding import models as onboarding
from brain.outbox import models as outbox
from brain.people import models as people
from brain.projections import models as projections
from brain.pulse import models as pulse
from brain.reminders import models as reminders
from brain.rituals import models as rituals
from brain.schedules import models as schedules
from brain.store.base import Base

MODEL_MODULES: tuple[ModuleType, ...] = (
    people, events, actions, outbox, todo, calendar, drink, food, places, goals, projections, pulse, feedback, memory,
    companion, onboarding, schedules, rituals, reminders, learning,
)

metadata = Base.metadata
