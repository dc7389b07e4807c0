"""End-to-end encryption (MATRIX_E2E): in an encrypted direct room the bot reads what the person wrote and
answers encrypted. Needs the encryption extra of matrix-nio (`pip install 'matrix-nio[e2e]'`, vodozemac
wheels); skipped without it, as the option is off by default."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import pytest
from nio.crypto import ENCRYPTION_ENABLED

from tests.matrix.people import MatrixPerson

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not ENCRYPTION_ENABLED, reason="matrix-nio[e2e] is not installed"),
]


async def test_an_encrypted_direct_room_is_read_and_answered_encrypted(bot_runner, synapse) -> None:
    await bot_runner.start(e2e=True)
    bot = bot_runner.user_id
    account = await asyncio.to_thread(synapse.register)
    alice = MatrixPerson(synapse.url, account, e2e_store=Path(tempfile.mkdtemp(prefix="e2e-")))
    await alice.start()
    try:
        mark = alice.mark()
        room = await alice.open_direct_room(bot, encrypted=True)
        greeting = await alice.message_from(bot, room, after=mark, contains="Hello")
        assert greeting.decrypted  # it came encrypted and Alice's client could read it
        reply = await alice.say(bot, room, "!water 250", contains="Logged 250 ml water")
        assert reply.decrypted
    finally:
        await alice.close()
