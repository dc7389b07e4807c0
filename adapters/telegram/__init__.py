"""Telegram adapter (python-telegram-bot 22): updates become `Inbound`s for `bot.dialog`, outbox rows become
Telegram messages with inline keyboards. I/O only; every behaviour lives in `bot/`.

Entry point: `adapters.telegram.adapter.TelegramAdapter` (started by `companion run` when TELEGRAM_TOKEN is set).
This package's `__init__` and `models` import no Telegram library, so the tables are known to Alembic
even where the adapter is not used."""

import os

# python-telegram-bot 22 warns on every 429 (inside RetryAfter's own constructor) until time periods are opted
# in as `datetime.timedelta`, which its next major version makes the only form. This adapter reads no PTB time
# period but a 429's retry_after, which it takes as a timedelta either way (delivery.retry_after_seconds).
os.environ.setdefault("PTB_TIMEDELTA", "true")
