"""Buttons in a chat without buttons: the reactions the bot puts under a message with choices
(`bot.delivery.choices`), and which choice a reaction or a typed number picks. Pure functions; the tokens' meaning
stays on the server.

✅ picks the approving choice (or the first one), ❌ the rejecting or dismissing one, 💤 the first snooze,
1️⃣..🔟 a choice by position. Only the reactions the bot put under the message count: any other (👍, the first
quick reaction of Element, say) is a reaction, not an answer."""

from __future__ import annotations

from collections.abc import Sequence

from bot.delivery.choices import APPROVE, REJECT, SNOOZE, Choice

APPROVE_KEY, REJECT_KEY, SNOOZE_KEY = "✅", "❌", "💤"
KEYCAPS = ("1️⃣", "2️⃣", "3️⃣", "4️⃣", "5️⃣", "6️⃣", "7️⃣", "8️⃣", "9️⃣", "🔟")
ROLE_KEYS = {APPROVE: APPROVE_KEY, REJECT: REJECT_KEY, SNOOZE: SNOOZE_KEY}
KEY_ROLES = {key: role for role, key in ROLE_KEYS.items()}
_SELECTORS = dict.fromkeys(map(ord, "\ufe0f\ufe0e"))


def _normalize(key: str) -> str:
    return key.strip().translate(_SELECTORS)


def choice_for_key(choices: Sequence[Choice], key: str) -> Choice | None:
    """The choice a reaction picks, or None when the reaction means nothing here (it is not one of the reactions
    the bot put under the message, `reaction_keys`)."""
    if not choices or _normalize(key) not in {_normalize(k) for k in reaction_keys(choices)}:
        return None
    return _picked(choices, key)


def _picked(choices: Sequence[Choice], key: str) -> Choice | None:
    key = _normalize(key)
    for position, keycap in enumerate(KEYCAPS):
        if key == _normalize(keycap):
            return choices[position] if position < len(choices) else None
    role = KEY_ROLES.get(key)
    if role is None:
        return None
    found = next((c for c in choices if c.role == role), None)
    if found is None and role == APPROVE:
        return choices[0]  # "yes" to a message without an explicit approve: its first choice
    return found


def choice_for_number(choices: Sequence[Choice], text: str) -> Choice | None:
    """The choice a typed answer picks: '2', ' 2. ', or the keycap emoji itself."""
    answer = text.strip().rstrip(".)")
    if answer.isascii() and answer.isdigit():
        position = int(answer)
        return choices[position - 1] if 1 <= position <= len(choices) else None
    if any(_normalize(answer) == _normalize(k) for k in KEYCAPS):
        return _picked(choices, answer)
    return None


def reaction_keys(choices: Sequence[Choice]) -> list[str]:
    """The reactions the bot puts under a message: ✅ ❌ 💤 where the choices have those roles, then the
    numbers of the choices those do not reach, at their positions (Approve / Reject needs no 1️⃣ 2️⃣; a reminder
    gets ✅ ❌ 💤 and the numbers of its other snooze times)."""
    if not choices:
        return []
    keys: list[str] = []
    covered: set[str] = set()
    if any(c.role for c in choices):
        for role in (APPROVE, REJECT, SNOOZE):
            choice = _picked(choices, ROLE_KEYS[role])
            if choice is not None:
                keys.append(ROLE_KEYS[role])
                covered.add(choice.token)
    keys.extend(KEYCAPS[index] for index, choice in enumerate(choices[:len(KEYCAPS)]) if choice.token not in covered)
    return keys
