"""Photos: with a vision model (`brain.media.vision`), a meal photo becomes a meal proposal — what it is, an energy
range, the meal slot from the person's local time — with Approve / Edit / Reject (handled in `bot.commands.food`);
any other photo is answered as a question about it (the caption is the question). Without a vision model the
person is asked to say what they ate, with a button into the meal flow by text.

The image is only held in memory while the model looks at it; a remote vision model sees it only with the person's
consent. Every failure is one translated message and changes nothing."""

from __future__ import annotations

import logging
import uuid

from bot.inbound import Media
from bot.media import remote_allowed
from bot.turn import Turn
from brain.i18n import tr
from brain.media.vision import MealEstimate, Vision, VisionUnavailable
from brain.modules.food.service import infer_meal_type, meal_label
from brain.people.local_time import local_now

log = logging.getLogger(__name__)

MAX_PHOTO_BYTES = 20 * 1024 * 1024  # what Telegram lets a bot download
APPROVE, EDIT, REJECT = "photo_meal_approve", "photo_meal_edit", "photo_meal_reject"


class Photos:
    """`vision`: the vision model's client, None when OLLAMA_MODEL_VISION is not set."""

    def __init__(self, vision: Vision | None = None) -> None:
        self.vision = vision

    async def look(self, turn: Turn, media: Media) -> None:
        vision = self.vision
        if vision is None:
            turn.say(tr("I can't look at pictures without a vision model; tell me what you ate."),
                     buttons=[[turn.button(tr("Log a meal by text"), "command", text="/meal")]])
            return
        if not await remote_allowed(turn, local=vision.local):
            turn.say(tr("Your photo would go to a vision model that does not run on your own hardware, and you "
                        "haven't allowed that for sensitive content. Nothing was sent. /settings can allow it; or "
                        "tell me what you ate."))
            return
        if media.size is not None and media.size > MAX_PHOTO_BYTES:
            turn.say(tr("That picture is too large for me. Nothing was saved."))
            return
        async with turn.brain.db.unshared():  # no connection held while the model looks
            estimate = await self._see(turn, vision, media)
        if estimate is not None:
            self._propose(turn, estimate, media)

    async def _see(self, turn: Turn, vision: Vision, media: Media) -> MealEstimate | None:
        """The meal on the photo, or None once the person has their answer (or was told what went wrong)."""
        try:
            image = await media.fetch()
        except Exception as problem:
            log.info("downloading a photo failed: %s", problem)
            turn.say(tr("I couldn't download that picture. Nothing was saved; please send it again."))
            return None
        try:
            if len(image) > MAX_PHOTO_BYTES:
                turn.say(tr("That picture is too large for me. Nothing was saved."))
                return None
            language = turn.user.locale
            estimate = await vision.read_meal(image, language=language)
            if estimate is None:
                turn.say(await vision.answer(image, media.caption, language=language))
                turn.model_answered = False  # about a picture: not remembered as conversation
            return estimate
        except VisionUnavailable as problem:
            log.warning("the vision model failed: %s", problem)
            turn.say(tr("I can't reach my vision model right now, so I couldn't look at your picture. Nothing was "
                        "saved; send it again in a minute or tell me what you ate."))
            return None
        finally:
            del image  # the only reference: the picture is gone with it

    @staticmethod
    def _propose(turn: Turn, meal: MealEstimate, media: Media) -> None:
        slot = infer_meal_type(local_now(turn.user, turn.now).time())
        payload = {"meal_id": str(uuid.uuid4()), "description": meal.description, "meal_type": slot,
                   "kcal": meal.kcal, "kcal_min": meal.kcal_min, "kcal_max": meal.kcal_max,
                   "confidence": meal.confidence, "foods": meal.foods, "media_id": media.media_id or ""}
        turn.say(tr("That looks like {description}, about {low}–{high} kcal. Log it as your {meal}?",
                    description=meal.description, low=meal.kcal_min, high=meal.kcal_max, meal=meal_label(slot)),
                 buttons=[[turn.button(tr("Approve"), APPROVE, **payload), turn.button(tr("Edit"), EDIT, **payload),
                           turn.button(tr("Reject"), REJECT, **payload)]])
