"""zkr-core's shape: folders are layers, no import circle between its modules, a small top level, a
pinned public API.

The import graph counts every ``import`` statement of a module, also those inside functions and
under ``if TYPE_CHECKING:``: a lazy import back into the facade is still a circle a reader has to
untangle, and a type named from a higher layer is still a dependency on it.
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
    "generating.py",
    "_generate_methods.py",
    "operation_methods.py",
    "errors.py",
    "jsonio.py",
    "models",
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


def _module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
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


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Each module of *package* (zkr-core's ``zkr`` unless told) with the package's modules it
    imports."""
    files = {_module_name(p, package): p for p in package.rglob("*.py")}
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


#: zkr-core's layers, lowest first (docs/architecture.md, "Layers"). A module may import modules of
#: its own layer and of lower ones, never of a higher one nor of a neighbour on the same floor
#: (``feed`` and ``embeddings`` stand side by side and know nothing of each other). A module
#: belongs to the layer of the longest name here that is it or a package holding it.
LAYERS: tuple[tuple[str, ...], ...] = (
    # The foundation: the contract's vocabulary (errors, bounds, settings, models, canonical JSON).
    # ``relevance`` (how a score is shown to a person) is pure arithmetic and belongs here too.
    (
        "zkr.errors",
        "zkr.enums",
        "zkr.settings",
        "zkr.jsonio",
        "zkr.models",
        "zkr.version",
        "zkr.relevance",
    ),
    # Plugin interfaces, hook specifications, the manager and the default plugins: they see
    # models, never the database, so every layer above may ask for an embedder or an importer.
    ("zkr.plugins",),
    ("zkr.store",),
    ("zkr.feed",),
    ("zkr.embeddings",),
    ("zkr.writes",),
    ("zkr.retrieval",),
    ("zkr.operations",),
)
#: Layers that stand on one floor: neither may import the other.
SAME_FLOOR = ({"zkr.feed", "zkr.embeddings"},)
#: Everything else (the facade ``zkr``, ``zkr.db``, its generated ``operation_methods``, the host
#: kit: ``tools``, ``console``, ``background_embedding``, ``fastpath``, ``testing``) is the top
#: floor: it may import anything, and nothing below may import it.
TOP = "the facade and host kit"


def layer_of(module: str) -> str:
    """The name in :data:`LAYERS` that *module* belongs to, or :data:`TOP`."""
    for name in sorted((n for layer in LAYERS for n in layer), key=len, reverse=True):
        if module == name or module.startswith(name + "."):
            return next(layer[0] for layer in LAYERS if name in layer)
    return TOP


def _floor(layer: str) -> int:
    if layer == TOP:
        return len(LAYERS)
    return next(i for i, names in enumerate(LAYERS) if names[0] == layer)


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import of *graph* that breaks the layers: ``"importer -> imported"``, sorted."""
    bad = []
    for module, deps in graph.items():
        mine = layer_of(module)
        for dep in deps:
            theirs = layer_of(dep)
            if theirs == mine:
                continue
            side_by_side = any({mine, theirs} <= floor for floor in SAME_FLOOR)
            if side_by_side or _floor(theirs) > _floor(mine):
                bad.append(f"{module} ({mine}) -> {dep} ({theirs})")
    return sorted(bad)


def test_the_layer_check_finds_an_upward_import(tmp_path: Path) -> None:
    """The check is fed a synthetic package whose lower layers import upwards (one plainly, one
    lazily inside a function, one for types only, one sideways), and must name each of them."""
    package = tmp_path / "zkr"
    files = {
        "__init__.py": "from zkr.db import Db\n",
        "db.py": "from zkr.operations import TABLE\nfrom zkr.store import tables\n",
        "models.py": "from zkr.enums import Kind\n",
        "enums.py": "",
        "operations.py": "from zkr.retrieval import search\nfrom zkr.writes import remember\n",
        "store/__init__.py": "",
        "store/tables.py": "from zkr.feed.pages import PAGE\n",  # store -> feed: up
        "feed/__init__.py": "",
        "feed/pages.py": "from zkr.store import tables\nfrom zkr.embeddings import lanes\n",
        "embeddings/__init__.py": "",
        "embeddings/lanes.py": "def f():\n    from zkr.retrieval.search import q\n",
        "writes/__init__.py": "",
        "writes/remember.py": (
            "from typing import TYPE_CHECKING\nfrom zkr import models\n"
            "if TYPE_CHECKING:\n    from zkr.operations import TABLE\n"
        ),
        "retrieval/__init__.py": "",
        "retrieval/search.py": "from zkr.writes import remember\nfrom zkr.feed import pages\n",
    }
    for name, text in files.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text, encoding="utf-8")
    assert upward_imports(import_graph(package)) == [
        "zkr.embeddings.lanes (zkr.embeddings) -> zkr.retrieval.search (zkr.retrieval)",
        "zkr.feed.pages (zkr.feed) -> zkr.embeddings (zkr.embeddings)",
        "zkr.feed.pages (zkr.feed) -> zkr.embeddings.lanes (zkr.embeddings)",
        "zkr.store.tables (zkr.store) -> zkr.feed.pages (zkr.feed)",
        "zkr.writes.remember (zkr.writes) -> zkr.operations (zkr.operations)",
    ]


def test_the_layer_check_accepts_downward_imports() -> None:
    graph = {
        "zkr": {"zkr.db"},
        "zkr.db": {"zkr.operations", "zkr.store.database"},
        "zkr.operations": {"zkr.retrieval.search", "zkr.writes.capture", "zkr.models"},
        "zkr.retrieval.search": {"zkr.writes.capture", "zkr.embeddings.dense", "zkr.feed.pages"},
        "zkr.writes.capture": {"zkr.store.commits", "zkr.feed.erasure", "zkr.plugins.importers"},
        "zkr.embeddings.dense": {"zkr.store.budget", "zkr.plugins.embedders", "zkr.errors"},
        "zkr.store.commits": {"zkr.jsonio", "zkr.models"},
        "zkr.models": {"zkr.enums", "zkr.settings"},
    }
    assert upward_imports(graph) == []


def test_zkr_core_folders_are_layers() -> None:
    graph = import_graph()
    assert "zkr.store.schema" in graph and "zkr.retrieval._lexical" in graph  # the walk saw it
    assert upward_imports(graph) == []


def test_every_named_layer_exists() -> None:
    """A layer named here that no module has is a stale line: the table must say what is."""
    graph = import_graph()
    for name in (n for layer in LAYERS for n in layer):
        assert name in graph, name


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
    assert SearchRequest.__module__ == "zkr.models.requests"  # a module of the models package
    assert zkr.models.SearchRequest is SearchRequest
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
