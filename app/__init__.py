"""The composition root: settings -> database -> brain -> dialog -> chat adapters, and the `companion` command line.
The one package that knows every layer; nothing imports it but its own entry points."""
