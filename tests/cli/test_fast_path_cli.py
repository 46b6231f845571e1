"""A one-shot command with a fast path (issue 14) answers exactly as the normal path does.

For the fuzz corpus of every fast operation (tests/integration/test_fuzz.py's requests, valid
and mutated, on its seeded two-scope database), ``zkr --db DB search`` run in this process gives
the same exit status and the same stdout and stderr bytes with the fast path as with the fast
path switched off (every request through pydantic and the table's handler). A real process then
shows that a valid search never imports pydantic, and that an invalid one still gets pydantic's
contract error.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli.conftest import Outcome
from tests.integration.test_fuzz import encode, requests_for, seed
from zkr.db import MemoryDb
from zkr.fastpath import check
from zkr.fastpath.check import load_shapes

FAST = sorted(load_shapes()["operations"])


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    path = tmp_path_factory.mktemp("fast") / "seed.db"
    with MemoryDb(path) as db:
        ids = seed(db)
    return path, ids


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_fast_and_normal_paths_answer_byte_for_byte_alike(
    data: st.DataObject,
    seeded: tuple[Path, dict[str, Any]],
    zkr_inprocess: Callable[..., Outcome],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path, ids = seeded
    name = data.draw(st.sampled_from(FAST))
    text = encode(data.draw(requests_for(name, {"ids": ids, "pages": []})))
    output_format = data.draw(st.sampled_from([(), ("--format", "text")]))
    # The fast path reads the ranking setting as pydantic's default does: both ways of it.
    ranking = data.draw(st.sampled_from([None, "contract", "recall", "bogus"]))
    if ranking is None:
        monkeypatch.delenv("ZKR_RANKING", raising=False)
    else:
        monkeypatch.setenv("ZKR_RANKING", ranking)
    argv = ("--db", str(path), name, *output_format)
    fast = zkr_inprocess(*argv, stdin=text.encode("utf-8", "surrogatepass"))
    with monkeypatch.context() as patch:
        patch.setattr(check, "fast_operation", lambda _name: None)
        normal = zkr_inprocess(*argv, stdin=text.encode("utf-8", "surrogatepass"))
    assert fast == normal, text


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
