"""zkr-core's shape: no import circle between its modules, a small top level, a pinned public API.

The import graph counts every ``import`` statement of a module, also those inside functions: a
lazy import back into the facade is still a circle a reader has to untangle.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import zkr

PACKAGE = Path(zkr.__file__).parent

#: The top level: the public API modules and the subpackages that show the architecture.
TOP_LEVEL = {
    "__init__.py",
    "background_embedding.py",
    "console.py",
    "db.py",
    "debug_str.py",
    "enums.py",
    "envelope.py",
    "_generate_methods.py",
    "operation_methods.py",
    "errors.py",
    "jsonio.py",
    "models.py",
    "operations.py",
    "py.typed",
    "relevance.py",
    "serve_lines.py",
    "settings.py",
    "testing.py",
    "tool_calls.py",
    "tools.py",
    "version.py",
    "embeddings",
    "fastpath",
    "feed",
    "plugins",
    "retrieval",
    "store",
    "writes",
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, name: str, modules: set[str]) -> set[str]:
    """The zkr modules *path* imports (``from zkr.x import y`` counts ``zkr.x.y`` if a module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {module for module in found if module in modules and module != name}


def import_graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(files)
    graph = {name: _imports(path, name, modules) for name, path in files.items()}
    # Importing a submodule runs its packages' __init__ first, but a package's own __init__ that
    # re-exports its submodules is not a circle (the submodule never needs the package's names).
    return {
        name: {dep for dep in deps if not name.startswith(dep + ".")}
        for name, deps in graph.items()
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return [*stack[stack.index(dep) :], dep]
            if dep not in state and (cycle := visit(dep)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_find_cycle_finds_a_circle_and_accepts_a_tree() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_zkr_core_has_no_import_circle() -> None:
    graph = import_graph()
    assert "zkr.retrieval._search" in graph and "zkr.db" in graph  # the walk saw the package
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_operations_never_import_the_facade() -> None:
    graph = import_graph()
    importers = sorted(name for name, deps in graph.items() if "zkr.db" in deps)
    # The host kit sits beside the facade, above every operation (background embedding, tool calls).
    assert importers == ["zkr", "zkr.background_embedding", "zkr.testing", "zkr.tool_calls"]


def test_the_top_level_holds_the_public_api_and_the_subpackages() -> None:
    entries = {p.name for p in PACKAGE.iterdir() if p.name != "__pycache__"}
    assert entries == TOP_LEVEL


def test_the_public_api_is_pinned() -> None:
    from zkr import MemoryDb, SearchRequest, hookimpl  # the issue's own example

    assert MemoryDb.__module__ == "zkr.db"
    assert SearchRequest.__module__ == "zkr.models"
    assert hookimpl.project_name == "zkr"
    assert set(zkr.__all__) == {
        "MemoryDb",
        "SCHEMA_VERSION",
        "__version__",
        "hookimpl",
        *ERRORS,
        *MODELS,
    }
    for name in zkr.__all__:
        assert getattr(zkr, name) is not None


def test_every_operations_models_are_public() -> None:
    from zkr.operations import OPERATIONS

    for operation in OPERATIONS.values():
        names = {operation.request.__name__}
        names.update(re.findall(r"[A-Z]\w*", str(operation.response).replace("zkr.models.", "")))
        assert names - {"None"} <= set(zkr.__all__), operation.name


ERRORS = {
    "ConflictError",
    "DuplicatePluginIdError",
    "EmbeddingError",
    "ExportError",
    "IntegrityError",
    "InvalidRequest",
    "LimitExceeded",
    "MigrationError",
    "NotFound",
    "RequestParseError",
    "SchemaVersionError",
    "SettingError",
    "UnknownPluginError",
    "ZkrError",
}

MODELS = {
    "ScopesPage",
    "ScopesRequest",
    "Capture",
    "CapturesRequest",
    "ClaimsRequest",
    "LiveClaim",
    "Ranking",
    "SequenceRequest",
    "SequenceResult",
    "ApplyRequest",
    "ApplyResult",
    "AsOf",
    "ClaimEvidenceRecord",
    "ClaimHistory",
    "ClaimInput",
    "ClaimKind",
    "ClaimRecord",
    "ClaimStatus",
    "ClaimVersion",
    "CorrectRequest",
    "CorrectResult",
    "CorrectionRecord",
    "DailyReviewRecord",
    "DeleteRequest",
    "DeleteResult",
    "DeletionRecord",
    "EmbedRequest",
    "EmbedResult",
    "EmbeddingInput",
    "ErasureRecord",
    "EvidenceBody",
    "EvidenceRecord",
    "EvidenceRelation",
    "ExportCommit",
    "ExportPage",
    "ExportRequest",
    "ForgetRequest",
    "ForgetResult",
    "GetRequest",
    "HistoryCorrection",
    "HistoryEvent",
    "HistoryEvidence",
    "HistoryRequest",
    "LinkRequest",
    "ListedCapture",
    "ListedClaim",
    "LocatorInput",
    "LocatorRequest",
    "MemoriesPage",
    "MemoriesRequest",
    "MemoryKind",
    "MemoryListItem",
    "MemoryRef",
    "OkResult",
    "ProfileEntry",
    "ProfileRecord",
    "ProfileRequest",
    "ProfileStability",
    "ProfilesRequest",
    "ProjectionInput",
    "ProjectionIssue",
    "ProjectionState",
    "ProjectionsRequest",
    "QueryEmbedding",
    "RebuildRequest",
    "RebuildResult",
    "RememberRequest",
    "RememberResult",
    "RetrievalItem",
    "RetrievalPack",
    "ReviewItem",
    "ReviewRequest",
    "ReviewResult",
    "ReviewsRequest",
    "ScopedRequest",
    "SearchRequest",
    "SourceBody",
    "SourceKind",
    "SourceRecord",
    "TargetKind",
    "TargetRef",
    "TimeRange",
    "VectorDistance",
    "VectorNormalization",
}


_EACH_MODULE_FIRST = """
import importlib, sys
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "zkr" or m.startswith("zkr.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except ImportError as exc:
        failed.append(f"{name}: {exc}")
print("\\n".join(failed))
"""


def test_every_module_imports_first() -> None:
    """A package ``__init__`` that imports its modules adds edges the walk above cannot see: import
    each module first, in a clean interpreter state, and it must load."""
    import subprocess
    import sys

    names = sorted(import_graph())
    done = subprocess.run(
        [sys.executable, "-c", _EACH_MODULE_FIRST, *names],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == ""
