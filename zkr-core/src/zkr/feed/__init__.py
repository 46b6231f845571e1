"""The export feed: commits appended by every mutation, read as bounded pages (``export``) and
applied elsewhere (``apply``)."""
