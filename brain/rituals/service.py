"""A person's rituals: made from a template or from drafted steps, listed in order, found by a short reference
(list position, id, title or template), scheduled ("every weekday at 07:30") and archived. Steps may only name
tools that exist and do not destroy anything; the ritual module's own tools are not steps."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import time
from functools import cache

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from brain.errors import DomainError
from brain.events.catalog import ActorT
from brain.i18n import Renderer, tr
from brain.people.models import User
from brain.rituals.models import ACTIVE, ARCHIVED, RUNNING, STOPPED, Ritual, RitualRun
from brain.rituals.steps import Step, dump_steps, parse_steps, tools_used
from brain.rituals.templates import TEMPLATES
from brain.schedules.models import RITUAL, PushSchedule
from brain.schedules.service import PushSetting, remove_push, set_push
from brain.store.base import constant
from brain.store.unit_of_work import UnitOfWork
from brain.tools.catalog import LIFE_TOOLS

MAX_RITUALS = 20
MAX_TITLE = 120


@dataclass(frozen=True)
class ListedRitual:
    position: int
    ritual: Ritual
    schedule: PushSetting | None  # None: started by hand only


def ritual_steps(ritual: Ritual) -> list[Step]:
    return parse_steps(ritual.steps)


def ritual_title(ritual: Ritual, render: Renderer) -> str:
    # A template's title is a message id (shown in the person's language); other titles are shown as written.
    return render(tr(ritual.title)) if ritual.template in TEMPLATES else ritual.title


@cache
def _step_tools() -> dict[str, str]:
    """Tool name -> policy of every tool a step may call."""
    return {t.name: t.policy for t in LIFE_TOOLS}


def check_tools(steps: list[Step]) -> None:
    allowed = _step_tools()
    for name in sorted(tools_used(steps)):
        if allowed.get(name) in (None, "destructive"):
            raise DomainError(tr("A ritual step cannot use the tool {name}.", name=name[:64]), code="bad_tool")


async def list_rituals(session: AsyncSession, user_id: uuid.UUID) -> list[ListedRitual]:
    rows = (await session.scalars(
        select(Ritual).where(Ritual.user_id == user_id, Ritual.status == ACTIVE).order_by(Ritual.created_at, Ritual.id)
    )).all()
    schedules = {row.ref: row for row in (await session.scalars(
        select(PushSchedule).where(PushSchedule.user_id == user_id, PushSchedule.kind == RITUAL)
    )).all()}
    listed = []
    for position, ritual in enumerate(rows, start=1):
        row = schedules.get(str(ritual.id))
        setting = PushSetting(RITUAL, row.at, row.weekdays, row.enabled) if row is not None and row.enabled else None
        listed.append(ListedRitual(position, ritual, setting))
    return listed


async def find_ritual(session: AsyncSession, user: User, reference: str) -> ListedRitual:
    """By list position ("2"), id, template id ("morning") or part of the title (in any case)."""
    text = reference.strip()
    listed = await list_rituals(session, user.id)
    if text.isascii() and text.isdigit():
        for item in listed:
            if item.position == int(text):
                return item
    render = Renderer(user.locale, user.timezone)
    needle = text.lower()
    matches = [item for item in listed if str(item.ritual.id) == text or item.ritual.template == needle]
    if not matches and needle:
        matches = [item for item in listed if needle in ritual_title(item.ritual, render).lower()]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise DomainError(tr("I found no ritual matching {reference}.", reference=text[:100]), code="not_found")
    choices = ", ".join(f"{m.position}. {ritual_title(m.ritual, render)[:60]}" for m in matches[:5])
    raise DomainError(tr("{reference} matches several rituals: {choices}. Which one do you mean?",
                         reference=text[:100], choices=choices), code="ambiguous")


async def create_ritual(uow: UnitOfWork, user: User, actor: ActorT, *, title: str, steps: list[Step],
                        template: str | None = None) -> Ritual:
    title = " ".join(title.split())[:MAX_TITLE]
    if not title:
        raise DomainError(tr("A ritual needs a title."), code="missing_title")
    check_tools(steps)
    count = await uow.session.scalar(
        select(func.count()).select_from(Ritual).where(Ritual.user_id == user.id, Ritual.status == ACTIVE))
    if (count or 0) >= MAX_RITUALS:
        raise DomainError(tr("You have {max} rituals already; archive one first (/ritual).", max=MAX_RITUALS),
                          code="too_many")
    ritual = Ritual(id=uuid.uuid4(), user_id=user.id, title=title, template=template, steps=dump_steps(steps),
                    status=ACTIVE, source=actor.kind, created_at=uow.now, updated_at=uow.now)
    uow.session.add(ritual)
    await uow.session.flush()
    return ritual


async def ritual_from_template(uow: UnitOfWork, user: User, actor: ActorT, template_id: str) -> Ritual:
    """The person's ritual made from this template: the existing one, or a new copy of the template."""
    template = TEMPLATES.get(template_id)
    if template is None:
        raise DomainError(tr("There is no ritual template {name}.", name=template_id[:32]), code="not_found")
    existing = await uow.session.scalar(
        select(Ritual).where(Ritual.user_id == user.id, Ritual.template == template_id, Ritual.status == ACTIVE)
        .order_by(Ritual.created_at).limit(1))
    if existing is not None:
        return existing
    return await create_ritual(uow, user, actor, title=template.title, steps=list(template.steps),
                               template=template.id)


async def schedule_ritual(uow: UnitOfWork, user: User, ritual: Ritual, at: time, weekdays: int) -> PushSetting:
    if not weekdays:
        raise DomainError(tr("A schedule needs at least one day."), code="no_days")
    return await set_push(uow.session, user, RITUAL, uow.now, at=at, weekdays=weekdays, ref=str(ritual.id))


async def unschedule_ritual(uow: UnitOfWork, user: User, ritual: Ritual) -> None:
    await remove_push(uow.session, user.id, RITUAL, str(ritual.id))


async def archive_ritual(uow: UnitOfWork, user: User, ritual: Ritual) -> None:
    """The ritual leaves the list and its schedule; a run of it still going ends (its log rows stay)."""
    ritual.status, ritual.updated_at = ARCHIVED, uow.now
    await remove_push(uow.session, user.id, RITUAL, str(ritual.id))
    await uow.session.execute(
        update(RitualRun).where(RitualRun.user_id == user.id, RitualRun.ritual_id == ritual.id,
                                RitualRun.status == constant(RUNNING)).values(status=STOPPED, finished_at=uow.now))


async def get_ritual(session: AsyncSession, user_id: uuid.UUID, ritual_id: uuid.UUID) -> Ritual | None:
    ritual = await session.get(Ritual, ritual_id)
    return ritual if ritual is not None and ritual.user_id == user_id else None
