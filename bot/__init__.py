"""The platform-neutral bot: dialog, rendering, outbox delivery, app wiring and the command line."""
