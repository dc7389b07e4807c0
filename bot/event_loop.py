"""The event loop a long-running process runs on: uvloop (libuv, written in C) where it is installed, else asyncio's
own. The bot is one process whose CPU bounds how many messages it answers per second; on uvloop its event loop
costs less per wake-up. `EVENT_LOOP=asyncio` opts out, e.g. to debug with
asyncio's debug mode."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Literal, TypeVar

T = TypeVar("T")

EventLoop = Literal["auto", "uvloop", "asyncio"]


def uses_uvloop(choice: EventLoop = "auto") -> bool:
    """Whether `run` takes uvloop: `auto` when it is installed, `uvloop` always (an ImportError if it is not)."""
    if choice == "asyncio":
        return False
    try:
        import uvloop  # noqa: F401
    except ImportError:
        if choice == "uvloop":
            raise
        return False
    return True


def run(main: Coroutine[Any, Any, T], choice: EventLoop = "auto") -> T:
    """`asyncio.run(main)` on the chosen loop."""
    if uses_uvloop(choice):
        import uvloop

        return uvloop.run(main)
    return asyncio.run(main)
