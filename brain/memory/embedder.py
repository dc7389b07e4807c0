"""Text -> unit vectors for the memory. `WordLlamaEmbedder` is the default (weights ship in the wheel,
no network, sub-millisecond per short text); `OllamaEmbedder` uses a model served by Ollama."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from brain.memory.models import EMBEDDING_DIM


@runtime_checkable
class Embedder(Protocol):
    """Returns one L2-normalized vector of length `dim` per text, in input order."""

    dim: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class WordLlamaEmbedder:
    """Loads the bundled WordLlama model on first use and keeps it for the process."""

    def __init__(self, dim: int = EMBEDDING_DIM) -> None:
        self.dim = dim
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            import wordllama

            self._model = wordllama.WordLlama.load(
                cache_dir=Path(wordllama.__file__).parent, disable_download=True, dim=self.dim
            )
        return self._model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = self._load().embed(list(texts), norm=True)
        return [row.tolist() for row in vectors]  # Python floats, converted in one call per row


def normalized(vector: Sequence[float], dim: int) -> list[float]:
    """Cuts a vector to `dim` (valid for Matryoshka models such as nomic-embed-text) and rescales to unit length."""
    cut = [float(x) for x in vector[:dim]]
    if len(cut) < dim:
        raise ValueError(f"embedding has {len(cut)} dimensions, the memory needs {dim}")
    norm = math.sqrt(sum(x * x for x in cut))
    return [x / norm for x in cut] if norm > 0 else cut


class OllamaEmbedder:
    """Embeddings from an Ollama server (`ollama` package, imported on use). `embed` blocks; async callers
    use `embed_async`. Not exercised by the test suite: no model server runs there."""

    def __init__(self, host: str, model: str = "nomic-embed-text", dim: int = EMBEDDING_DIM) -> None:
        self.host = host
        self.model = model
        self.dim = dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        import ollama

        response = ollama.Client(host=self.host).embed(model=self.model, input=list(texts))
        return [normalized(row, self.dim) for row in response["embeddings"]]

    async def embed_async(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        import ollama

        response = await ollama.AsyncClient(host=self.host).embed(model=self.model, input=list(texts))
        return [normalized(row, self.dim) for row in response["embeddings"]]
