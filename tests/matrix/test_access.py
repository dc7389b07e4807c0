"""Who may talk to the Matrix bot, and loud configuration failures, with real matrix-nio clients on a real Synapse:
a stranger's invitation is accepted (they may hold an invite code), told once that the companion is private, and
nothing is stored for them; `!start CODE` admits them; with MATRIX_ALLOWED_USERS, someone not listed is declined;
a wrong password ends the bot's start (and `companion run`) at once, naming MATRIX_PASSWORD; the doctor logs in for
real and fails on a wrong password or a homeserver where nothing listens."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
from nio import RoomMemberEvent

from adapters.matrix.adapter import MatrixAdapter
from adapters.matrix.session import MatrixLoginError
from app.doctor import FAIL, OK, check_matrix
from bot.access import AccessPolicy, create_invite
from bot.dialog import Dialog
from bot.settings import load_settings
from brain.core import Brain
from tests.matrix.conftest import BotRunner
from tests.matrix.people import MatrixPerson
from tests.matrix.synapse import Synapse
from tests.personal_rows import personal_row_counts

ROOT = Path(__file__).resolve().parents[2]
PRIVATE = "private companion"


async def closed_bot(synapse: Synapse, brain: Brain, policy: AccessPolicy) -> BotRunner:
    account = await asyncio.to_thread(synapse.register)
    dialog = Dialog(brain, default_locale="en", default_timezone="Europe/Berlin", access=policy)
    runner = BotRunner(synapse, brain, dialog, account, Path(tempfile.mkdtemp(prefix="mbot-")))
    await runner.start()
    return runner


@pytest.fixture
async def pairing_bot(synapse: Synapse, brain: Brain) -> AsyncIterator[BotRunner]:
    runner = await closed_bot(synapse, brain, AccessPolicy())
    try:
        yield runner
    finally:
        await runner.stop()
        shutil.rmtree(runner.config.data_dir, ignore_errors=True)


@pytest.mark.slow
async def test_a_stranger_is_told_once_and_an_invite_code_admits_them(pairing_bot, matrix_people, brain) -> None:
    before = await personal_row_counts(brain)
    alice: MatrixPerson = await matrix_people()
    bot = pairing_bot.user_id
    mark = alice.mark()
    room = await alice.open_direct_room(bot)
    notice = await alice.message_from(bot, room, after=mark, contains=PRIVATE)
    assert "!start CODE" in notice.body
    for text in ("!water 250", "hello there", "!link ABC123"):
        await alice.send(room, text)
    wrong = await alice.say(bot, room, "!start WRONG-CODE", contains="does not work")
    assert wrong is not None
    assert len(alice.messages_from(bot, room, after=mark)) == 2  # the notice and the wrong code, nothing else
    assert await personal_row_counts(brain) == before

    code, _ = await create_invite(brain)
    mark = alice.mark()
    await alice.send(room, f"!start {code}")
    welcome = await alice.message_from(bot, room, after=mark, contains="invite code worked")
    assert "owner" in welcome.body
    await alice.message_from(bot, room, after=mark, contains="Hello")
    answer = await alice.say(bot, room, "!water 250", contains="250")
    assert answer is not None


@pytest.mark.slow
async def test_with_an_allowlist_someone_not_listed_is_declined(synapse, brain, matrix_people) -> None:
    alice: MatrixPerson = await matrix_people()
    runner = await closed_bot(synapse, brain, AccessPolicy(allowlists={"matrix": ("@someone-else:localhost",)}))
    try:
        mark = alice.mark()
        room = await alice.open_direct_room(runner.user_id)
        await alice.wait_for(lambda s: s.room_id == room and isinstance(s.event, RoomMemberEvent)
                             and s.event.state_key == runner.user_id and s.event.membership == "leave", after=mark)
        assert alice.messages_from(runner.user_id, room, after=mark) == []
    finally:
        await runner.stop()
        shutil.rmtree(runner.config.data_dir, ignore_errors=True)


@pytest.mark.slow
async def test_a_wrong_password_ends_the_start_at_once(bot_runner: BotRunner) -> None:
    config = replace(bot_runner.config, password="not-the-password")
    adapter = MatrixAdapter(bot_runner.brain, bot_runner.dialog, config)
    with pytest.raises(MatrixLoginError, match="MATRIX_PASSWORD was refused") as refused:
        await asyncio.wait_for(adapter.start(), 60)
    assert "not-the-password" not in str(refused.value)


@pytest.mark.slow
async def test_companion_run_with_a_wrong_password_exits_at_once(synapse: Synapse, database_url: str) -> None:
    account = await asyncio.to_thread(synapse.register)
    env = {**os.environ, "MATRIX_HOMESERVER": synapse.url, "MATRIX_USER_ID": account.user_id,
           "MATRIX_PASSWORD": "wrong-password-1234", "DATABASE_URL": database_url, "COMPANION_LLM": "false",
           "COMPANION_DATA_DIR": tempfile.mkdtemp(prefix="cmx", dir="/tmp"), "LOG_LEVEL": "INFO"}
    env.pop("TELEGRAM_TOKEN", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "app.cli", "run", cwd=ROOT, env=env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 180)
    said = (out + err).decode()
    assert process.returncode == 2, said
    assert "MATRIX_PASSWORD was refused" in said and "password-1234" not in said
    assert "Traceback" not in said and "Unclosed" not in said


@pytest.mark.slow
async def test_the_doctor_logs_in_for_real(synapse: Synapse) -> None:
    account = await asyncio.to_thread(synapse.register)

    def check(password: str) -> tuple[str, str]:
        finding = check_matrix(load_settings(MATRIX_HOMESERVER=synapse.url, MATRIX_USER_ID=account.user_id,
                                             MATRIX_PASSWORD=password))
        return finding.status, finding.text

    status, text = await asyncio.to_thread(check, account.password)
    assert status == OK, text
    status, text = await asyncio.to_thread(check, "wrong-password-1234")
    assert status == FAIL and "MATRIX_PASSWORD was refused" in text and "password-1234" not in text


def test_the_doctor_fails_where_no_homeserver_listens() -> None:
    finding = check_matrix(load_settings(MATRIX_HOMESERVER="http://127.0.0.1:9", MATRIX_USER_ID="@bot:localhost",
                                         MATRIX_PASSWORD="secret-password"))
    assert finding.status == FAIL and "nothing answers at MATRIX_HOMESERVER http://127.0.0.1:9" in finding.text
