"""Package skeleton; filled by its issue."""
