"""`companion invite` and `companion access` on the test database: a code that a running bot takes once, and the
list, admission and removal of accounts (the bot's side is in test_access.py)."""

from __future__ import annotations

import asyncio
import re

from typer.testing import CliRunner

from app.cli import cli
from bot.access import AccessPolicy, Sender, code_hash
from bot.dialog import Dialog
from bot.inbound import Inbound
from brain.core import Brain


async def test_invite_and_access_on_the_command_line(brain: Brain, database_url: str) -> None:
    runner = CliRunner()
    env = {"DATABASE_URL": database_url, "COMPANION_ACCESS": "pairing", "TELEGRAM_ALLOWED_USERS": "",
           "MATRIX_ALLOWED_USERS": ""}

    async def run(*args: str) -> tuple[int, str]:
        done = await asyncio.to_thread(runner.invoke, cli, list(args), env=env)
        return done.exit_code, done.output

    code, said = await run("invite")
    assert code == 0, said
    invite = re.search(r"/start (\w+)", said).group(1)  # type: ignore[union-attr]
    assert len(invite) == 10 and invite in said.split() and "24 hours" in said
    async with brain.db.autocommit() as connection:  # only the code's hash is stored
        stored = (await connection.exec_driver_sql("SELECT code_hash FROM access_invites")).scalars().all()
    assert stored == [code_hash(invite)]

    dialog = Dialog(brain, default_locale="en", default_timezone="Europe/Berlin", access=AccessPolicy())
    sent = await dialog.handle(Inbound("telegram", "4242", "4242", "m1", text=f"/start {invite}"))
    assert any("invite code worked" in m.text for m in sent)

    code, said = await run("access", "admit", "telegram:@Alice_W")
    assert code == 0 and "Admitted telegram:@alice_w (member)" in said, said
    code, said = await run("access")
    assert code == 0 and "telegram:4242  owner" in said and "telegram:@alice_w  member" in said, said
    assert await dialog.access.admits(Sender("telegram", "777", "alice_w"))

    code, said = await run("access", "remove", "telegram:4242")
    assert code == 0 and "Removed telegram:4242" in said, said
    dialog.access.forget()
    assert not await dialog.access.admits(Sender("telegram", "4242"))
    code, said = await run("access", "remove", "telegram:4242")
    assert code == 1 and "was not admitted" in said
    code, said = await run("access", "admit", "telegram:alice")
    assert code == 2 and "@username" in said
