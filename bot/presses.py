"""Who may press a button, and what a press that cannot act is told. Every adapter asks `screen_press` before the
dialog sees a press: a press by someone who is not the button's owner (another account in a group, a deleted or
unknown account with a stale keyboard), on a used, expired or unknown button, or on a question that is already
settled, is refused here. A refused press changes nothing: no person is created, no token is used, no message goes
to the owner's chat; the adapter shows the refusal only to the presser (Telegram: the callback answer).

A question is the set of buttons of one message. It is settled once one of its single-use buttons was used (the
same rule that removes a Telegram keyboard and closes a Matrix message's choices), so a second choice on the same
message is "already answered" even though its own token was never used."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import and_, exists, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.inbound import Inbound
from bot.updates import TokenState
from brain.actions.models import ActionToken
from brain.core import Brain
from brain.i18n import Text, tr
from brain.outbox.models import OutboxMessage
from brain.people.models import Identity, User

NOT_VALID, NOT_YOURS, USED, EXPIRED, ANSWERED = "not_valid", "not_yours", "used", "expired", "answered"


@dataclass(frozen=True)
class PressCheck:
    """The pressed button as it was before the press, and why the press cannot act (None: it may act).
    `locale` is the presser's language when they are known."""

    state: TokenState
    refusal: str | None = None
    locale: str | None = None

    @property
    def refused(self) -> bool:
        return self.refusal is not None

    @property
    def text(self) -> Text | None:
        """What the presser is told, or None for a press that may act."""
        return None if self.refusal is None else REFUSALS[self.refusal]

    @property
    def owner_pressed(self) -> bool:
        """Whether the owner of the button pressed it (their keyboard may go: it cannot act any more)."""
        return self.state.exists and self.state.owned


REFUSALS: dict[str, Text] = {
    NOT_VALID: tr("That button is not valid."),
    NOT_YOURS: tr("That button is not for you."),
    USED: tr("That button was already used."),
    EXPIRED: tr("That button has expired."),
    ANSWERED: tr("That question was already answered."),
}


async def screen_press(brain: Brain, inbound: Inbound, question: Sequence[str] = ()) -> PressCheck:
    """Whether `inbound`'s press may act: its token exists, belongs to the presser, is open, and no other
    single-use button of the same question was used (the pressed message's buttons: `question` as the platform
    shows them, and those the outbox sent with the token). Reads only; the dialog still redeems the token under a
    row lock, which decides a race."""
    token = inbound.action
    if token is None:
        return PressCheck(TokenState(exists=False), NOT_VALID)
    async with brain.transactions.read() as session:
        found = (await session.execute(
            select(Identity.user_id, User.locale).join(User, User.id == Identity.user_id)
            .where(Identity.platform == inbound.platform, Identity.platform_id == inbound.platform_user_id))).first()
        row = (await session.execute(
            select(ActionToken.user_id, ActionToken.single_use, ActionToken.used_at, ActionToken.expires_at)
            .where(ActionToken.token == token))).first()
        who, locale = (found[0], found[1]) if found is not None else (None, None)
        if row is None:
            return PressCheck(TokenState(exists=False), NOT_VALID, locale)
        owner, single_use, used_at, expires_at = row
        now = brain.clock.now()
        state = TokenState(exists=True, owned=who is not None and who == owner,
                           open=(used_at is None or not single_use) and expires_at > now, single_use=single_use)
        if not state.owned:
            return PressCheck(state, NOT_YOURS if who is not None else NOT_VALID, locale)
        if used_at is not None and single_use:
            return PressCheck(state, USED, locale)
        others = set(question) | await _sent_with(session, owner, token)
        others.discard(token)
        if others and await session.scalar(select(exists().where(and_(
                ActionToken.token.in_(others), ActionToken.user_id == owner, ActionToken.used_at.is_not(None),
                ActionToken.single_use)))):
            return PressCheck(state, ANSWERED, locale)
    if expires_at <= now:
        return PressCheck(state, EXPIRED, locale)
    return PressCheck(state, None, locale)


async def _sent_with(session: AsyncSession, owner: uuid.UUID, token: str) -> set[str]:
    """The tokens of the buttons the outbox sent together with `token` (in one message)."""
    buttons = await session.scalar(
        select(OutboxMessage.buttons).where(OutboxMessage.user_id == owner,
                                            OutboxMessage.buttons.contains([[{"token": token}]])).limit(1))
    return {str(button["token"]) for row in buttons or [] for button in row if "token" in button}
