"""The ritual state machine. A run walks the ritual's steps in order; its state (the waiting step, answers,
ticked checklist items, counts) is a row in `ritual_runs`, so a restart resumes it at the same step, and at
most one run per person is running. Info steps are shown and passed on the way; the others wait for an answer
(done, a value, or skip). A run untouched for longer than the timeout is abandoned. Reaching the end, stopping
or abandoning writes the day's log row (the best of the day is kept; `completed_at` once every step was done).

Answering runs the step's tool as the person (they pressed the button) and advances the run while the run's
row stays locked, so two presses on one step act once."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import exists, func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from brain.errors import DomainError
from brain.events.actor import USER
from brain.i18n import Text, tr
from brain.people.local_time import local_date
from brain.people.models import User
from brain.rituals.models import ABANDONED, ACTIVE, FINISHED, RUNNING, STOPPED, Ritual, RitualLog, RitualRun
from brain.rituals.service import ritual_from_template, ritual_steps
from brain.rituals.steps import (
    ChecklistStep,
    InfoDisplayStep,
    MoodPickerStep,
    NumberInputStep,
    Step,
    TextInputStep,
    ToolCallStep,
)
from brain.store.base import constant
from brain.store.unit_of_work import UnitOfWork

if TYPE_CHECKING:
    from sqlalchemy.sql.expression import Exists

    from brain.kernel import Kernel

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = timedelta(hours=2)
MAX_TEXT_ANSWER = 500


@dataclass
class Progress:
    run: RitualRun
    ritual: Ritual
    steps: list[Step]
    passed: list[int] = field(default_factory=list)  # info steps shown and passed on the way here, in order
    stopped: Ritual | None = None  # another ritual that was running and was stopped to start this one

    @property
    def finished(self) -> bool:
        return self.run.status != RUNNING

    @property
    def index(self) -> int:
        return self.run.step_index

    @property
    def step(self) -> Step | None:
        return self.steps[self.run.step_index] if not self.finished and self.run.step_index < len(self.steps) else None

    def ticked(self, index: int) -> list[int]:
        value = self.run.answers.get(str(index))
        return [int(i) for i in value] if isinstance(value, list) else []


@dataclass
class Outcome:
    progress: Progress | None = None
    said: list[Text] = field(default_factory=list)  # results of the tools a step ran
    refused: Text | None = None  # why nothing moved (a stale button, a value out of range, a failed tool)


def is_stale(run: RitualRun, now: datetime, timeout: timedelta) -> bool:
    return run.status == RUNNING and now - run.updated_at > timeout


def has_running_run(person: Any) -> Exists:
    """Whether the person (a bound parameter) has a run going, timed out or not: a condition for the checks the
    dialog makes on every free text (`bot.dialog`)."""
    return exists().where(RitualRun.user_id == person, RitualRun.status == constant(RUNNING))


class RitualRunner:
    """One per brain (`Brain.rituals`), shared by the ritual commands and the timeout job; the scheduler sets the
    configured timeout."""

    def __init__(self, brain: Kernel, timeout: timedelta = DEFAULT_TIMEOUT) -> None:
        self.brain = brain
        self.timeout = timeout

    # ---- reading ----------------------------------------------------------------------------------------
    async def current(self, user: User) -> Progress | None:
        """The person's running run (not yet timed out), at its waiting step."""
        now = self.brain.clock.now()
        async with self.brain.transactions.glance() as session:
            found = await _running(session, user.id)
            if found is None or is_stale(found[0], now, self.timeout):
                return None
            run, ritual = found
            return Progress(run, ritual, ritual_steps(ritual))

    # ---- starting and stopping --------------------------------------------------------------------------
    async def start(self, user: User, ritual_id: uuid.UUID) -> Outcome:
        """Starts the ritual (a running run of the same ritual is resumed instead; one of another ritual is
        stopped first and keeps its partial log)."""
        async with self.brain.transactions.begin() as uow:
            ritual = await uow.session.get(Ritual, ritual_id)
            if ritual is None or ritual.user_id != user.id or ritual.status != ACTIVE:
                return Outcome(refused=tr("That ritual no longer exists."))
            return Outcome(await self._start(uow, user, ritual))

    async def start_template(self, user: User, template_id: str) -> Outcome:
        try:
            async with self.brain.transactions.begin() as uow:
                ritual = await ritual_from_template(uow, user, USER, template_id)
                return Outcome(await self._start(uow, user, ritual))
        except DomainError as refused:
            return Outcome(refused=refused.text)

    async def _start(self, uow: UnitOfWork, user: User, ritual: Ritual) -> Progress:
        steps = ritual_steps(ritual)
        # One start at a time per person (two taps on two start buttons must not race for the one running run).
        await uow.session.execute(select(User.id).where(User.id == user.id).with_for_update())
        found = await _running(uow.session, user.id, lock=True)
        stopped = None
        if found is not None:
            run, running_ritual = found
            if is_stale(run, uow.now, self.timeout):
                await _end(uow, run, running_ritual, ABANDONED)
            elif run.ritual_id == ritual.id:
                return Progress(run, ritual, steps)
            else:
                await _end(uow, run, running_ritual, STOPPED)
                stopped = running_ritual  # said in the reply: its open step no longer takes an answer
            await uow.session.flush()  # the partial unique index allows the new run only after this
        run = RitualRun(id=uuid.uuid4(), user_id=user.id, ritual_id=ritual.id, status=RUNNING, step_index=0,
                        completed_steps=0, skipped_steps=0, answers={}, local_date=local_date(user, uow.now),
                        started_at=uow.now, updated_at=uow.now)
        uow.session.add(run)
        progress = Progress(run, ritual, steps, stopped=stopped)
        await _settle(uow, progress)
        return progress

    async def stop(self, user: User) -> Progress | None:
        async with self.brain.transactions.begin() as uow:
            found = await _running(uow.session, user.id, lock=True)
            if found is None:
                return None
            run, ritual = found
            await _end(uow, run, ritual, ABANDONED if is_stale(run, uow.now, self.timeout) else STOPPED)
            return Progress(run, ritual, ritual_steps(ritual))

    # ---- answering --------------------------------------------------------------------------------------
    async def answer(self, user: User, run_id: uuid.UUID, index: int, *, value: Any = None,
                     skip: bool = False) -> Outcome:
        """Completes the waiting step `index` with `value` (a number, a mood, words; None for a plain "done"),
        or skips it."""
        async with self.brain.transactions.begin() as uow:
            locked = await self._locked(uow, user, run_id, index)
            if isinstance(locked, Outcome):
                return locked
            progress = locked
            step = progress.steps[index]
            outcome = Outcome(progress)
            if not skip:
                refused = await self._perform(user, step, value, outcome)
                if refused is not None:
                    return Outcome(progress, outcome.said, refused)
            _complete(progress, uow.now, skipped=skip, answer=None if skip else _stored(step, value))
            await _settle(uow, progress)
            return outcome

    async def tick(self, user: User, run_id: uuid.UUID, index: int, item: int) -> Outcome:
        """Ticks one checklist item (running its tool, if any); the step is done when every item is ticked."""
        async with self.brain.transactions.begin() as uow:
            locked = await self._locked(uow, user, run_id, index)
            if isinstance(locked, Outcome):
                return locked
            progress = locked
            step = progress.steps[index]
            if not isinstance(step, ChecklistStep) or not 0 <= item < len(step.items):
                return Outcome(progress, refused=tr("That button is not valid."))
            ticked = progress.ticked(index)
            if item in ticked:
                return Outcome(progress, refused=tr("That one is ticked already."))
            outcome = Outcome(progress)
            entry = step.items[item]
            if entry.tool is not None:
                result = await self.brain.tools.execute(user.id, entry.tool, dict(entry.args), USER)
                if result.message is not None:
                    outcome.said.append(result.message)
                if not result.ok:
                    return Outcome(progress, outcome.said, tr("That did not work, so it is not ticked."))
            progress.run.answers = {**progress.run.answers, str(index): [*ticked, item]}
            progress.run.updated_at = uow.now
            if len(ticked) + 1 == len(step.items):
                _complete(progress, uow.now, skipped=False, answer=[*ticked, item])
                await _settle(uow, progress)
            return outcome

    async def _locked(self, uow: UnitOfWork, user: User, run_id: uuid.UUID, index: int) -> Progress | Outcome:
        run = await uow.session.scalar(
            select(RitualRun).where(RitualRun.user_id == user.id, RitualRun.id == run_id).with_for_update())
        if run is None:
            return Outcome(refused=tr("That button is not valid."))
        ritual = await uow.session.get(Ritual, run.ritual_id)
        assert ritual is not None
        progress = Progress(run, ritual, ritual_steps(ritual))
        if is_stale(run, uow.now, self.timeout):
            await _end(uow, run, ritual, ABANDONED)
            return Outcome(progress, refused=tr("This ritual timed out. Start it again with /ritual."))
        if run.status != RUNNING:
            return Outcome(refused=tr("This ritual is over. Start it again with /ritual."))
        if run.step_index != index:
            return Outcome(progress, refused=tr("That step is done already."))
        return progress

    async def _perform(self, user: User, step: Step, value: Any, outcome: Outcome) -> Text | None:
        """Runs what the step does with the answer; returns why it was refused, if it was."""
        call: tuple[str, dict[str, Any]] | None = None
        if isinstance(step, ToolCallStep):
            call = (step.tool, dict(step.args))
        elif isinstance(step, NumberInputStep):
            if not isinstance(value, int) or isinstance(value, bool) or not step.minimum <= value <= step.maximum:
                return tr("Please give a number from {min} to {max}.", min=step.minimum, max=step.maximum)
            call = step.call_with(value)
        elif isinstance(step, MoodPickerStep):
            if value not in (1, 2, 3, 4, 5):
                return tr("Please pick a mood from 1 to 5.")
            call = step.call_with(value)
        elif isinstance(step, TextInputStep):
            if not isinstance(value, str) or not value.strip():
                return tr("Please write a few words, or skip this step.")
            words = value.strip()[:MAX_TEXT_ANSWER]
            call = step.call_with(words)
            if step.remember and self.brain.memory is not None:
                await self.brain.memory.remember(user.id, words, self.brain.clock.now(), speaker="user")
        elif isinstance(step, ChecklistStep):
            return None  # "Done" before every item is ticked: the step counts as done
        if call is not None:
            result = await self.brain.tools.execute(user.id, call[0], call[1], USER)
            if result.message is not None:
                outcome.said.append(result.message)
            if not result.ok:
                return tr("That step did not work; try again or skip it.")
        return None

    # ---- the timeout sweep (a scheduler job) ------------------------------------------------------------
    async def abandon_stale(self, now: datetime) -> int:
        """Abandons every run untouched for longer than the timeout (logging its partial progress)."""
        abandoned = 0
        async with self.brain.transactions.begin() as uow:
            runs = (await uow.session.scalars(
                select(RitualRun)
                .where(RitualRun.status == constant(RUNNING), RitualRun.updated_at < now - self.timeout)
                .with_for_update(skip_locked=True).limit(1000))).all()
            for run in runs:
                ritual = await uow.session.get(Ritual, run.ritual_id)
                assert ritual is not None
                await _end(uow, run, ritual, ABANDONED)
                abandoned += 1
        if abandoned:
            log.info("abandoned %d ritual runs untouched for %s", abandoned, self.timeout)
        return abandoned


