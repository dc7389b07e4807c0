"""The speech-to-text client: a voice note's audio to text, through a server that speaks the OpenAI-compatible
`POST /v1/audio/transcriptions` (faster-whisper servers, whisper.cpp's server, LocalAI, ...). The audio is sent as a
multipart upload and never written anywhere; what comes back is plain text.

Failures are told apart so the person hears what went wrong: `SpeechUnavailable` (no answer, a server error, a
timeout) and `SpeechUnreadable` (the server refused the audio, or heard no words)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import httpx

DEFAULT_TIMEOUT_S = 60.0
TRANSCRIPTIONS_PATH = "/v1/audio/transcriptions"


class SpeechUnavailable(Exception):
    """The speech-to-text server did not answer, or failed on its side."""


class SpeechUnreadable(Exception):
    """The server could not make words of the audio (it refused the file, or the transcript is empty)."""


@dataclass(frozen=True)
class SpeechConfig:
    url: str  # the server's base URL, e.g. http://127.0.0.1:8000
    model: str
    local: bool = True  # the server runs on hardware the person (or the operator for them) controls
    timeout_s: float = DEFAULT_TIMEOUT_S


@dataclass(frozen=True)
class Transcript:
    text: str
    server_ms: float  # wall time of the request, for the voice benchmark


class SpeechToText:
    """One HTTP client for the server of `config`, reused across voice notes."""

    def __init__(self, config: SpeechConfig) -> None:
        self.config = config
        self._client = httpx.AsyncClient(base_url=config.url.rstrip("/"),
                                         timeout=httpx.Timeout(config.timeout_s, connect=min(5.0, config.timeout_s)))

    @property
    def local(self) -> bool:
        return self.config.local

    async def transcribe(self, audio: bytes, *, file_name: str, mime: str, language: str | None) -> Transcript:
        """The words of `audio`; `language` (an ISO 639-1 code) is a hint the server may use."""
        data = {"model": self.config.model, "response_format": "json"}
        if language:
            data["language"] = language
        started = time.perf_counter()
        try:
            response = await self._client.post(TRANSCRIPTIONS_PATH, data=data,
                                               files={"file": (file_name, audio, mime)})
        except httpx.HTTPError as problem:  # refused, reset, timed out
            raise SpeechUnavailable(str(problem) or type(problem).__name__) from problem
        elapsed_ms = (time.perf_counter() - started) * 1000
        if response.status_code >= 500 or response.status_code in (404, 408, 429):
            raise SpeechUnavailable(f"HTTP {response.status_code}: {response.text[:200]}")
        if response.status_code >= 400:
            raise SpeechUnreadable(f"HTTP {response.status_code}: {response.text[:200]}")
        try:
            body = response.json()
            text = str(body["text"]) if isinstance(body, dict) else ""
        except (ValueError, KeyError):
            raise SpeechUnavailable("the answer was not the JSON of a transcription") from None
        text = " ".join(text.split())
        if not text:
            raise SpeechUnreadable("no words were heard")
        return Transcript(text, elapsed_ms)

    async def check(self) -> str | None:
        """None when the server answers; else what went wrong (for `companion doctor`). Any HTTP answer but a
        server error counts: servers differ in what they serve besides the transcriptions route."""
        try:
            response = await self._client.get("/v1/models", timeout=min(5.0, self.config.timeout_s))
        except httpx.HTTPError as problem:
            return str(problem) or type(problem).__name__
        if response.status_code >= 500:
            return f"HTTP {response.status_code}"
        return None

    async def close(self) -> None:
        await self._client.aclose()
