"""A person's scheduled pushes: the morning summary, the evening reflection and scheduled rituals, each a
local time of day on chosen weekdays in the person's IANA zone. `slots` decides (purely) what is due, `pushes`
renders and enqueues it through the outbox once per (person, kind, local slot); the scheduler calls it."""
