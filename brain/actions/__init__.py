"""Opaque action tokens behind buttons: create, resolve for their owner, consume once."""
