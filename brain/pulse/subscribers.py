"""Attaches the rule engine's event rules (e.g. goal reached) to the bus, and keeps the engine on the
brain so the ticker and the commands use the same one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from brain.core import Brain

if TYPE_CHECKING:
    from rules.engine import RuleEngine

ENGINE_ATTRIBUTE = "pulse_engine"


def subscribe(brain: Brain) -> None:
    engine = pulse_engine(brain)
    for event_type in sorted({e for rule in engine.rules for e in rule.event_types}):
        brain.bus.subscribe(event_type, engine.on_event)


def pulse_engine(brain: Brain) -> RuleEngine:
    """The brain's rule engine (created on first use with every rule)."""
    engine: RuleEngine | None = getattr(brain, ENGINE_ATTRIBUTE, None)
    if engine is None:
        # Imported here: the rules sit above the brain and import it.
        from rules.engine import RuleEngine

        engine = RuleEngine(brain)
        setattr(brain, ENGINE_ATTRIBUTE, engine)
    return engine
