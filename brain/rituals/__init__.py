"""Rituals: guided routines as a sequence of steps (log a drink, show the day, ask for a number, a mood or a
few words, tick a checklist, breathe). Templates, the person's own rituals, drafting from short lines, and the
step state machine; no UI here (bot/commands/rituals.py renders them as button flows)."""
