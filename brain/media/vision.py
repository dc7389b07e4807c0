"""The vision client: a photo shown to a vision-capable model on the Ollama server (`OLLAMA_MODEL_VISION`, e.g. a
qwen2.5-vl, gemma3 or llava model) through the official `ollama` client's `images=`. Two questions are asked of it:
whether the photo shows a meal, and if so what it is and roughly how much energy it has (`read_meal`, answered as
JSON and checked here), or what the person asks about any other photo (`answer`). The image is sent, never stored."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field

import httpx
import ollama
from pydantic import ValidationError

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 120.0
MAX_DESCRIPTION = 200
MAX_KCAL = 5000
LANGUAGES = {"de": "German", "en": "English"}

MEAL_PROMPT = (
    "Look at the photo. Does it show a meal, a dish, a snack or a drink with calories that someone is about to eat "
    "or has eaten? Answer with JSON only, in this shape: "
    '{"meal": true, "description": "<what it is, a few words in LANGUAGE>", "foods": ["<food>", ...], '
    '"kcal_min": <integer>, "kcal_max": <integer>, "confidence": <0 to 1>} '
    'for a meal, or {"meal": false} for anything else (a menu, a shop, a recipe page, a person, a landscape).')
ANSWER_PROMPT = "Answer in LANGUAGE, briefly. About this photo: {question}"
DEFAULT_QUESTION = "What is in this picture?"


class VisionUnavailable(Exception):
    """The vision model did not answer (server down, model missing, timeout, garbage)."""


@dataclass(frozen=True)
class VisionConfig:
    host: str
    model: str
    local: bool = True  # the model runs on hardware the person (or the operator for them) controls
    timeout_s: float = DEFAULT_TIMEOUT_S


@dataclass(frozen=True)
class MealEstimate:
    """What the model made of a meal photo: a short description and an energy range in kcal."""

    description: str
    kcal_min: int
    kcal_max: int
    confidence: float = 0.5
    foods: list[str] = field(default_factory=list)

    @property
    def kcal(self) -> int:
        """The middle of the range: what is logged."""
        return (self.kcal_min + self.kcal_max) // 2


class Vision:
    def __init__(self, config: VisionConfig) -> None:
        self.config = config
        self._client = ollama.AsyncClient(host=config.host,
                                          timeout=httpx.Timeout(config.timeout_s, connect=min(5.0, config.timeout_s)))

    @property
    def local(self) -> bool:
        return self.config.local

    async def read_meal(self, image: bytes, *, language: str) -> MealEstimate | None:
        """The meal on the photo, or None when it shows none (or the model's answer makes no sense as one)."""
        text = await self._ask(image, MEAL_PROMPT.replace("LANGUAGE", _language(language)), as_json=True)
        return meal_estimate(text)

    async def answer(self, image: bytes, question: str | None, *, language: str) -> str:
        """The model's answer to the person's question about the photo (the caption), or a description of it."""
        prompt = ANSWER_PROMPT.replace("LANGUAGE", _language(language)).format(
            question=(question or "").strip() or DEFAULT_QUESTION)
        text = (await self._ask(image, prompt, as_json=False)).strip()
        if not text:
            raise VisionUnavailable("the model answered with nothing")
        return text

    async def _ask(self, image: bytes, prompt: str, *, as_json: bool) -> str:
        try:
            response = await self._client.chat(model=self.config.model, stream=False,
                                               format="json" if as_json else None,
                                               messages=[{"role": "user", "content": prompt, "images": [image]}])
        except (ollama.ResponseError, httpx.HTTPError, ConnectionError, TimeoutError, ValidationError,
                ValueError) as problem:
            raise VisionUnavailable(str(problem)[:300] or type(problem).__name__) from problem
        return response.message.content or ""

    async def check(self) -> str | None:
        """None when the server has the vision model; else what is wrong (for `companion doctor`)."""
        try:
            listed = await self._client.list()
        except Exception as problem:
            return str(problem)[:300] or type(problem).__name__
        names = {m.model for m in listed.models if m.model}
        wanted = self.config.model
        if wanted in names or (":" not in wanted and f"{wanted}:latest" in names):
            return None
        return f"the server has no model {wanted!r} (ollama pull {wanted})"


def meal_estimate(text: str) -> MealEstimate | None:
    """The model's JSON answer as a meal, checked: a description, a plausible range (swapped if reversed, within
    0..MAX_KCAL); None for "no meal" and for anything that is not such an answer."""
    try:
        data = json.loads(text)
    except ValueError:
        log.info("the vision model's answer was not JSON: %.200s", text)
        return None
    if not isinstance(data, dict) or data.get("meal") is not True:
        return None
    description = " ".join(str(data.get("description") or "").split())[:MAX_DESCRIPTION]
    low, high = _kcal(data.get("kcal_min")), _kcal(data.get("kcal_max"))
    if not description or low is None or high is None:
        return None
    low, high = min(low, high), max(low, high)
    foods = [" ".join(str(f).split())[:60] for f in data.get("foods") or [] if str(f).strip()][:20] \
        if isinstance(data.get("foods"), list) else []
    confidence = data.get("confidence")
    sure = float(confidence) if isinstance(confidence, int | float) and 0 <= confidence <= 1 else 0.5
    return MealEstimate(description, low, high, sure, foods)


def _kcal(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if 0 <= value <= MAX_KCAL else None


def _language(code: str) -> str:
    return LANGUAGES.get(code, "English")
