"""Root conftest: every test session uses zkr's own pytest plugin.

``zkr.testing`` marks the process as a test run, so installed ``zkr`` entry points are not
auto-loaded (a test asks with ``load_plugins(entry_points=True)``), and provides the
``memory_db`` and ``registered_plugin`` fixtures.

This file is loaded by every distribution's isolated test run, so it imports only zkr-core and
pytest.
"""

from __future__ import annotations

import pytest

from zkr.db import MemoryDb

pytest_plugins = ["zkr.testing"]


@pytest.fixture
def db(memory_db: MemoryDb) -> MemoryDb:
    """The tests' short name for ``memory_db``: a fresh, migrated database in a temporary file."""
    return memory_db
