"""Small rule-based parsers: command lines, amounts, date phrases and free text that maps to tool
calls without a language model ("250 ml water", "zwei Kaffee", "Einkaufen bis Freitag")."""
