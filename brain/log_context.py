"""Whom and which turn a log line is about: the person's internal id and the pipeline log's turn id, kept in
context variables while a message is handled (bot/dialog.py) and while a pipeline log span runs. The JSON log
format (app/log_format.py) writes them on every line; they are ids only, never a name or a text."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

PERSON: ContextVar[uuid.UUID | None] = ContextVar("companion_log_person", default=None)
TURN: ContextVar[uuid.UUID | None] = ContextVar("companion_log_turn", default=None)


@contextmanager
def about(person: uuid.UUID | None = None, turn: uuid.UUID | None = None) -> Iterator[None]:
    """Log lines inside the block are about `person` and `turn` (where given; otherwise the outer ones stay).
    Tasks started inside inherit them; afterwards the values before the block return."""
    person_token = PERSON.set(person if person is not None else PERSON.get())
    turn_token = TURN.set(turn if turn is not None else TURN.get())
    try:
        yield
    finally:
        TURN.reset(turn_token)
        PERSON.reset(person_token)


@contextmanager
def update_scope() -> Iterator[None]:
    """One update's handling, for whom the person is known only once it is looked up (`concerns` then names
    them): it starts about nobody, and whatever it sets ends with it."""
    person_token = PERSON.set(None)
    turn_token = TURN.set(None)
    try:
        yield
    finally:
        TURN.reset(turn_token)
        PERSON.reset(person_token)


def concerns(person: uuid.UUID) -> None:
    """From here to the end of the enclosing `update_scope` (or task), log lines are about `person`."""
    PERSON.set(person)
