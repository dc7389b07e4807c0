"""Delivery outbox (one row per user+kind+slot, claimed once, failed after N attempts), action
tokens (owner, expiry, single use, concurrent presses act once) and identities (one person per
platform id, even when two first messages race)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from brain.actions.service import create_action, redeem_action
from brain.errors import DomainError
from brain.outbox.models import FAILED, PENDING, SENT, Outbound, OutboxMessage
from brain.outbox.service import claim_pending, enqueue, fail_attempt, mark_attempt_failed, mark_sent
from brain.people.models import Identity, User
from brain.people.service import resolve_identity


async def test_same_slot_is_enqueued_once(brain, user) -> None:
    async with brain.transactions.begin() as uow:
        first = await enqueue(uow.session, user.id, Outbound(text="Guten Morgen"), kind="summary", slot="2026-11-30")
        second = await enqueue(uow.session, user.id, Outbound(text="again"), kind="summary", slot="2026-11-30")
    assert first is not None and second is None
    async with brain.transactions.read() as s:
        assert await s.scalar(select(func.count()).select_from(OutboxMessage)) == 1


async def test_two_concurrent_senders_never_claim_the_same_row(brain, user) -> None:
    async with brain.transactions.begin() as uow:
        for i in range(10):
            await enqueue(uow.session, user.id, Outbound(text=f"m{i}"), kind="reply", slot=str(i))
    claimed: list[list[int]] = []
    release, both_claimed = asyncio.Event(), asyncio.Event()

    async def sender() -> None:
        async with brain.transactions.begin() as uow:
            rows = await claim_pending(uow.session, limit=6)
            claimed.append([r.id for r in rows])
            if len(claimed) == 2:
                both_claimed.set()
            for r in rows:
                await mark_sent(uow.session, r.id, uow.now)
            await release.wait()

    tasks = [asyncio.create_task(sender()) for _ in range(2)]
    # Both transactions hold their locks at the same time before either commits.
    await asyncio.wait_for(both_claimed.wait(), timeout=10)
    release.set()
    await asyncio.gather(*tasks)
    assert not set(claimed[0]) & set(claimed[1])
    assert len(claimed[0]) + len(claimed[1]) == 10
    async with brain.transactions.read() as s:
        assert await s.scalar(select(func.count()).where(OutboxMessage.status == SENT)) == 10


async def test_row_fails_after_max_attempts_and_is_not_claimed_again(brain, user) -> None:
    async with brain.transactions.begin() as uow:
        await enqueue(uow.session, user.id, Outbound(text="x"), kind="reply", slot="1")
    for _ in range(3):
        async with brain.transactions.begin() as uow:
            (row,) = await claim_pending(uow.session)
            await mark_attempt_failed(uow.session, row, "HTTP 502", max_attempts=3)
    async with brain.transactions.begin() as uow:
        assert await claim_pending(uow.session) == []
        row = await uow.session.scalar(select(OutboxMessage))
        assert row is not None and row.status == FAILED and row.attempts == 3 and row.last_error == "HTTP 502"


async def test_fail_attempt_counts_keeps_the_error_and_fails_the_row_at_max_attempts(brain, user) -> None:
    async with brain.transactions.begin() as uow:
        row_id = await enqueue(uow.session, user.id, Outbound(text="x"), kind="reply", slot="1")
    assert row_id is not None
    seen = []
    for error in ("HTTP 502", "HTTP 503", "x" * 3000):
        async with brain.db.engine.begin() as connection:
            seen.append(await fail_attempt(connection, user.id, row_id, error, max_attempts=3))
    assert seen == [(PENDING, 1), (PENDING, 2), (FAILED, 3)]
    async with brain.transactions.read() as s:
        row = await s.scalar(select(OutboxMessage))
        assert row is not None and row.status == FAILED and row.attempts == 3 and row.last_error == "x" * 2000


async def test_action_token_is_for_its_owner_once_and_expires(brain, user, clock) -> None:
    async with brain.transactions.begin() as uow:
        other = await resolve_identity(uow.session, "test", "other", default_locale="de",
                                       default_timezone="Europe/Berlin")
        token = await create_action(uow.session, user.id, "tool", {"name": "log_drink"}, now=uow.now)
        late = await create_action(uow.session, user.id, "tool", {}, now=uow.now, ttl=timedelta(minutes=1))
    with pytest.raises(DomainError) as foreign:
        async with brain.transactions.begin() as uow:
            await redeem_action(uow.session, other.id, token, now=uow.now)
    assert foreign.value.code == "unknown_action"
    async with brain.transactions.begin() as uow:
        action = await redeem_action(uow.session, user.id, token, now=uow.now)
    assert action.payload == {"name": "log_drink"}
    with pytest.raises(DomainError) as used:
        async with brain.transactions.begin() as uow:
            await redeem_action(uow.session, user.id, token, now=uow.now)
    assert used.value.code == "action_used"
    clock.advance(timedelta(minutes=2))
    with pytest.raises(DomainError) as expired:
        async with brain.transactions.begin() as uow:
            await redeem_action(uow.session, user.id, late, now=uow.now)
    assert expired.value.code == "action_expired"


async def test_concurrent_presses_of_one_button_act_once(brain, user) -> None:
    async with brain.transactions.begin() as uow:
        token = await create_action(uow.session, user.id, "tool", {}, now=uow.now)

    async def press() -> str:
        try:
            async with brain.transactions.begin() as uow:
                await redeem_action(uow.session, user.id, token, now=uow.now)
            return "ok"
        except DomainError as refused:
            return refused.code

    results = await asyncio.gather(*(press() for _ in range(5)))
    assert sorted(results) == ["action_used"] * 4 + ["ok"]


async def test_two_first_messages_at_once_make_one_person(brain) -> None:
    async def first_contact() -> User:
        async with brain.transactions.begin() as uow:
            return await resolve_identity(uow.session, "telegram", "4242", default_locale="de",
                                          default_timezone="Europe/Berlin")

    users = await asyncio.gather(*(first_contact() for _ in range(4)))
    assert len({u.id for u in users}) == 1
    async with brain.transactions.read() as s:
        assert await s.scalar(select(func.count()).select_from(Identity)) == 1
        assert await s.scalar(select(func.count()).select_from(User)) == 1
