"""The pulse: nudges the rule engine (rules/) produces, their delivery through the outbox, and whether
a person can be reached now (pause, quiet hours, mid-conversation)."""
