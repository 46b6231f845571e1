"""The version of every zkr distribution (they are released in lockstep).

This is the one place it is written: each distribution's ``pyproject.toml`` reads it (hatch's
``version`` source) and the code imports it from here.
"""

__version__ = "0.4.0"
