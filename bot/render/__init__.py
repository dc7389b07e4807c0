"""Pure translations of what the bot says into the markup a platform shows."""