# ---- state changes inside one unit of work ----------------------------------------------------------------
async def _running(session: AsyncSession, user_id: uuid.UUID, *, lock: bool = False) -> tuple[RitualRun, Ritual] | None:
    stmt = select(RitualRun).where(RitualRun.user_id == user_id, RitualRun.status == constant(RUNNING))
    run = await session.scalar(stmt.with_for_update() if lock else stmt)
    if run is None:
        return None
    ritual = await session.get(Ritual, run.ritual_id)
    assert ritual is not None
    return run, ritual


def _stored(step: Step, value: Any) -> Any:
    """What the run keeps of an answer: the value of an input step; nothing for a done action."""
    return value if isinstance(step, NumberInputStep | MoodPickerStep | TextInputStep) else None


def _complete(progress: Progress, now: datetime, *, skipped: bool, answer: Any) -> None:
    run = progress.run
    if skipped:
        run.skipped_steps += 1
    else:
        run.completed_steps += 1
        if answer is not None:
            run.answers = {**run.answers, str(run.step_index): answer}
    run.step_index += 1
    run.updated_at = now


async def _settle(uow: UnitOfWork, progress: Progress) -> None:
    """Passes the info steps from the current position on and finishes the run at the end."""
    run = progress.run
    while run.step_index < len(progress.steps) and isinstance(progress.steps[run.step_index], InfoDisplayStep):
        progress.passed.append(run.step_index)
        run.completed_steps += 1
        run.step_index += 1
    run.updated_at = uow.now
    if run.step_index >= len(progress.steps):
        await _end(uow, run, progress.ritual, FINISHED)


