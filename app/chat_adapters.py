"""The chat adapters `companion run` serves, built from the settings: Telegram and Matrix, each as
`Adapter(brain, dialog, config)`. When both run, each is told of the other, so a push goes once, where the
person last talked."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.adapter import ChatAdapter
from bot.settings import Settings

if TYPE_CHECKING:
    from adapters.telegram.adapter import TelegramAdapter
    from app.wiring import App
    from bot.dialog import Dialog
    from brain.core import Brain


def chat_adapters(settings: Settings, app: App) -> list[ChatAdapter]:
    platforms = [p for p, on in (("telegram", settings.telegram_enabled), ("matrix", settings.matrix_enabled)) if on]
    adapters: list[ChatAdapter] = []
    if settings.telegram_enabled:
        others = tuple(p for p in platforms if p != "telegram")
        adapters.append(telegram_adapter(settings, app.brain, app.dialog, others))
    if settings.matrix_enabled:
        from adapters.matrix.adapter import MatrixAdapter, MatrixConfig

        adapters.append(MatrixAdapter(app.brain, app.dialog, MatrixConfig.from_settings(settings)))
    return adapters


def telegram_adapter(settings: Settings, brain: Brain, dialog: Dialog,
                     other_platforms: tuple[str, ...] = (), *, fed: bool = False) -> TelegramAdapter:
    """The Telegram adapter as the settings describe it. With TELEGRAM_PROCESSES > 1 (long polling) this process
    polls and starts the worker processes of the other shares (`app.telegram_worker`); `fed`: it is such a
    worker."""
    from adapters.telegram.adapter import TelegramAdapter
    from adapters.telegram.config import TelegramConfig
    from adapters.telegram.scaleout import Shares
    from app.telegram_worker import serve_share

    shares = None
    if settings.telegram_processes > 1 and not settings.telegram_webhook_url and not fed:
        shares = Shares(settings, brain.db.url, settings.telegram_processes, serve_share)
    return TelegramAdapter(brain, dialog, TelegramConfig.from_settings(settings, other_platforms, shares=shares,
                                                                       fed=fed))
