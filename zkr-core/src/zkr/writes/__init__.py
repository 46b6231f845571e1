"""The write operations: storing captures and claims, superseding, linking, deleting, profiles and
reviews. Each handler is ``handler(db, request) -> response`` and runs in one transaction."""
