"""The model client (requests as the `ollama` client builds them) against the fake server: plain and streamed
answers, tool calls, one retry, availability, timeouts, garbage, and the privacy check before anything leaves."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import ollama
import pytest

from brain.companion.llm import LLM, ModelUnavailable, PrivacyBlocked, TierConfig
from tests.fakes.ollama_server import FakeOllama, Script, call

HELLO = [{"role": "user", "content": "Hello"}]


async def test_a_plain_answer_with_token_counts(llm: LLM, fake_ollama: FakeOllama) -> None:
    fake_ollama.script(Script(content="Hi there!", prompt_tokens=11, eval_tokens=3))
    reply = await llm.chat("primary", HELLO)
    assert reply.content == "Hi there!"
    assert (reply.prompt_tokens, reply.completion_tokens) == (11, 3)
    assert fake_ollama.requests[0]["model"] == "qwen3:4b"
    assert fake_ollama.requests[0]["stream"] is False


async def test_the_fast_tier_uses_its_own_model(llm: LLM, fake_ollama: FakeOllama) -> None:
    await llm.chat("fast", HELLO)
    assert fake_ollama.requests[0]["model"] == "qwen3:1.7b"


async def test_streamed_pieces_arrive_in_order_and_join(llm: LLM, fake_ollama: FakeOllama) -> None:
    fake_ollama.script(Script(content="One, two, three, four.", chunks=4))
    pieces: list[str] = []

    async def sink(piece: str) -> None:
        pieces.append(piece)

    reply = await llm.chat("primary", HELLO, on_text=sink)
    assert len(pieces) == 4
    assert "".join(pieces) == reply.content == "One, two, three, four."
    assert fake_ollama.requests[0]["stream"] is True


async def test_a_paced_sink_gets_every_piece_and_what_came_while_it_rested_in_one_read(
        llm: LLM, fake_ollama: FakeOllama) -> None:
    fake_ollama.script(Script(content="One, two, three, four.", chunks=4, chunk_delay_s=0.01))

    class Paced:
        def __init__(self) -> None:
            self.reads: list[list[str]] = [[]]  # the pieces of each read, as told apart by the questions between

        async def __call__(self, piece: str) -> None:
            self.reads[-1].append(piece)

        def rest(self) -> float:
            self.reads.append([])
            return 0.5  # the three pieces written meanwhile (30 ms) wait in the socket

    sink = Paced()
    reply = await llm.chat("primary", HELLO, on_text=sink)
    assert "".join(piece for read in sink.reads for piece in read) == reply.content == "One, two, three, four."
    assert [len(read) for read in sink.reads] == [1, 3]  # asked once: the stream ended in the second read


@pytest.mark.parametrize("stream", [False, True])
async def test_tool_calls_come_back_with_their_arguments(llm: LLM, fake_ollama: FakeOllama, stream: bool) -> None:
    fake_ollama.script(Script(tool_calls=[call("log_drink", kind="water", amount_ml=250), call("get_today")]))

    async def sink(piece: str) -> None:
        pass

    tools = [{"type": "function", "function": {"name": "log_drink", "description": "d",
                                               "parameters": {"type": "object", "properties": {}}}}]
    reply = await llm.chat("primary", HELLO, tools=tools, on_text=sink if stream else None)
    assert [c.name for c in reply.tool_calls] == ["log_drink", "get_today"]
    assert reply.tool_calls[0].arguments == {"kind": "water", "amount_ml": 250}
    assert fake_ollama.requests[0]["tools"][0]["function"]["name"] == "log_drink"


async def test_tool_schemas_are_sent_as_given_and_a_changed_one_as_changed(llm: LLM, fake_ollama: FakeOllama) -> None:
    schema: dict[str, Any] = {"type": "function", "function": {
        "name": "log_drink", "description": "Log a drink.",
        "parameters": {"type": "object", "properties": {"kind": {"type": "string", "description": "What."}},
                       "required": ["kind"]}}}
    await llm.chat("primary", HELLO, tools=[schema])
    schema["function"]["description"] = "Log a drink, changed in place."
    schema["function"]["parameters"]["properties"]["ml"] = {"type": "integer", "description": "How much."}
    await llm.chat("primary", HELLO, tools=[schema])
    first, second = (request["tools"][0]["function"] for request in fake_ollama.requests)
    assert first["description"] == "Log a drink." and list(first["parameters"]["properties"]) == ["kind"]
    assert second["description"] == "Log a drink, changed in place."
    assert list(second["parameters"]["properties"]) == ["kind", "ml"]
    assert second["parameters"]["required"] == ["kind"]


@pytest.mark.parametrize("stream", [False, True])
async def test_the_request_is_what_the_ollama_client_sends(fake_ollama: FakeOllama, stream: bool) -> None:
    """Our request (tools encoded once and kept as JSON) and the ollama client's own, compared whole."""
    tools: list[dict[str, Any]] = [
        {"type": "function", "function": {"name": "log_drink", "description": "Log a drink.", "parameters": {
            "type": "object", "$defs": {"Kind": {"type": "string", "enum": ["water", "tea"]}},
            "properties": {"kind": {"$ref": "#/$defs/Kind"}, "ml": {"type": "integer", "description": "How much."}},
            "required": ["kind"]}}},
        {"type": "function", "function": {"name": "get_today", "description": "The day.",
                                          "parameters": {"type": "object", "properties": {}}}}]
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Grüße « 1 »"},
                {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "get_today",
                                                                                  "arguments": {}}}]},
                {"role": "tool", "content": "{}", "tool_name": "get_today"}]
    llm = LLM(fake_ollama.url, {"primary": TierConfig("qwen3:4b"), "fast": TierConfig("qwen3:1.7b")})

    async def sink(piece: str) -> None:
        pass

    for _ in range(2):  # the second time from what was kept
        await llm.chat("primary", messages, tools=tools, options={"temperature": 0.2},
                       on_text=sink if stream else None)
    client = ollama.AsyncClient(host=fake_ollama.url)
    answer = await client.chat(model="qwen3:4b", messages=messages, tools=tools, options={"temperature": 0.2},
                               think=False, stream=stream)
    if stream:
        assert isinstance(answer, AsyncIterator)
        async for _part in answer:
            pass
    ours, again, theirs = fake_ollama.requests
    assert ours == again == theirs
    assert theirs["tools"][0]["function"]["parameters"]["$defs"]["Kind"]["enum"] == ["water", "tea"]


