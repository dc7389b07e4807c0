"""In-process event bus. Events are published only after their transaction committed; handlers
run in subscription order (type handlers first, then catch-all), each isolated: one failing handler
is logged and the others still run. An event of a type that is already being dispatched in the
same call chain is dropped with a warning, so a handler cannot loop on its own event type."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable
from contextvars import ContextVar

from brain.events.catalog import DomainEvent, EventPayload

log = logging.getLogger(__name__)

Handler = Callable[[DomainEvent], Awaitable[None] | None]
Unsubscribe = Callable[[], None]

_dispatching: ContextVar[frozenset[str]] = ContextVar("dispatching_event_types", default=frozenset())


class EventBus:
    def __init__(self) -> None:
        self._by_type: dict[str, list[Handler]] = {}
        self._any: list[Handler] = []

    def subscribe(self, event_type: str | type[EventPayload], handler: Handler) -> Unsubscribe:
        name = event_type if isinstance(event_type, str) else event_type.event_type()
        self._by_type.setdefault(name, []).append(handler)
        return lambda: self.unsubscribe(name, handler)

    def subscribe_all(self, handler: Handler) -> Unsubscribe:
        self._any.append(handler)
        return lambda: self._remove(self._any, handler)

    def unsubscribe(self, event_type: str | type[EventPayload], handler: Handler) -> None:
        name = event_type if isinstance(event_type, str) else event_type.event_type()
        self._remove(self._by_type.get(name, []), handler)

    @staticmethod
    def _remove(handlers: list[Handler], handler: Handler) -> None:
        if handler in handlers:
            handlers.remove(handler)

    async def publish(self, events: Iterable[DomainEvent]) -> None:
        for event in events:
            await self._dispatch(event)

    async def _dispatch(self, event: DomainEvent) -> None:
        active = _dispatching.get()
        if event.type in active:
            log.warning("dropped re-entrant %s (id %s) while the same type is dispatching",
                        event.type, event.meta.id)
            return
        token = _dispatching.set(active | {event.type})
        try:
            for handler in [*self._by_type.get(event.type, ()), *self._any]:
                try:
                    result = handler(event)
                    if inspect.isawaitable(result):
                        await result
                except Exception:
                    log.exception("event handler %r failed on %s %s", handler, event.type, event.meta.id)
        finally:
            _dispatching.reset(token)
