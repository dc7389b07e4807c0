"""Places: a person's known places, their visits, a location log that recognises known places within
150 m, and tracking sessions that group location logs."""
