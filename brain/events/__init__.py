"""Domain events: who did what (Actor), the typed catalogue, the bus, and the append-only store."""
