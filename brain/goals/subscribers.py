"""Attaches the goal tracker to the bus. It listens to all events (after the projections' own
handlers, so a streak goal reads a streak that already counts the event) and acts on those that
feed goals or take back one that did."""

from __future__ import annotations

from typing import TYPE_CHECKING

from brain.events.catalog import DomainEvent
from brain.goals.tracker import TRACKED_EVENTS, track_event

if TYPE_CHECKING:
    from brain.core import Brain


def subscribe(brain: Brain) -> None:
    async def on_event(event: DomainEvent) -> None:
        if event.type in TRACKED_EVENTS:
            await track_event(brain, event)

    brain.bus.subscribe_all(on_event)
