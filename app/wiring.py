"""App wiring: settings -> database (embedded PostgreSQL when DATABASE_URL is unset) -> migrations ->
brain (memory, companion) -> dialog. One `open_app` context for the CLI, the adapters and end-to-end tests."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta

# Every table, the adapters' too: the brain's data rights and linking find a person's rows in all of them.
import app.tables  # noqa: F401
from bot.dialog import Dialog
from bot.settings import Settings
from brain.clock import Clock
from brain.companion.agent import CompanionConfig
from brain.companion.llm import LLM, llm_from_settings
from brain.core import Brain
from brain.memory.api import Memory
from brain.memory.embedder import EmbedderChoice, build_embedder
from brain.memory.reembed import reembed_all
from brain.runtime import freeze_startup_heap
from brain.store.database import Database
from brain.store.embedded import EmbeddedPostgres
from brain.store.migrate import upgrade
from rules.wiring import build_brain

log = logging.getLogger(__name__)


@dataclass
class App:
    settings: Settings
    brain: Brain
    dialog: Dialog


@asynccontextmanager
async def open_database(settings: Settings) -> AsyncIterator[str]:
    """Yields a migrated database URL; starts and later stops the embedded server if needed."""
    embedded: EmbeddedPostgres | None = None
    url = settings.database_url
    try:
        if url is None:
            embedded = EmbeddedPostgres(settings.data_dir)
            url = await asyncio.to_thread(embedded.start)
        await asyncio.to_thread(upgrade, url)
        yield url
    finally:
        if embedded is not None:
            await asyncio.to_thread(embedded.stop)


@asynccontextmanager
async def open_app(settings: Settings, *, clock: Clock | None = None) -> AsyncIterator[App]:
    async with open_database(settings) as url:
        # The long-term memory with the embedder of the settings (loaded on first use) and a buffered pipeline log.
        brain = build_brain(Database(url), clock=clock, embedder=embedder_from_settings(settings).embedder,
                            llm=model_client(settings), companion=companion_config(settings))
        dialog = Dialog(brain, default_locale=settings.default_locale, default_timezone=settings.default_timezone)
        freeze_startup_heap()
        reembedding = asyncio.create_task(reembed_in_background(brain.memory))
        try:
            yield App(settings, brain, dialog)
        finally:
            reembedding.cancel()  # a batch cut short is done again at the next start
            await asyncio.gather(reembedding, return_exceptions=True)
            await dialog.settle()  # memory captures of the last messages
            if brain.memory is not None and brain.memory.log is not None:
                await brain.memory.log.close()  # the last buffered pipeline log rows
            await brain.close()


def model_client(settings: Settings) -> LLM | None:
    """The language model client of the companion, unless COMPANION_LLM=false. No model server is contacted here:
    the first message finds out whether one answers (and the person is told once if not)."""
    return llm_from_settings(settings) if settings.companion_enabled else None


def embedder_from_settings(settings: Settings) -> EmbedderChoice:
    """The embedder EMBEDDER, EMBEDDING_MODEL and EMBEDDING_DIM name (multilingual-e5-small unless they say otherwise;
    WordLlama where e5 cannot be loaded)."""
    return build_embedder(settings.embedder, ollama_host=settings.ollama_host, model=settings.embedding_model,
                          dim=settings.embedding_dim, timeout_s=settings.ollama_timeout_s)


async def reembed_in_background(memory: Memory | None) -> None:
    """After a change of embedder, the memories get vectors of the new one while the bot runs (see
    brain.memory.reembed); progress goes to the log. A failure is logged and retried at the next start."""
    if memory is None:
        return
    try:
        await reembed_all(memory.brain.transactions, memory.embedder)
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("re-embedding the memories failed; it resumes at the next start")


def companion_config(settings: Settings) -> CompanionConfig:
    return CompanionConfig(input_tokens=settings.companion_input_tokens,
                           context_tokens=settings.context_token_budget,
                           stale_after=timedelta(minutes=settings.companion_stale_minutes),
                           admins=settings.companion_admin_set)
