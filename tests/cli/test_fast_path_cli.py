"""A one-shot command on the fast path (issues 14, 27) answers exactly as the normal path does.

For the fuzz corpus of every operation (tests/integration/test_fuzz.py's requests, valid and
mutated, on its seeded two-scope database), ``zkr --db DB COMMAND`` gives the same exit status,
the same stdout and stderr bytes and the same database afterwards (every row, the feed included)
in a fresh process that never imported pydantic (the fast path: the handler on light classes)
as in this process, where the real models are loaded and the fast path declines (pydantic
validates and the table's handler runs). Record ids are drawn from one counter on both sides, so
that a write's answer and rows can be compared byte for byte. Fresh processes are forked from a
server that has imported zkr-cli but not pydantic (a process per request would take minutes).
A real process then shows that a valid search never imports pydantic, and that an invalid one
still gets pydantic's contract error.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zkr.store.validation
from tests.cli.conftest import Outcome, db_snapshot
from tests.integration.test_fuzz import encode, requests_for, seed
from zkr.db import MemoryDb
from zkr.fastpath.check import load_shapes

FAST = sorted(load_shapes()["operations"])

# Reads JSON lines {"argv", "stdin", "env"}; for each forks a child that runs zkr's main on them
# with record ids from a counter, and answers {"code", "stdout", "stderr", "pydantic"}.
_FORK_SERVER = """
import base64, io, json, os, sys
import zkr.store.validation
from zkr_cli.__main__ import main
assert "pydantic" not in sys.modules
protocol_in, protocol_out = sys.stdin.buffer, sys.stdout.buffer
for line in protocol_in:
    job = json.loads(line)
    result = os.path.join(job["dir"], "result.json")
    pid = os.fork()
    if pid == 0:
        counter = iter(range(1, 1 << 30))
        zkr.store.validation.urandom = lambda n: next(counter).to_bytes(n, "big")
        os.environ.update(job["env"])
        for name in job["unset"]:
            os.environ.pop(name, None)
        out, err = io.BytesIO(), io.BytesIO()
        sys.stdin = io.TextIOWrapper(io.BytesIO(base64.b64decode(job["stdin"])), encoding="utf-8")
        sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
        sys.stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
        code = main(job["argv"])
        sys.stdout.flush(); sys.stderr.flush()
        with open(result, "w") as handle:
            json.dump({"code": code, "stdout": base64.b64encode(out.getvalue()).decode(),
                       "stderr": base64.b64encode(err.getvalue()).decode(),
                       "pydantic": "pydantic" in sys.modules}, handle)
        os._exit(0)
    os.waitpid(pid, 0)
    protocol_out.write(b"done\\n")
    protocol_out.flush()
