"""Reminders the person asks for ("remind me to call mom at 3pm"): rows with a due time in UTC and the person's
zone, sent by the scheduler through the outbox once per reminder and occurrence, with buttons to mark one done or
snooze it. `service` changes them, `sending` sends what is due, `tools` offers them to the model."""
