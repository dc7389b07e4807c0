"""`Lean`: a Core statement compiled once and run by psycopg alone must behave as SQLAlchemy's execution of it
would: the same rows, values bound the same way (JSONB, an IN of fixed values), in the caller's transaction or
autocommit, errors raised as `sqlalchemy.exc` errors, and a lost connection invalidated so that the pool replaces
it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import psycopg
import pytest
from sqlalchemy import BigInteger, bindparam, insert, select, text
from sqlalchemy.exc import ArgumentError, DBAPIError, IntegrityError

from brain.clock import SystemClock
from brain.events.bus import EventBus
from brain.outbox.models import OutboxMessage
from brain.people.models import Identity, User
from brain.people.service import find_identity, resolve_identity
from brain.store.database import Database
from brain.store.lean import Lean
from brain.store.unit_of_work import Transactions
from tests.conftest import PgServer

_ADD = Lean(insert(OutboxMessage).values(
    user_id=bindparam("owner"), kind="reply", slot=bindparam("slot"), platform="test", chat_id="c1",
    text=bindparam("text"), buttons=bindparam("buttons"), status="pending", attempts=0).returning(OutboxMessage.id))
_OF_STATEMENT = (select(OutboxMessage.id, OutboxMessage.text, OutboxMessage.buttons, OutboxMessage.created_at)
                 .where(OutboxMessage.user_id == bindparam("owner"), OutboxMessage.kind.in_(("reply", "nudge")),
                        OutboxMessage.id >= bindparam("from", type_=BigInteger))
                 .order_by(OutboxMessage.id))
_OF = Lean(_OF_STATEMENT)


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    database = Database(database_url, pool_size=1)
    yield database
    await database.dispose()


@pytest.fixture
async def idle_db(database_url: str) -> AsyncIterator[Database]:
    database = Database(database_url, pool_size=1, ping_after_idle=3600.0)
    yield database
    await database.dispose()


async def person(db: Database) -> uuid.UUID:
    user_id = uuid.uuid4()
    async with db.engine.begin() as connection:
        await connection.execute(insert(User).values(id=user_id, locale="en", timezone="UTC"))
        await connection.execute(insert(Identity).values(id=uuid.uuid4(), user_id=user_id, platform="test",
                                                         platform_id=str(user_id)))
    return user_id


async def test_rows_and_values_are_those_of_sqlalchemy(db: Database) -> None:
    owner = await person(db)
    buttons = [[{"label": "Ja", "token": "t1"}]]
    async with db.autocommit() as connection:
        first = await _ADD.scalar(connection, {"owner": owner, "slot": "a", "text": "hallo", "buttons": buttons})
        await _ADD.run(connection, {"owner": owner, "slot": "b", "text": "zwei", "buttons": []})
        lean = await _OF.rows(connection, {"owner": owner, "from": first})
    async with db.engine.connect() as connection:
        plain = (await connection.execute(select(OutboxMessage.id, OutboxMessage.text, OutboxMessage.buttons,
                                                 OutboxMessage.created_at)
                                          .where(OutboxMessage.user_id == owner).order_by(OutboxMessage.id))).all()
    assert [tuple(row) for row in lean] == [tuple(row) for row in plain]
    assert lean[0].text == "hallo" and lean[0].buttons == buttons  # JSONB bound as SQLAlchemy binds it
    assert lean[1].buttons == [] and isinstance(lean[1].created_at, datetime)
    assert "IN (%(kind_1_1)s::VARCHAR, %(kind_1_2)s::VARCHAR)" in _OF.sql  # the fixed IN, expanded once


async def test_it_runs_in_the_callers_transaction(db: Database) -> None:
    owner = await person(db)
    with pytest.raises(RuntimeError):
        async with db.engine.begin() as connection:
            await _ADD.run(connection, {"owner": owner, "slot": "a", "text": "x", "buttons": []})
            raise RuntimeError("the transaction fails after the write")
    async with db.engine.connect() as connection:
        assert await _OF.rows(connection, {"owner": owner, "from": 0}) == []


async def test_commit_as_you_go_commits_it(db: Database) -> None:
    """On a connection SQLAlchemy has not begun, the statement begins it as SQLAlchemy would: `commit()` keeps the
    write, closing without it drops the write."""
    owner = await person(db)
    async with db.engine.connect() as connection:
        await _ADD.run(connection, {"owner": owner, "slot": "kept", "text": "x", "buttons": []})
        await connection.commit()
    async with db.engine.connect() as connection:
        await _ADD.run(connection, {"owner": owner, "slot": "dropped", "text": "x", "buttons": []})
    async with db.engine.connect() as connection:
        assert [row.text for row in await _OF.rows(connection, {"owner": owner, "from": 0})] == ["x"]


async def test_errors_are_sqlalchemys_and_a_missing_value_is_refused(db: Database) -> None:
    owner = await person(db)
    async with db.autocommit() as connection:
        with pytest.raises(ArgumentError, match="slot"):
            await _ADD.run(connection, {"owner": owner, "text": "x", "buttons": []})
        await _ADD.run(connection, {"owner": owner, "slot": "a", "text": "x", "buttons": []})
        with pytest.raises(IntegrityError) as twice:  # (user, kind, slot) is unique
            await _ADD.run(connection, {"owner": owner, "slot": "a", "text": "y", "buttons": []})
        assert isinstance(twice.value.orig, psycopg.errors.UniqueViolation)
        assert not twice.value.connection_invalidated
        assert len(await _OF.rows(connection, {"owner": owner, "from": 0})) == 1  # still usable


async def test_a_lost_connection_is_invalidated_and_replaced(idle_db: Database, pg_server: PgServer) -> None:
    db = idle_db  # never pinged: the statement itself finds the connection gone
    owner = await person(db)
    async with db.engine.connect() as connection:
        dead = int((await connection.execute(text("SELECT pg_backend_pid()"))).scalar_one())
    with pg_server.admin() as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (dead,))
    with pytest.raises(DBAPIError) as lost:
        async with db.autocommit() as connection:
            await _OF.rows(connection, {"owner": owner, "from": 0})
    assert lost.value.connection_invalidated
    async with db.autocommit() as connection:
        assert await _OF.rows(connection, {"owner": owner, "from": 0}) == []
        assert int((await connection.execute(text("SELECT pg_backend_pid()"))).scalar_one()) != dead


async def test_a_found_person_is_detached_like_a_loaded_one(db: Database) -> None:
    owner = await person(db)
    async with db.autocommit() as connection:
        found = await find_identity(connection, "test", str(owner))
        assert await find_identity(connection, "test", "nobody") is None
    assert found is not None and found.id == owner and found.timezone == "UTC"
    async with db.sessions() as session, session.begin():  # it can be changed in a later unit of work
        session.add(found)
        found.timezone = "Europe/Berlin"
    async with db.engine.connect() as connection:
        stored = (await connection.execute(select(User.timezone, User.created_at).where(User.id == owner))).one()
    assert stored.timezone == "Europe/Berlin" and stored.created_at <= datetime.now(UTC)


def test_a_statement_with_a_bound_in_list_is_refused() -> None:
    with pytest.raises(ValueError, match="IN of fixed values"):
        Lean(select(User.id).where(User.locale.in_(bindparam("locales", expanding=True))))


async def test_two_first_contacts_at_once_end_with_one_person(db: Database) -> None:
    """The second of two first contacts waits on the first's identity row, finds the first's person once it commits
    and drops its own (the lean lookup on the unit's connection, with its own user still to be deleted)."""
    transactions = Transactions(db, EventBus(), SystemClock())
    first_in = asyncio.Event()
    let_go = asyncio.Event()

    async def first() -> uuid.UUID:
        async with transactions.begin() as uow:
            user = await resolve_identity(uow.session, "test", "racer", default_locale="en", default_timezone="UTC")
            first_in.set()
            await let_go.wait()  # hold the identity row uncommitted while the second contact arrives
        return user.id

    async def second() -> uuid.UUID:
        await first_in.wait()
        async with transactions.begin() as uow:
            user = await resolve_identity(uow.session, "test", "racer", default_locale="en", default_timezone="UTC")
        return user.id

    async def release() -> None:
        await first_in.wait()
        await asyncio.sleep(0.3)  # the second is blocked on the first's identity row by then
        let_go.set()

    winner, loser, _ = await asyncio.gather(first(), second(), release())
    assert winner == loser
    async with db.engine.connect() as connection:
        people = (await connection.execute(text("SELECT count(*) FROM users u JOIN identities i ON i.user_id = u.id "
                                                "WHERE i.platform_id = 'racer'"))).scalar_one()
        orphans = (await connection.execute(text("SELECT count(*) FROM users u WHERE NOT EXISTS "
                                                 "(SELECT 1 FROM identities i WHERE i.user_id = u.id)"))).scalar_one()
    assert (people, orphans) == (1, 0)


async def test_a_lean_statement_is_prepared_at_its_first_run_and_kept_generic_after_five_custom_plans(
        db: Database) -> None:
    """psycopg alone prepares a statement at its sixth run on a connection; a lean one (a hot one) at its first, so
    PostgreSQL plans it 6 times per connection instead of 10. `prepare=False` keeps psycopg's own rule."""
    owner = await person(db)
    plans = text("SELECT generic_plans, custom_plans FROM pg_prepared_statements")
    unprepared = Lean(_OF_STATEMENT, prepare=False)
    async with db.engine.connect() as connection:
        assert (await connection.execute(plans)).all() == []
        await _OF.rows(connection, {"owner": owner, "from": 0})
        assert [tuple(row) for row in await connection.execute(plans)] == [(0, 1)]
        for _ in range(6):
            await _OF.rows(connection, {"owner": owner, "from": 0})
        assert [tuple(row) for row in await connection.execute(plans)] == [(2, 5)]
        for _ in range(5):
            await unprepared.rows(connection, {"owner": owner, "from": 0})
        assert len((await connection.execute(plans)).all()) == 1  # not yet: psycopg's sixth run
        await connection.rollback()
