"""The facts the person can see and delete (/facts): all of them, most confident first, each said in their
language; a deleted one is remembered for 90 days, so no extractor learns it again meanwhile."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert

from brain.errors import DomainError
from brain.events.catalog import ActorT, FactForgotten
from brain.i18n import Text, tr
from brain.learning.models import ForgottenFact
from brain.learning.wording import fact_text
from brain.memory.models import MemoryFact
from brain.people.models import User
from brain.store.unit_of_work import UnitOfWork

FORGET_FOR = timedelta(days=90)
MAX_LISTED = 30


@dataclass(frozen=True)
class ListedFact:
    id: uuid.UUID
    position: int
    said: Text | str
    confidence: float
    source: str  # "rules" (their logs), "feedback" (their answers to nudges), "model"


async def list_facts(uow: UnitOfWork, user: User) -> list[ListedFact]:
    rows = (await uow.session.scalars(select(MemoryFact).where(MemoryFact.user_id == user.id)
                                      .order_by(MemoryFact.confidence.desc(), MemoryFact.key).limit(MAX_LISTED))).all()
    return [ListedFact(f.id, i, fact_text(f.key, f.statement, f.said), f.confidence, f.source)
            for i, f in enumerate(rows, start=1)]


async def forget_fact(uow: UnitOfWork, user: User, actor: ActorT, reference: str) -> MemoryFact:
    """Deletes one fact (by its number in the list or its id) and remembers the deletion for 90 days."""
    text = reference.strip().lstrip("#").rstrip(".")
    fact: MemoryFact | None = None
    if text.isascii() and text.isdigit():
        listed = await list_facts(uow, user)
        number = int(text)
        if not 1 <= number <= len(listed):
            raise DomainError(tr("There is no fact number {number}.", number=number), code="not_found")
        fact_id = listed[number - 1].id
    else:
        try:
            fact_id = uuid.UUID(text)
        except ValueError:
            raise DomainError(tr("Which fact? /facts delete 2 deletes the second one in the list."),
                              code="missing_reference") from None
    fact = await uow.session.scalar(select(MemoryFact).where(MemoryFact.user_id == user.id, MemoryFact.id == fact_id)
                                    .with_for_update())
    if fact is None:
        raise DomainError(tr("That fact is gone already."), code="not_found")
    await uow.session.execute(
        insert(ForgottenFact).values(user_id=user.id, key=fact.key, statement=fact.statement,
                                     until=uow.now + FORGET_FOR)
        .on_conflict_do_update(index_elements=["user_id", "key"], set_={"until": uow.now + FORGET_FOR}))
    await uow.session.delete(fact)
    uow.emit(FactForgotten(fact_id=fact.id, key=fact.key), user_id=user.id, record_id=fact.id, actor=actor)
    return fact
