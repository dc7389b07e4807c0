"""`companion doctor` on voice notes and photos: it asks the speech-to-text server and the Ollama server (here the
fakes) and says what answers, what does not and what is not configured, without failing the check for either."""

from __future__ import annotations

from app.cli import media_checks
from bot.settings import load_settings
from tests.fakes.ollama_server import FakeOllama
from tests.fakes.stt_server import FakeSpeechServer


async def test_doctor_names_the_servers_that_answer(fake_ollama: FakeOllama) -> None:
    stt = FakeSpeechServer()
    await stt.start()
    try:
        lines = await media_checks(load_settings(STT_URL=stt.url, OLLAMA_HOST=fake_ollama.url,
                                                 OLLAMA_MODEL_VISION="qwen2.5vl:3b"))
    finally:
        await stt.stop()
    assert lines == [f"[green]✓[/green] speech-to-text server at {stt.url}",
                     "[green]✓[/green] vision model qwen2.5vl:3b"]


async def test_doctor_warns_about_a_server_down_a_missing_model_and_what_is_not_set(fake_ollama: FakeOllama) -> None:
    stt = FakeSpeechServer()
    url = await stt.start()
    await stt.stop()
    down = await media_checks(load_settings(STT_URL=url, OLLAMA_HOST=fake_ollama.url, OLLAMA_MODEL_VISION="llava:7b"))
    assert down[0].startswith(f"[yellow]![/yellow] speech-to-text server at {url} does not answer")
    assert "ollama pull llava:7b" in down[1]
    unset = await media_checks(load_settings(STT_URL="", OLLAMA_MODEL_VISION=""))
    assert "no speech-to-text server (STT_URL)" in unset[0] and "no vision model (OLLAMA_MODEL_VISION)" in unset[1]
