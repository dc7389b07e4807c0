"""Who may talk to the bot, through the real python-telegram-bot against the fake Bot API, with the product's default
(pairing): a stranger gets one short notice a day and changes nothing (no person, no message, no memory, no model
call), and is kept only as an HMAC under the installation's secret; an invite code admits one account once, the first
as the owner; a used or expired code is refused; an allowlist admits ids and @usernames; `companion access` changes
reach the running bot without a restart."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.config import Webhook
from bot.access import Access, AccessPolicy, admit, create_invite, remove
from bot.dialog import Dialog
from bot.inbound import Inbound
from bot.models import AccessGrant, AccessInvite, AccessRefusal, InstallationSecret
from brain.clock import FixedClock
from brain.companion.agent import Companion
from brain.core import Brain
from tests.companion.conftest import companion  # noqa: F401  (the companion on the fake model server)
from tests.fakes.ollama_server import FakeOllama
from tests.personal_rows import personal_row_counts
from tests.telegram.conftest import make_adapter, press, replies_after, running, send
from tests.telegram.fake_bot_api import Call, FakeBotAPI, Person
from tests.telegram.test_telegram_webhook import free_port, post

PRIVATE = "private companion"


@pytest.fixture
def closed_dialog(brain: Brain, companion: Companion) -> Dialog:  # noqa: F811
    return Dialog(brain, default_locale="en", default_timezone="Europe/Berlin", access=AccessPolicy())


@pytest.fixture
async def bot(brain: Brain, closed_dialog: Dialog, api: FakeBotAPI) -> AsyncIterator[TelegramAdapter]:
    async with running(make_adapter(brain, closed_dialog, api)) as adapter:
        yield adapter


def texts(calls: list[Call]) -> list[str]:
    return [str(c.params.get("text", "")) for c in calls]


async def test_a_stranger_is_told_once_and_changes_nothing(bot, api, brain, fake_ollama: FakeOllama) -> None:
    before = await personal_row_counts(brain)
    mallory = Person(6601, "Mallory", "de")
    [notice] = await send(api, mallory, "Hallo, wer bist du?")
    assert "privater Begleiter" in notice.params["text"]  # in the language Telegram reports for them
    # Anything else gets nothing: free text, commands, a link code, a forged button.
    for text in ("/water 250", "/today", "/link ABC123", "/start", "erzähl mir was"):
        api.push(api.text(mallory, text))
    api.push({"callback_query": {"id": "cq-forged", "from": mallory.user, "chat_instance": "ci", "data": "abc"}})
    # A wrong invite code is answered (after everything before it in the chat was handled).
    [wrong] = await send(api, mallory, "/start NOPE-NOPE")
    assert "Einladungscode" in wrong.params["text"]
    assert len(api.calls_of("sendMessage", mallory.id)) == 2
    assert await personal_row_counts(brain) == before
    assert fake_ollama.requests == [] and fake_ollama.embed_requests == []


async def test_the_notice_comes_again_the_next_day(bot, api, brain, clock: FixedClock) -> None:
    mallory = Person(6602, "Mallory", "en")
    [notice] = await send(api, mallory, "hi")
    assert PRIVATE in notice.params["text"] and "/start CODE" in notice.params["text"]
    clock.advance(timedelta(hours=25))
    [again] = await send(api, mallory, "hi again")
    assert PRIVATE in again.params["text"]


async def test_a_strangers_row_is_keyed_by_an_hmac_under_the_installations_secret(bot, api, brain) -> None:
    mallory = Person(6603, "Mallory", "en")
    [notice] = await send(api, mallory, "hi")
    assert PRIVATE in notice.params["text"]
    async with brain.transactions.read() as session:
        stored = list((await session.scalars(select(AccessRefusal.account_hash))).all())
        secrets = list((await session.scalars(select(InstallationSecret.value))).all())
    assert len(secrets) == 1 and len(bytes.fromhex(secrets[0])) == 32
    account = b"stranger:telegram:6603"
    assert hashlib.sha256(account).hexdigest() not in stored  # hashing a candidate id does not find the row
    assert stored == [hmac.new(bytes.fromhex(secrets[0]), account, hashlib.sha256).hexdigest()]
    # Another process reads the same secret (none is made twice): the stranger is still told once that day.
    again = await Access(brain, AccessPolicy()).gate(Inbound("telegram", "6603", "6603", "m2", text="hi again"))
    assert not again.admitted and again.notice is None
    async with brain.transactions.read() as session:
        assert len((await session.scalars(select(InstallationSecret.value))).all()) == 1
        assert list((await session.scalars(select(AccessRefusal.account_hash))).all()) == stored


async def test_an_invite_code_admits_one_account_once_and_the_first_is_the_owner(bot, api, brain) -> None:
    code, _ = await create_invite(brain)
    ben = Person(6603, "Ben", "en")
    replies = await send(api, ben, f"/start {code}", replies=2)
    assert "invite code worked" in texts(replies)[0] and "owner" in texts(replies)[0]
    assert "Hello Ben" in texts(replies)[1] or "Hello Ben" in texts(replies)[0]
    [answer] = await send(api, ben, "/water 250")
    assert "250" in answer.params["text"]
    # The code is used: a second account is refused with it and stays a stranger.
    before = await personal_row_counts(brain)
    eve = Person(6604, "Eve", "en")
    [refused] = await send(api, eve, f"/start {code.lower()}")
    assert "does not work" in refused.params["text"]
    assert await personal_row_counts(brain) == before
    # Another code admits a member.
    second, _ = await create_invite(brain)
    replies = await send(api, eve, f"/start {second}", replies=2)
    assert "invite code worked" in texts(replies)[0] and "owner" not in texts(replies)[0]
    async with brain.transactions.read() as session:
        roles = {account: role for account, role in await session.execute(select(AccessGrant.account,
                                                                                  AccessGrant.role))}
    assert roles == {str(ben.id): "owner", str(eve.id): "member"}


async def test_an_expired_code_is_refused(bot, api, brain, clock: FixedClock) -> None:
    code, _ = await create_invite(brain)
    clock.advance(timedelta(hours=24, minutes=1))
    before = await personal_row_counts(brain)
    carol = Person(6605, "Carol", "en")
    [refused] = await send(api, carol, f"/start {code}")
    assert "does not work" in refused.params["text"]
    assert await personal_row_counts(brain) == before


async def test_wrong_codes_are_checked_a_few_times_a_day_only(bot, api, brain, closed_dialog) -> None:
    code, _ = await create_invite(brain)
    mallory = Person(6606, "Mallory", "en")
    for attempt in range(5):
        [refused] = await send(api, mallory, f"/start WRONG{attempt}")
        assert "does not work" in refused.params["text"]
    # Even the right code is not looked at any more today (handed to the dialog directly, to see it was silent).
    told: list[str] = []

    async def tell(text: str) -> None:
        told.append(text)

    attempt = Inbound(platform="telegram", platform_user_id=str(mallory.id), chat_id=str(mallory.id),
                      message_id="m-6606", text=f"/start {code}")
    assert await closed_dialog.handle(attempt, tell=tell) == [] and told == []
    ben = Person(6607, "Ben", "en")
    replies = await send(api, ben, f"/start {code}", replies=2)  # the code is still unused: Ben gets in with it
    assert "invite code worked" in texts(replies)[0]


async def test_the_allowlist_takes_ids_and_usernames(brain, api, companion) -> None:  # noqa: F811
    policy = AccessPolicy(allowlists={"telegram": ("6608", "@dora_w")})
    adapter = make_adapter(brain, Dialog(brain, default_locale="en", default_timezone="Europe/Berlin",
                                         access=policy), api)
    await adapter.start()
    try:
        by_id, by_name = Person(6608, "Ada", "en"), Person(6609, "Dora", "en")
        assert "250" in (await send(api, by_id, "/water 250"))[0].params["text"]
        update = api.text(by_name, "/water 300")
        update["message"]["from"]["username"] = "Dora_W"
        before = len(api.calls_of("sendMessage", by_name.id))
        api.push(update)
        [answer] = await replies_after(api, by_name.id, before, 1)
        assert "300" in answer.params["text"]
        # With an allowlist, codes are not taken on Telegram.
        code, _ = await create_invite(brain)
        [notice] = await send(api, Person(6610, "Eve", "en"), f"/start {code}")
        assert PRIVATE in notice.params["text"] and "CODE" not in notice.params["text"]
    finally:
        await adapter.stop()


async def test_delete_me_removes_the_persons_grant_and_their_next_message_is_a_strangers(
        bot, api, brain) -> None:  # type: ignore[no-untyped-def]
    code, _ = await create_invite(brain)
    gil = Person(6612, "Gil", "en", username="Gil_K")
    await send(api, gil, f"/start {code}", replies=2)
    await admit(brain, "telegram", "@gil_k")  # also named by @username, as an allowlist entry would
    assert await access_rows(brain) == {"grants": 2, "invites naming someone": 1}
    (question,) = await send(api, gil, "/delete_me")
    await press(api, gil, "Delete everything", question)
    assert await access_rows(brain) == {"grants": 0, "invites naming someone": 0}
    before = await personal_row_counts(brain)
    [notice] = await send(api, gil, "/water 250")  # at once: the running bot does not keep the old grant
    assert PRIVATE in notice.params["text"]
    after = await personal_row_counts(brain)  # no person, no message, no drink (the goodbye's row may go meanwhile)
    assert after["identities"] == 0 and all(after[table] <= count for table, count in before.items())


async def access_rows(brain: Brain) -> dict[str, int]:
    async with brain.transactions.read() as session:
        grants = await session.scalar(select(func.count()).select_from(AccessGrant))
        invites = await session.scalar(select(func.count()).select_from(AccessInvite)
                                       .where(AccessInvite.used_by.is_not(None)))
    return {"grants": int(grants or 0), "invites naming someone": int(invites or 0)}


async def test_admitting_and_removing_reach_the_running_bot(bot, api, brain, clock: FixedClock) -> None:
    fay = Person(6611, "Fay", "en")
    assert PRIVATE in (await send(api, fay, "/water 250"))[0].params["text"]
    assert await admit(brain, "telegram", str(fay.id)) == "owner"
    clock.advance(timedelta(seconds=3))  # the bot keeps what it read for two seconds at most
    assert "250" in (await send(api, fay, "/water 250"))[0].params["text"]
    assert await remove(brain, "telegram", str(fay.id))
    clock.advance(timedelta(days=1, seconds=3))  # and the notice of yesterday does not hold back today's
    [notice] = await send(api, fay, "/water 250")
    assert PRIVATE in notice.params["text"]


async def test_the_owner_is_an_administrator_and_a_member_is_not(bot, api, brain) -> None:
    ben, eve = Person(6612, "Ben", "en"), Person(6613, "Eve", "en")
    assert await admit(brain, "telegram", str(ben.id)) == "owner"
    assert await admit(brain, "telegram", str(eve.id)) == "member"
    [report] = await send(api, ben, "/audit")
    assert "Tool use by the assistant" in report.params["text"]
    [refused] = await send(api, eve, "/audit")
    assert "only for administrators" in refused.params["text"]


async def test_in_webhook_mode_a_stranger_is_told_and_nothing_is_stored(brain, api, closed_dialog) -> None:
    port = free_port()
    hook = Webhook(url="https://companion.example.test/telegram/hook", listen="127.0.0.1", port=port,
                   secret="a-long-shared-secret")
    adapter = make_adapter(brain, closed_dialog, api, webhook=hook)
    await adapter.start()
    try:
        before = await personal_row_counts(brain)  # the inbox is a personal table too: nothing is queued
        mallory = Person(6614, "Mallory", "en")
        local = f"http://127.0.0.1:{port}/telegram/hook"
        assert await post(local, {"update_id": 901, **api.text(mallory, "hello")}, hook.secret or "") == 200
        [notice] = await replies_after(api, mallory.id, 0, 1)
        assert PRIVATE in notice.params["text"]
        assert await post(local, {"update_id": 902, **api.text(mallory, "/water 250")}, hook.secret or "") == 200
        assert await personal_row_counts(brain) == before
        code, _ = await create_invite(brain)
        assert await post(local, {"update_id": 903, **api.text(mallory, f"/start {code}")}, hook.secret or "") == 200
        replies = await replies_after(api, mallory.id, 1, 2)
        assert "invite code worked" in texts(replies)[0]
    finally:
        await adapter.stop()
    assert len(api.calls_of("sendMessage", mallory.id)) == 3  # the notice, the welcome, the greeting
