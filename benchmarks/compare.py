"""Run the benchmarks of two commits in one run and compare every figure (issue 12: no figure may be
worse than 1.2x its value before a change).

Usage (from the repository root; ``nox -s bench_compare`` does this)::

    python benchmarks/compare.py --baseline REV [--sizes 1000,10000] [--sections lexical,...]
        [--rounds 10] [--out bench-compare.json]

The baseline is checked out in a temporary git worktree with its own locked environment
(``uv sync --frozen``); both checkouts run *their own* ``benchmarks/run.py`` on the same cached
corpora, alternating baseline and current for ``--rounds`` rounds so that a load change on the
machine hits both sides alike. Each figure's value for a side is its **median over the rounds**,
and the ratio is current over baseline for times (``*_ms``) and baseline over current for rates
(``per_second``): above 1 means the change made it worse. The best round of each side and every
round's value are in the report too.

Why the median of rounds and not the best round: each round is one process per side, and on a
shared 2-core machine the same code's figure varies by 2x from process to process (projections
at 10,000: 5.1-10.5 ms over 16 processes of one commit). The best of a few rounds is then one
lucky process per side, and with 42 figures some ratio passed 1.2 by chance in every run
(``benchmarks/README.md``, "Comparing two commits"); the median over ten alternating rounds is a
typical process of each side.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 1.2
_FLOORS = {"raw_fts", "pipe_echo", "python_c_pass", "floor"}


def figures(node: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, float, bool]]:
    """``(path, value, lower_is_better)`` for every time and rate in a report."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from figures(value, (*path, str(key)))
    elif isinstance(node, int | float) and not isinstance(node, bool) and path:
        leaf = path[-1]
        # Medians only (tails and extremes measure the machine's load), and only what zkr's code
        # does: raw FTS5, a pipe echo and ``python -c pass`` are the same-run floors, not figures.
        if leaf == "median_ms" and not _FLOORS.intersection(path):
            yield "/".join(path), float(node), True
        elif leaf == "per_second":
            yield "/".join(path), float(node), False


def rounds_of(reports: list[dict[str, Any]]) -> dict[str, tuple[list[float], bool]]:
    """Every round's value of each figure of one side, in round order."""
    values: dict[str, tuple[list[float], bool]] = {}
    for report in reports:
        for path, value, lower in figures(report.get("sections", {})):
            values.setdefault(path, ([], lower))[0].append(value)
    return values


def typical(reports: list[dict[str, Any]]) -> dict[str, tuple[float, bool]]:
    """The median over the rounds of each figure of one side."""
    return {
        path: (statistics.median(values), lower)
        for path, (values, lower) in rounds_of(reports).items()
    }


def best(reports: list[dict[str, Any]]) -> dict[str, tuple[float, bool]]:
    """The best value of each figure over several rounds of one side."""
    return {
        path: (min(values) if lower else max(values), lower)
        for path, (values, lower) in rounds_of(reports).items()
    }


def compare(baseline: dict[str, tuple[float, bool]], current: dict[str, tuple[float, bool]]) -> Any:
    rows = []
    for path, (new, lower) in sorted(current.items()):
        if path not in baseline or baseline[path][0] <= 0 or new <= 0:
            continue
        old = baseline[path][0]
        ratio = new / old if lower else old / new
        rows.append({"figure": path, "baseline": old, "current": new, "ratio": round(ratio, 3)})
    worst = max(rows, key=lambda row: row["ratio"], default=None)
    return {"limit": LIMIT, "worst": worst, "figures": rows, "ok": bool(rows) and worst is not None
            and worst["ratio"] <= LIMIT}  # fmt: skip


def bench(checkout: Path, python: Path, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    command = [str(python), str(checkout / "benchmarks" / "run.py"), "--out", str(out),
               "--cache-dir", str(ROOT / ".bench"), "--sections", args.sections]  # fmt: skip
    if args.sizes:
        command += ["--sizes", args.sizes]
    subprocess.run(command, cwd=checkout, check=True)
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="the commit to compare against")
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--sections", default="cold_cli,lexical,hybrid,projections,embed,remember")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--out", default="bench-compare.json")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="zkr-baseline-") as tmp:
        base = Path(tmp) / "baseline"
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(base), args.baseline],
                       cwd=ROOT, check=True)  # fmt: skip
        try:
            subprocess.run(["uv", "sync", "-q", "--frozen", "--all-packages"], cwd=base, check=True)
            sides: dict[str, list[dict[str, Any]]] = {"baseline": [], "current": []}
            for round_ in range(args.rounds):
                for name, checkout in (("baseline", base), ("current", ROOT)):
                    python = checkout / ".venv" / "bin" / "python"
                    out = Path(tmp) / f"{name}-{round_}.json"
                    sides[name].append(bench(checkout, python, args, out))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT,
                           check=False)  # fmt: skip
    result = {
        "baseline": args.baseline,
        "current": subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip(),
        "rounds": args.rounds,
        "statistic": "median over rounds",
        **compare(typical(sides["baseline"]), typical(sides["current"])),
        "best_of_rounds": compare(best(sides["baseline"]), best(sides["current"])),
        "values": {
            name: {path: values for path, (values, _) in rounds_of(reports).items()}
            for name, reports in sides.items()
        },
    }
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    worst = result["worst"]
    print(
        f"worst figure: {worst['figure']} {worst['ratio']}x (limit {LIMIT}x)" if worst else "none"
    )
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
