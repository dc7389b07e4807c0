"""I/O only: turn platform updates into Inbound and Outbound into platform messages."""
