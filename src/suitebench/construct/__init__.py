"""construct."""
