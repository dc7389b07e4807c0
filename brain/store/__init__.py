"""PostgreSQL store: models base, engine and sessions, the embedded server, migrations."""