async def test_the_server_time_it_reports_comes_back(llm: LLM, fake_ollama: FakeOllama) -> None:
    reply = await llm.chat("primary", HELLO)
    assert reply.server_ms == 1000 / 1e6  # the fake reports total_duration=1000 ns
    assert reply.model_ms >= reply.server_ms


async def test_one_failure_is_retried_once(llm: LLM, fake_ollama: FakeOllama) -> None:
    fake_ollama.script(Script(status=500, error="overloaded"), Script(content="Second time lucky."))
    reply = await llm.chat("primary", HELLO)
    assert reply.content == "Second time lucky."
    assert len(fake_ollama.requests) == 2
    assert llm.available


async def test_each_request_is_reported_with_its_tier_time_and_outcome(fake_ollama: FakeOllama) -> None:
    calls: list[tuple[str, float, bool]] = []
    llm = LLM(fake_ollama.url, {"primary": TierConfig("qwen3:4b"), "fast": TierConfig("qwen3:1.7b")},
              timeout_s=5.0, recheck_s=0.0, retry_delay_s=0.01, on_call=lambda *call: calls.append(call))
    fake_ollama.script(Script(status=500, error="overloaded"), Script(content="Second time lucky."))
    await llm.chat("fast", HELLO)
    await llm.embed(["a text"], model="nomic-embed-text")
    assert [(tier, ok) for tier, _, ok in calls] == [("fast", False), ("fast", True), ("embed", True)]
    assert all(seconds >= 0 for _, seconds, _ in calls)


async def test_two_failures_make_the_model_unavailable(llm: LLM, fake_ollama: FakeOllama) -> None:
    fake_ollama.script(Script(status=500), Script(status=503))
    with pytest.raises(ModelUnavailable):
        await llm.chat("primary", HELLO)
    assert not llm.available
    assert len(fake_ollama.requests) == 2
    assert (await llm.chat("primary", HELLO)).content == "OK."  # recheck_s=0: the next call tries again
    assert llm.available


async def test_garbage_is_unavailable_not_a_crash(llm: LLM, fake_ollama: FakeOllama) -> None:
    fake_ollama.script(Script(garbage=True), Script(garbage=True))
    with pytest.raises(ModelUnavailable):
        await llm.chat("primary", HELLO)


async def test_a_slow_model_times_out(fake_ollama: FakeOllama) -> None:
    slow = LLM(fake_ollama.url, {"primary": TierConfig("qwen3:4b"), "fast": TierConfig("qwen3:1.7b")},
               timeout_s=0.2, recheck_s=0.0, retry_delay_s=0.0)
    fake_ollama.script(Script(delay_s=1.0), Script(delay_s=1.0))
    with pytest.raises(ModelUnavailable, match="timed out"):
        await slow.chat("primary", HELLO)


