"""The processes' event loop: uvloop when installed (it is a dependency here), asyncio's own on request."""

from __future__ import annotations

import asyncio
import sys

import pytest

from bot import event_loop


async def _loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__


def test_auto_runs_on_uvloop_where_installed() -> None:
    assert event_loop.uses_uvloop("auto")
    assert event_loop.run(_loop_module()).startswith("uvloop")


def test_asyncio_opts_out() -> None:
    assert not event_loop.uses_uvloop("asyncio")
    assert event_loop.run(_loop_module(), "asyncio").startswith("asyncio")


def test_without_uvloop_auto_falls_back_and_uvloop_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop now raises ImportError
    assert not event_loop.uses_uvloop("auto")
    assert event_loop.run(_loop_module()).startswith("asyncio")
    with pytest.raises(ImportError):
        event_loop.uses_uvloop("uvloop")
