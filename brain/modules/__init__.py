"""The five life modules. Each is a folder with models (tables), service (mutations that emit their
events) and tools (ToolSpecs over the service)."""
