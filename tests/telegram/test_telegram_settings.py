"""The Telegram settings: webhook URL, listen address and secret are checked at start, and the adapter is
built from them (long polling without a webhook URL)."""

from __future__ import annotations

import pytest

from adapters.telegram.config import LANES, lanes_per_process
from app.chat_adapters import telegram_adapter
from bot.access import AccessPolicy
from bot.dialog import Dialog
from bot.settings import SettingsError, load_settings
from brain.core import Brain
from tests.telegram.fake_bot_api import TOKEN


@pytest.mark.parametrize("overrides, message", [
    ({"TELEGRAM_WEBHOOK_URL": "http://example.org/hook"}, "https://"),
    ({"TELEGRAM_WEBHOOK_LISTEN": "8443"}, "host:port"),
    ({"TELEGRAM_WEBHOOK_LISTEN": "0.0.0.0:99999"}, "host:port"),
    ({"TELEGRAM_WEBHOOK_SECRET": "not allowed!"}, "A-Z, a-z, 0-9"),
    ({"TELEGRAM_MAX_MESSAGES_PER_SECOND": "-1"}, "TELEGRAM_MAX_MESSAGES_PER_SECOND"),
])
def test_bad_telegram_settings_stop_the_start_with_a_clear_message(overrides: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        load_settings(TELEGRAM_TOKEN=TOKEN, **overrides)


async def test_the_adapter_follows_the_settings(brain: Brain) -> None:
    dialog = Dialog(brain, access=AccessPolicy.open())
    polling = telegram_adapter(load_settings(TELEGRAM_TOKEN=TOKEN), brain, dialog)
    assert polling.webhook is None and not polling.config.allow_groups  # groups are left unless allowed
    grouped = telegram_adapter(load_settings(TELEGRAM_TOKEN=TOKEN, TELEGRAM_ALLOW_GROUPS="true"), brain, dialog)
    assert grouped.config.allow_groups
    hooked = telegram_adapter(load_settings(
        TELEGRAM_TOKEN=TOKEN, TELEGRAM_WEBHOOK_URL="https://companion.example.org/telegram/hook",
        TELEGRAM_WEBHOOK_LISTEN="0.0.0.0:8080", TELEGRAM_WEBHOOK_SECRET="s3cret_-token"), brain, dialog)
    assert hooked.webhook is not None
    assert (hooked.webhook.listen, hooked.webhook.port, hooked.webhook.path, hooked.webhook.secret) == (
        "0.0.0.0", 8080, "telegram/hook", "s3cret_-token")


async def test_several_processes_split_the_lanes_and_the_send_rate(brain: Brain) -> None:
    """TELEGRAM_PROCESSES=3: each process handles its part of the 16 updates at once (rounded up) and sends at
    its part of Telegram's overall rate, the poller and a worker alike; one process keeps them whole."""
    dialog = Dialog(brain, access=AccessPolicy.open())
    alone = telegram_adapter(load_settings(TELEGRAM_TOKEN=TOKEN), brain, dialog)
    assert (alone._concurrency, alone._max_rate) == (LANES, 30.0)
    settings = load_settings(TELEGRAM_TOKEN=TOKEN, TELEGRAM_PROCESSES="3")
    for fed in (False, True):
        part = telegram_adapter(settings, brain, dialog, fed=fed)
        assert (part._concurrency, part._max_rate) == (6, 10.0)
    assert [lanes_per_process(16, n) for n in (1, 2, 3, 8, 20)] == [16, 8, 6, 2, 1]