async def _end(uow: UnitOfWork, run: RitualRun, ritual: Ritual, status: str) -> None:
    run.status, run.finished_at = status, uow.now
    total = len(ritual.steps)
    if status == FINISHED or run.completed_steps:
        await _log(uow.session, run, total, uow.now)


async def _log(session: AsyncSession, run: RitualRun, total: int, now: datetime) -> None:
    completed_at = now if run.status == FINISHED and run.completed_steps >= total else None
    stmt = insert(RitualLog).values(user_id=run.user_id, ritual_id=run.ritual_id, day=run.local_date,
                                    completed_steps=run.completed_steps, total_steps=total,
                                    completed_at=completed_at, updated_at=now)
    await session.execute(stmt.on_conflict_do_update(
        index_elements=["user_id", "ritual_id", "day"],
        set_={"completed_steps": func.greatest(RitualLog.completed_steps, stmt.excluded.completed_steps),
              "total_steps": stmt.excluded.total_steps,
              "completed_at": func.coalesce(RitualLog.completed_at, stmt.excluded.completed_at),
              "updated_at": now},
    ))


async def ritual_logs(session: AsyncSession, user_id: uuid.UUID, day: date) -> dict[uuid.UUID, RitualLog]:
    """The person's ritual log rows of one local day, by ritual."""
    rows = (await session.scalars(select(RitualLog).where(RitualLog.user_id == user_id, RitualLog.day == day))).all()
    return {row.ritual_id: row for row in rows}
