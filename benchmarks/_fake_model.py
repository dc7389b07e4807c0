"""The fake model server of `benchmarks.companion`, in a process of its own as a real Ollama runs: the fake Ollama of
the tests, answering each request after a fixed delay and reporting its own time per answer as Ollama does. Started
as `python -m benchmarks._fake_model <delay in seconds>`: it prints its URL and serves until its input is closed.

This module imports only the fake and aiohttp, not the brain: a real Ollama carries none of our heap, and a child
started by multiprocessing would import the whole benchmark (the brain with it) before serving."""

from __future__ import annotations

import asyncio
import contextvars
import json
import sys
import time
from typing import Any

from aiohttp import web

from brain.runtime import freeze_startup_heap
from tests.fakes.ollama_server import FakeOllama, Script

ASK = "use:"  # the benchmark's message names the tools the fake model calls: "use: a, b"
_received: contextvars.ContextVar[int] = contextvars.ContextVar("received")


class TimedFake(FakeOllama):
    """The fake server reporting its own time per answer as Ollama's `total_duration`, as a real server reports
    its model's time: from the parsed request (when the responder is asked) to the reply, so it holds the
    scripted delay and what the machine's load adds to it."""

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        response = await super()._chat(request)
        started = _received.get(None)
        if started is not None and isinstance(response, web.Response) and isinstance(response.body, bytes):
            reply = json.loads(response.body)
            reply["total_duration"] = time.perf_counter_ns() - started
            response.body = json.dumps(reply).encode()
        return response


def respond(body: dict[str, Any], delay_s: float) -> Script:
    """A tool round for a new message ("use: a, b" -> calls a and b), the answer once the results are back."""
    _received.set(time.perf_counter_ns())
    messages = [m for m in body["messages"] if not str(m.get("content", "")).startswith("<reminder>")]
    last = messages[-1]
    if last["role"] == "tool":
        return Script(content="Done.", delay_s=delay_s)
    names = [n.strip() for n in str(last.get("content", "")).removeprefix(ASK).split(",") if n.strip()]
    calls = [{"name": n, "arguments": {"drink_type": "water", "quantity_ml": 250} if n == "log_drink" else {}}
             for n in names]
    return Script(tool_calls=calls, delay_s=delay_s)


async def serve(delay_s: float) -> None:
    # Keeping every request body (thousands of objects each: the tool schemas) made the fake's full
    # collections grow with the run.
    fake = TimedFake(default=lambda body: respond(body, delay_s), keep_requests=False)
    url = await fake.start()
    # A full collection over the start-up heap would land in a turn now and then as a stall of the fake, counted as
    # our overhead; a real Ollama has no such pause. Freezing the start-up heap leaves only what requests create to
    # the collector, as app.wiring does for the companion's own process.
    freeze_startup_heap()
    print(url, flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until the parent closes our input
    await fake.stop()


if __name__ == "__main__":
    asyncio.run(serve(float(sys.argv[1])))
