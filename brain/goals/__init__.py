"""Goals: targets over the life logs (event counts, sums of a payload field, streak days) per local
day, week or month, tracked incrementally from domain events, with a history of past periods."""
