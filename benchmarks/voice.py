"""The voice path's own cost: how much longer a voice note takes through the dialog than the same words typed, beyond
the download and the transcription. The speech-to-text server is the fake (tests/fakes/stt_server.py) with a fixed
latency; the download is a real HTTP GET of the note from a local server, as the adapter's would be. Each round
sends the words typed, then as a voice note, as one person, and times `Dialog.handle` for both.

    python -m benchmarks.voice [--notes 200] [--latency-ms 50] [--quick] [--database-url URL]

It starts its own embedded PostgreSQL (benchmarks/_pg.py) and runs the fakes in this process. Run from the
repository root (it imports the fakes from tests/). Per note: typed = handling the typed words; voice = handling
the voice note; download and transcription as the voice path measured them; overhead = voice - download -
transcription - typed (the limit checks and the "🎙" line on top of the reply).

Last line: `RESULT voice_overhead_ms=<median> baseline=<median typed ms> ratio=<median voice path without download
and transcription / typed>`; the target is an overhead of at most 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import uuid

import aiohttp
from aiohttp import web

from benchmarks._options import add_common_options, parse_sizes
from benchmarks._pg import bench_database
from bot.access import AccessPolicy
from bot.dialog import Dialog
from bot.inbound import Inbound, Media
from bot.voice import VoiceNotes
from brain.clock import SystemClock
from brain.media.speech import SpeechConfig, SpeechToText
from brain.store.database import Database
from rules.wiring import build_brain
from tests.fakes.stt_server import FakeSpeechServer, fake_audio

DATABASE = "voice_bench"
QUICK = {"notes": 5}
WORDS = "two coffees"
TARGET_MS = 50.0


async def serve_note(audio: bytes) -> tuple[web.AppRunner, str]:
    """A local file server holding the voice note (what the platform's file download is)."""
    async def note(request: web.Request) -> web.Response:
        return web.Response(body=audio, content_type="audio/ogg")

    app = web.Application()
    app.router.add_get("/note.ogg", note)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}/note.ogg"


async def measure(url: str, notes: int, latency_ms: float) -> dict[str, list[float]]:
    stt = FakeSpeechServer(latency_s=latency_ms / 1000, keep_requests=False)
    await stt.start()
    audio = fake_audio(WORDS)
    runner, note_url = await serve_note(audio)
    voice = VoiceNotes(SpeechToText(SpeechConfig(stt.url, "bench-model")))
    brain = build_brain(Database(url), clock=SystemClock())
    dialog = Dialog(brain, default_locale="en", default_timezone="Europe/Berlin",
                    access=AccessPolicy.open(), voice=voice)
    figures: dict[str, list[float]] = {"typed": [], "voice": [], "download": [], "transcribe": [], "overhead": []}
    try:
        async with aiohttp.ClientSession() as http:
            async def fetch() -> bytes:
                async with http.get(note_url) as response:
                    return await response.read()

            def inbound(**fields: object) -> Inbound:
                return Inbound(platform="bench", platform_user_id="voice", chat_id="voice",
                               message_id=uuid.uuid4().hex, language_code="en", **fields)  # type: ignore[arg-type]

            media = Media(kind="voice", fetch=fetch, duration_s=2, size=len(audio), mime="audio/ogg")
            for index in range(notes + 1):  # the first round warms up (the person is created) and is not counted
                started = time.perf_counter()
                await dialog.handle(inbound(text=WORDS))
                typed = (time.perf_counter() - started) * 1000
                before_download, before_transcribe = voice.timings.download_ms, voice.timings.transcribe_ms
                started = time.perf_counter()
                sent = await dialog.handle(inbound(media=media))
                spoken = (time.perf_counter() - started) * 1000
                assert len(sent) == 1 and sent[0].text.startswith(f"🎙 {WORDS}\n"), [m.text for m in sent]
                download = voice.timings.download_ms - before_download
                transcribe = voice.timings.transcribe_ms - before_transcribe
                if index:
                    for name, value in (("typed", typed), ("voice", spoken), ("download", download),
                                        ("transcribe", transcribe),
                                        ("overhead", spoken - download - transcribe - typed)):
                        figures[name].append(value)
    finally:
        await dialog.settle()
        await brain.close()
        await voice.close()
        await runner.cleanup()
        await stt.stop()
    return figures


def table(figures: dict[str, list[float]], latency_ms: float) -> str:
    lines = [f"{'per note (ms)':<16} {'p50':>8} {'p90':>8} {'max':>8}"]
    for name, values in figures.items():
        ordered = sorted(values)
        p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
        lines.append(f"{name:<16} {statistics.median(values):>8.1f} {p90:>8.1f} {max(values):>8.1f}")
    overhead = statistics.median(figures["overhead"])
    typed = statistics.median(figures["typed"])
    path = statistics.median(v - d - t for v, d, t in zip(figures["voice"], figures["download"],
                                                          figures["transcribe"], strict=True))
    lines.append(f"fake server latency {latency_ms:.0f} ms; overhead target <= {TARGET_MS:.0f} ms: "
                 f"{'met' if overhead <= TARGET_MS else 'NOT met'}")
    lines.append(f"RESULT voice_overhead_ms={overhead:.1f} baseline={typed:.1f} ratio={path / typed:.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.voice", description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=200, help="voice notes (and as many typed messages)")
    parser.add_argument("--latency-ms", type=float, default=50.0, help="the fake server's latency per note")
    add_common_options(parser)
    args = parse_sizes(parser, argv, QUICK)
    if args.notes < 1 or args.latency_ms < 0:
        parser.error("--notes must be at least 1 and --latency-ms at least 0")
    with bench_database(DATABASE, prefix="vbc", url=args.database_url) as database:
        figures = asyncio.run(measure(database.url, args.notes, args.latency_ms))
    print(table(figures, args.latency_ms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
