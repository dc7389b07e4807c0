"""The outbox delivery, written once for every platform: `sender.OutboxSender` claims, sends and settles outbox rows
in order per chat; a platform's adapter supplies a `transport.Transport` (how a message is split into requests, how
one is sent, what a failure means); `pushes` says where the pushes of a person go on a platform."""
