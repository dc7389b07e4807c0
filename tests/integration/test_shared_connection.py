"""`Database.sharing`: one message's glances, one after another, share one pooled connection; concurrent ones,
transactions and uses after the scope do not; a failing use gives the connection back."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text

from brain.core import Brain


async def backend(brain: Brain) -> int:
    async with brain.db.autocommit() as connection:
        return int(await connection.scalar(text("SELECT pg_backend_pid()")) or 0)


def checked_out(brain: Brain) -> int:
    return int(brain.db.engine.sync_engine.pool.checkedout())  # type: ignore[attr-defined]


async def test_consecutive_glances_share_one_connection_and_return_it(brain: Brain) -> None:
    async with brain.db.sharing():
        first = await backend(brain)
        async with brain.transactions.glance() as session:
            second = int(await session.scalar(text("SELECT pg_backend_pid()")) or 0)
        assert first == second
        assert checked_out(brain) == 1  # kept between uses
    assert checked_out(brain) == 0


async def test_concurrent_uses_get_connections_of_their_own(brain: Brain) -> None:
    seen: list[int] = []

    async def hold() -> None:
        async with brain.db.autocommit() as connection:
            seen.append(int(await connection.scalar(text("SELECT pg_backend_pid()")) or 0))
            await asyncio.sleep(0.05)

    async with brain.db.sharing():
        await asyncio.gather(hold(), hold(), hold())
        async with brain.db.autocommit() as outer:
            inner = await backend(brain)  # nested: the shared one is busy
            assert inner != await outer.scalar(text("SELECT pg_backend_pid()"))
    assert len(set(seen)) == 3
    assert checked_out(brain) == 0


async def test_a_transaction_does_not_hold_the_shared_connection_too(brain: Brain) -> None:
    async with brain.db.sharing():
        await backend(brain)
        async with brain.transactions.begin() as uow:
            await uow.session.execute(text("SELECT 1"))
            assert checked_out(brain) == 1  # the shared one went back first
        await backend(brain)
        assert checked_out(brain) == 1


async def test_a_failing_use_gives_the_connection_back(brain: Brain) -> None:
    async with brain.db.sharing():
        first = await backend(brain)
        with pytest.raises(Exception, match="division by zero"):
            async with brain.db.autocommit() as connection:
                await connection.execute(text("SELECT 1 / 0"))
        assert checked_out(brain) == 0
        assert await backend(brain) > 0 and first > 0  # the next use takes one again
    assert checked_out(brain) == 0


async def test_a_task_that_outlives_the_scope_uses_a_connection_of_its_own(brain: Brain) -> None:
    go = asyncio.Event()

    async def later() -> int:
        await go.wait()
        return await backend(brain)

    async with brain.db.sharing():
        await backend(brain)
        task = asyncio.get_running_loop().create_task(later())
    assert checked_out(brain) == 0
    go.set()
    assert await task > 0
    assert checked_out(brain) == 0


async def test_unshared_holds_no_connection(brain: Brain) -> None:
    async with brain.db.sharing():
        await backend(brain)
        async with brain.db.unshared():
            assert checked_out(brain) == 0
            await backend(brain)
            assert checked_out(brain) == 0  # not kept: no scope here
        await backend(brain)
        assert checked_out(brain) == 1
