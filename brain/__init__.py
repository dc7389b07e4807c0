"""The core of Companion: store, domain events, life modules, tools. Knows no chat platform."""
