"""Tools: typed specs over module services, the registry that yields LLM function schemas, and the
executor that validates, coerces and runs them in one transaction."""
