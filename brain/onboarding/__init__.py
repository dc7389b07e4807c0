"""Onboarding: the first-contact setup (language, time zone, quiet hours, daily water goal) as persisted
steps, and finding a time zone from a shared location or a city name. The button flow is in
`bot/commands/onboarding.py`."""