"""


class _Forked:
    """A fresh process (forked from a server without pydantic) per ``zkr`` run."""

    def __init__(self, env: dict[str, str], work: Path) -> None:
        self.work = work
        self.server = subprocess.Popen(
            [sys.executable, "-c", _FORK_SERVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )

    def __call__(
        self, argv: list[str], stdin: bytes, env: dict[str, str], unset: list[str]
    ) -> tuple[Outcome, bool]:
        assert self.server.stdin is not None and self.server.stdout is not None
        job = {
            "argv": argv,
            "stdin": base64.b64encode(stdin).decode(),
            "env": env,
            "unset": unset,
            "dir": str(self.work),
        }
        self.server.stdin.write(json.dumps(job).encode() + b"\n")
        self.server.stdin.flush()
        assert self.server.stdout.readline() == b"done\n"
        result = json.loads((self.work / "result.json").read_text())
        outcome = Outcome(
            result["code"], base64.b64decode(result["stdout"]), base64.b64decode(result["stderr"])
        )
        return outcome, result["pydantic"]

    def close(self) -> None:
        assert self.server.stdin is not None
        self.server.stdin.close()
        self.server.wait(timeout=30)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    path = tmp_path_factory.mktemp("fast") / "seed.db"
    with MemoryDb(path) as db:
        ids = seed(db)
    return path, ids


@pytest.fixture(scope="module")
def peer_pages(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """A peer's export page with every kind of record seed() writes (apply's requests)."""
    with MemoryDb(tmp_path_factory.mktemp("peer") / "peer.db") as peer:
        seed(peer, key="k2", predicate="city")
        page = peer.run("export", {"tenant_id": "t", "person_id": "p", "export_format": 1})
    return [page.model_dump(mode="json", by_alias=True)]


@pytest.fixture(scope="module")
def forked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Forked]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("ZKR_")}
    env["ZKR_LOAD_PLUGINS"] = ""
    server = _Forked(env, tmp_path_factory.mktemp("forked"))
    yield server
    server.close()


def _counted_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = iter(range(1, 1 << 30))
    monkeypatch.setattr(zkr.store.validation, "urandom", lambda n: next(counter).to_bytes(n, "big"))


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_fast_and_normal_paths_answer_and_write_byte_for_byte_alike(
    data: st.DataObject,
    seeded: tuple[Path, dict[str, Any]],
    peer_pages: list[dict[str, Any]],
    forked: _Forked,
    zkr_inprocess: Callable[..., Outcome],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    path, ids = seeded
    name = data.draw(st.sampled_from(FAST))
    text = encode(data.draw(requests_for(name, {"ids": ids, "pages": peer_pages})))
    body = text.encode("utf-8", "surrogatepass")
    output_format = data.draw(st.sampled_from([(), ("--format", "text")]))
    # The fast path reads the ranking setting as pydantic's default does: both ways of it.
    ranking = data.draw(st.sampled_from([None, "contract", "recall", "bogus"]))
    fast_db, normal_db = tmp_path / "fast.db", tmp_path / "normal.db"
    for copy in (fast_db, normal_db):
        shutil.copyfile(path, copy)
    env, unset = ({}, ["ZKR_RANKING"]) if ranking is None else ({"ZKR_RANKING": ranking}, [])
    fast, _ = forked(["--db", str(fast_db), name, *output_format], body, env, unset)
    with monkeypatch.context() as patch:
        if ranking is None:
            patch.delenv("ZKR_RANKING", raising=False)
        else:
            patch.setenv("ZKR_RANKING", ranking)
        _counted_ids(patch)
        normal = zkr_inprocess("--db", str(normal_db), name, *output_format, stdin=body)
    assert fast == normal, text
    assert db_snapshot(fast_db) == db_snapshot(normal_db), text


VALID = {
    "search": {"query": "Acme", "limit": 3},
    "get": {"target": {"kind": "claim", "id": "{claim}"}},
    "remember": {"kind": "conversation", "text": "Sam moved to Porto", "captured_at": 20,
                 "recorded_at": 20, "claim": {"subject": "Sam", "predicate": "city",
                                              "value": "Porto", "kind": "fact",
                                              "valid_from": 20}},
    "memories": {"limit": 5},
    "history": {"claim_id": "{claim}"},
    "correct": {"claim_id": "{claim}", "text": "Sam works at Globex now", "value": "Globex",
                "valid_at": 30, "recorded_at": 30},
    "claims": {"subject": "Sam"},
    "captures": {},
    "profiles": {},
    "reviews": {},
    "sequence": {},
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_requests_of_everyday_operations_never_import_pydantic(
    name: str, seeded: tuple[Path, dict[str, Any]], forked: _Forked, tmp_path: Path
) -> None:
    path, ids = seeded
    db = tmp_path / "m.db"
    shutil.copyfile(path, db)
    request = json.loads(json.dumps(VALID[name]).replace("{claim}", ids["t"][2]))
    body = json.dumps({"tenant_id": "t", "person_id": "p", **request}).encode()
    outcome, pydantic = forked(["--db", str(db), name], body, {}, [])
    assert outcome.returncode == 0, outcome.stderr
    assert pydantic is False


_PROBE = """
import json, sys
from zkr_cli.__main__ import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "pydantic": "pydantic" in sys.modules}), file=sys.stderr)
"""


def _probe(
    cli_env: dict[str, str], db: Path, body: bytes, **env: str
) -> tuple[dict[str, Any], bytes]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, "--db", str(db), "search"],
        input=body,
        capture_output=True,
        env={**cli_env, **env},
        check=False,
        timeout=60,
    )
    *error, probe = done.stderr.decode().splitlines()
    return json.loads(probe), "\n".join(error).encode()


def test_a_valid_contract_search_never_imports_pydantic(
    tmp_path: Path, cli_env: dict[str, str], seeded: tuple[Path, dict[str, Any]]
) -> None:
    # The contract ranking answers JSON without pydantic; the recall ranking (the default) builds
    # its pack with the models, so the fast path saves it only the request's validation.
    db = tmp_path / "m.db"
    db.write_bytes(seeded[0].read_bytes())
    request = {"tenant_id": "t", "person_id": "p", "query": "Acme", "limit": 3}
    body = json.dumps({**request, "ranking": "contract"})
    probe, _ = _probe(cli_env, db, body.encode())
    assert probe == {"code": 0, "pydantic": False}
    # ZKR_RANKING=contract: a request that names no ranking takes the same fast path.
    probe, _ = _probe(cli_env, db, json.dumps(request).encode(), ZKR_RANKING="contract")
    assert probe == {"code": 0, "pydantic": False}
    # Declined by the fast path: pydantic words the contract's error.
    bad = json.dumps({**request, "limit": -1, "ranking": "contract"})
    probe, error = _probe(cli_env, db, bad.encode())
    assert probe == {"code": 1, "pydantic": True}
    assert json.loads(error)["error"].startswith("invalid value for `limit`")
    # An invalid ZKR_RANKING is declined too; zkr says what is wrong on one line.
    probe, error = _probe(cli_env, db, json.dumps(request).encode(), ZKR_RANKING="best")
    assert probe["code"] == 1
    assert json.loads(error) == {"error": 'ZKR_RANKING must be "contract" or "recall", not "best"'}
