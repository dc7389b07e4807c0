"""What the person sends besides text: voice notes (speech to text) and photos (a vision model)."""