async def test_a_server_that_is_down_fails_fast_after_the_first_call() -> None:
    down = LLM("http://127.0.0.1:9", {"primary": TierConfig("m"), "fast": TierConfig("m")},
               timeout_s=2.0, recheck_s=3600.0, retry_delay_s=0.0)
    with pytest.raises(ModelUnavailable):
        await down.chat("primary", HELLO)
    calls = down.calls
    with pytest.raises(ModelUnavailable, match="recently"):
        await down.chat("primary", HELLO)
    assert down.calls == calls  # no second wait on a server known to be down
    assert await down.check() is False


async def test_check_finds_the_primary_model(llm: LLM, fake_ollama: FakeOllama) -> None:
    assert await llm.check() is True
    fake_ollama.models = ["other:7b"]
    assert await llm.check() is False
    assert not llm.available


async def test_sensitive_content_never_reaches_a_remote_model_without_consent(fake_ollama: FakeOllama) -> None:
    remote = LLM(fake_ollama.url, {"primary": TierConfig("qwen3:4b", local=False), "fast": TierConfig("qwen3:1.7b")},
                 timeout_s=5.0)
    secret = [{"role": "user", "content": "I ate three donuts at Café Luna"}]
    with pytest.raises(PrivacyBlocked):
        await remote.chat("primary", secret, sensitive=True)
    assert fake_ollama.requests == []  # nothing left the process
    await remote.chat("fast", secret, sensitive=True)  # the local tier may see it
    await remote.chat("primary", secret, sensitive=True, consent=True)  # and the remote one with consent
    assert len(fake_ollama.requests) == 2


async def test_embeddings_come_back_per_text(llm: LLM, fake_ollama: FakeOllama) -> None:
    vectors = await llm.embed(["a", "b"], model="nomic-embed-text")
    assert len(vectors) == 2 and len(vectors[0]) == 8
    assert vectors[0] != vectors[1]


@pytest.mark.parametrize("stream", [False, True])
async def test_think_is_sent_explicitly_off_for_the_fast_tier_and_as_set_for_the_primary(
        fake_ollama: FakeOllama, stream: bool) -> None:
    async def ignore(piece: str) -> None:
        return None

    sink = ignore if stream else None
    default = LLM(fake_ollama.url, {"primary": TierConfig("qwen3:4b"), "fast": TierConfig("qwen3:1.7b")}, timeout_s=5)
    thinking = LLM(fake_ollama.url, {"primary": TierConfig("qwen3:4b", think=True),
                                     "fast": TierConfig("qwen3:1.7b")}, timeout_s=5)
    await default.chat("primary", [{"role": "user", "content": "hi"}], on_text=sink)
    await default.chat("fast", [{"role": "user", "content": "hi"}], on_text=sink)
    await thinking.chat("primary", [{"role": "user", "content": "hi"}], on_text=sink)
    await thinking.chat("fast", [{"role": "user", "content": "hi"}], on_text=sink)
    assert [r["think"] for r in fake_ollama.requests] == [False, False, True, False]


def test_a_streamed_request_goes_through_the_proxy_the_environment_names(monkeypatch: pytest.MonkeyPatch) -> None:
    from brain.companion.llm import _env_proxy

    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY",
                 "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert _env_proxy("http://ollama.example:11434/api/chat") == (None, None)
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    assert _env_proxy("http://ollama.example:11434/api/chat")[0] == "http://proxy.example:3128"
    monkeypatch.setenv("NO_PROXY", "ollama.example")
    assert _env_proxy("http://ollama.example:11434/api/chat") == (None, None)


async def test_the_apps_client_streams_its_answers_over_one_kept_connection(fake_ollama: FakeOllama) -> None:
    async def sink(piece: str) -> None:
        pass

    kept = LLM(fake_ollama.url, {"primary": TierConfig("m"), "fast": TierConfig("m")}, keep_alive=True)
    for _ in range(2):
        fake_ollama.script(Script(content="One, two.", chunks=2))
        assert (await kept.chat("primary", HELLO, on_text=sink)).content == "One, two."
    assert fake_ollama.peers[0] == fake_ollama.peers[1]  # the same connection: no new one, no new TLS handshake
    await kept.aclose()
    fake_ollama.script(Script(content="Three.", chunks=1))
    assert (await kept.chat("primary", HELLO, on_text=sink)).content == "Three."  # closed, then a new session
    assert fake_ollama.peers[2] != fake_ollama.peers[1]
    await kept.aclose()

    single = LLM(fake_ollama.url, {"primary": TierConfig("m"), "fast": TierConfig("m")})
    for _ in range(2):
        fake_ollama.script(Script(content="Four.", chunks=1))
        await single.chat("primary", HELLO, on_text=sink)
    assert fake_ollama.peers[3] != fake_ollama.peers[4]  # without keep_alive, a session of its own per answer
