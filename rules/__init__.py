"""Pulse rules (one small file each) and the rule engine that turns projections into nudges."""
