"""Root conftest: every test session uses zkr's own pytest plugin.

``zkr.testing`` marks the process as a test run, so installed ``zkr`` entry points are not
auto-loaded (a test asks with ``load_plugins(entry_points=True)``), and provides the
``memory_db`` and ``registered_plugin`` fixtures.
"""

pytest_plugins = ["zkr.testing"]
