"""Projections: read models kept up to date from the event bus — the day snapshot, streaks with habit
strength, daily metrics and correlations. They are what goals, pulse rules and the context document read."""
