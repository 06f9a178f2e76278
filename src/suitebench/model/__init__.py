"""Pure records and on-disk formats; imports nothing else of suitebench."""
