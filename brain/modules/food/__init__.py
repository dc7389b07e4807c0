"""Food: log meals (type inferred from the local time of day), set a nutrition goal, and see the day's
calories and macros against it (2000 kcal by default)."""
