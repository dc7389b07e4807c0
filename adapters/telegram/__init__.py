"""Telegram adapter (python-telegram-bot 22): updates become `Inbound`s for `bot.dialog`, outbox rows become
Telegram messages with inline keyboards. I/O only; every behaviour lives in `bot/`.

Entry point: `adapters.telegram.runner.TelegramAdapter` (started by `companion run` when TELEGRAM_TOKEN is set).
This package's `__init__` and `models` import no Telegram library, so the tables are known to Alembic
even where the adapter is not used."""
