"""People and how they reach the bot: one `User` with several platform `Identity` rows."""
