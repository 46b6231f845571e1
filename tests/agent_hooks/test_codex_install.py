"""``zkr-agent-hooks install-codex`` merges its hooks into Codex's hooks.json, once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zkr_agent_hooks.__main__ import main
from zkr_agent_hooks.codex import COMMAND


def _ours(config: dict[str, object]) -> dict[str, int]:
    hooks = config["hooks"]
    assert isinstance(hooks, dict)
    return {
        event: sum(h["command"] == COMMAND for g in groups for h in g["hooks"])
        for event, groups in hooks.items()
    }


def test_install_writes_the_hooks_and_a_second_install_changes_nothing(tmp_path: Path) -> None:
    assert main(["install-codex", "--codex-home", str(tmp_path)]) == 0
    first = (tmp_path / "hooks.json").read_text(encoding="utf-8")
    assert _ours(json.loads(first)) == {
        "SessionStart": 1,
        "UserPromptSubmit": 1,
        "Stop": 1,
        "PreCompact": 1,
    }
    assert main(["install-codex", "--codex-home", str(tmp_path)]) == 0
    assert (tmp_path / "hooks.json").read_text(encoding="utf-8") == first


def test_install_keeps_other_tools_hooks(tmp_path: Path) -> None:
    other = {"type": "command", "command": "notify-send done"}
    existing = {"hooks": {"Stop": [{"hooks": [other]}]}, "note": "kept"}
    (tmp_path / "hooks.json").write_text(json.dumps(existing), encoding="utf-8")
    assert main(["install-codex", "--codex-home", str(tmp_path)]) == 0
    config = json.loads((tmp_path / "hooks.json").read_text(encoding="utf-8"))
    assert config["note"] == "kept"
    assert config["hooks"]["Stop"][0] == {"hooks": [other]}
    assert _ours(config)["Stop"] == 1


@pytest.mark.parametrize("text", ["[]", "{not json", '{"hooks": []}', '{"hooks": {"Stop": {}}}'])
def test_a_file_it_cannot_read_is_left_as_it_was(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "hooks.json").write_text(text, encoding="utf-8")
    assert main(["install-codex", "--codex-home", str(tmp_path)]) == 1
    assert (tmp_path / "hooks.json").read_text(encoding="utf-8") == text
    error = capsys.readouterr().err
    assert error.startswith("zkr-agent-hooks: ") and error.count("\n") == 1
