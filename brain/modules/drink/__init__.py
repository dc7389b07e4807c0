"""Drinks: log what you drink, presets, undo, and daily progress against a goal (2000 ml water)."""
