"""Content classes: how private the data of each module (and so of each tool and its results) is. A
request that carries a sensitive class may go to a remote model only with the person's consent
(`CompanionSettings.remote_consent`); a model the person marked local may always see it. The LLM client
(`brain.companion.llm`) enforces that; a turn asks `allowed_remote` with the classes of what it is about to
send.

Classes, from least to most private:
- "personal": the person's own life logs without free text about their body or whereabouts — tasks,
  calendar, drinks, goals, streaks, reminders, rituals;
- "sensitive": food (health), places (whereabouts), memory (anything they told us), and the day snapshot,
  which folds meals and places in. Unknown modules count as sensitive, so a new module fails closed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from brain.tools.spec import ToolSpec

ContentClass = Literal["personal", "sensitive"]
PERSONAL: ContentClass = "personal"
SENSITIVE: ContentClass = "sensitive"

MODULE_CLASSES: dict[str, ContentClass] = {
    "todo": PERSONAL,
    "calendar": PERSONAL,
    "drink": PERSONAL,
    "goals": PERSONAL,
    "streaks": PERSONAL,
    "pulse": PERSONAL,
    "rituals": PERSONAL,
    "reminders": PERSONAL,
    "food": SENSITIVE,
    "places": SENSITIVE,
    "memory": SENSITIVE,
    "projections": SENSITIVE,  # the day snapshot includes meals and places visited
}


def module_class(module: str) -> ContentClass:
    """The content class of a module's data; sensitive when the module is unknown."""
    return MODULE_CLASSES.get(module, SENSITIVE)


def tool_class(tool: ToolSpec) -> ContentClass:
    """The class of a tool's arguments and results: that of its module."""
    return module_class(tool.module)


def is_sensitive(content_class: str) -> bool:
    """Only "personal" is not sensitive; any other name (including unknown ones) is."""
    return content_class != PERSONAL


def allowed_remote(classes: Iterable[str], consent: bool) -> bool:
    """May content of these classes go to a remote (not local) model? Yes when none is sensitive, or when
    the person consented to sending sensitive content to remote models."""
    return consent or not any(is_sensitive(c) for c in classes)
