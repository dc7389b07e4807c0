"""The delivery outbox: the one way messages leave the bot. A row per message, unique per
(user, kind, slot), sent at most once: pending -> sent, or failed after too many attempts."""
