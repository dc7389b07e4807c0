"""The companion: LLM turns with tools, the policy gate, proposals, missions."""
