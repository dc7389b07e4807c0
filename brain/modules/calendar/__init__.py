"""Calendar: a person's appointments with start, end, location, and today's and upcoming agenda."""
