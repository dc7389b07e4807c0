"""A fake speech-to-text server on 127.0.0.1 (aiohttp) that speaks the OpenAI-compatible
`POST /v1/audio/transcriptions` (multipart: file, model, language, response_format), for the real client in
`brain.media.speech`.

Its "audio" is text: `fake_audio("two coffees")` makes bytes whose transcript is "two coffees"; anything else is
refused with a 400 as unreadable audio, as a real server refuses a file it cannot decode. `fail_next(status)`
answers the next requests with an error, `latency_s` delays every answer, and `requests` records what arrived
(model, language, file name and size; never the audio itself)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from aiohttp import web

AUDIO_MAGIC = b"OggS-fake-speech:"


def fake_audio(words: str) -> bytes:
    """Bytes the fake transcribes as `words`."""
    return AUDIO_MAGIC + words.encode()


@dataclass(frozen=True)
class Received:
    model: str
    language: str | None
    file_name: str | None
    size: int
    response_format: str | None


class FakeSpeechServer:
    def __init__(self, *, latency_s: float = 0.0, keep_requests: bool = True) -> None:
        self.latency_s = latency_s
        self.keep_requests = keep_requests
        self.requests: list[Received] = []
        self._failures: list[int] = []
        self._runner: web.AppRunner | None = None
        self.url = ""

    def fail_next(self, status: int = 503, times: int = 1) -> None:
        self._failures.extend([status] * times)

    async def start(self, port: int = 0) -> str:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/audio/transcriptions", self._transcribe)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        await site.start()
        server = site._server
        assert server is not None
        self.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"  # type: ignore[attr-defined]
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _transcribe(self, request: web.Request) -> web.Response:
        fields: dict[str, Any] = {}
        audio = b""
        file_name: str | None = None
        reader = await request.multipart()
        async for part in reader:
            if part.name == "file":
                file_name = part.filename
                audio = bytes(await part.read())  # type: ignore[union-attr]
            elif part.name:
                fields[part.name] = await part.text()  # type: ignore[union-attr]
        if self.keep_requests:
            self.requests.append(Received(str(fields.get("model", "")), fields.get("language"), file_name,
                                          len(audio), fields.get("response_format")))
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if self._failures:
            return web.json_response({"error": {"message": "scripted failure"}}, status=self._failures.pop(0))
        if not fields.get("model"):
            return web.json_response({"error": {"message": "model is required"}}, status=422)
        if not audio.startswith(AUDIO_MAGIC):
            return web.json_response({"error": {"message": "Invalid audio file"}}, status=400)
        return web.json_response({"text": " " + audio[len(AUDIO_MAGIC):].decode(errors="replace")})

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "Systran/faster-whisper-small",
                                                              "object": "model"}]})
