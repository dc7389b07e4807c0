"""The terminal chat: lines in, replies out; buttons appear as numbered choices."""
