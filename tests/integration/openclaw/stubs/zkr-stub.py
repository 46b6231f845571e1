#!/usr/bin/env python3
"""A stand-in for `zkr` that misbehaves on purpose, or runs the real zkr (mode "real").

Called exactly like zkr: `zkr-stub.py --db PATH OPERATION`. The mode comes from $ZKR_STUB_MODE, else
from the file named by $ZKR_STUB_MODE_FILE, else "real". Both variables pass the plugin's
environment filter because they start with ZKR_. Every start appends its argv and environment to
$ZKR_STUB_LOG (JSON lines) when that is set, so tests can check what the plugin handed over.

The stub survives SIGTERM (it logs it and carries on): only SIGKILL ends a stub that does not
finish by itself, so a test can tell which signal the plugin used. It installs that handler
before it logs its start, so a logged pid always has it. (Mode "real" execs zkr, which resets it.)
"""

import json
import os
import signal
import sys
import time
from pathlib import Path

MODE_FILE = os.environ.get("ZKR_STUB_MODE_FILE")
MODE = os.environ.get("ZKR_STUB_MODE") or (
    Path(MODE_FILE).read_text().strip() if MODE_FILE and Path(MODE_FILE).exists() else "real"
)
LOG = os.environ.get("ZKR_STUB_LOG")


def log_event(event):
    if LOG:
        with open(LOG, "a") as log:
            log.write(json.dumps(event) + "\n")


def on_sigterm(signum, frame):
    log_event({"pid": os.getpid(), "signal": "SIGTERM"})


signal.signal(signal.SIGTERM, on_sigterm)
log_event(
    {
        "mode": MODE,
        "pid": os.getpid(),
        "command": sys.argv[0],
        "argv": sys.argv[1:],
        "env": dict(os.environ),
    }
)


def answers():
    """(id, request) per request: JSON lines for openclaw-serve, the whole stdin otherwise."""
    if sys.argv[-1] == "openclaw-serve":
        for line in sys.stdin:
            envelope = json.loads(line)
            yield envelope.get("id"), envelope.get("request")
    else:
        yield None, json.load(sys.stdin)


def reply(request_id, details):
    body = {"details": details}
    out = body if request_id is None else {"id": request_id, "result": body}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()


if MODE == "real":
    real = os.environ["ZKR_STUB_REAL"]
    os.execv(real, [real, *sys.argv[1:]])
elif MODE == "early-exit":  # never reads stdin: the writer gets EPIPE
    sys.exit(3)
elif MODE == "flood":  # 10 MB on stdout, no newline
    sys.stdout.write("x" * 10_000_000)
    sys.stdout.flush()
    time.sleep(30)
elif MODE == "flood-stderr":
    sys.stderr.write("secret-detail " * 800_000)
    sys.stderr.flush()
    time.sleep(30)
elif MODE == "garbage":  # exit status 0, but not JSON
    sys.stdin.read(1)
    print("secret-detail: this is not JSON", flush=True)
elif MODE == "fail":  # a zkr error with a detail that must not leak
    sys.stdin.read(1)
    print('{"error":"secret-detail /home/user/.zkr/memory.db"}', file=sys.stderr, flush=True)
    sys.exit(1)
elif MODE == "hang":
    time.sleep(60)
elif MODE == "chatty":  # 300 kB of warnings on stderr with every (good) answer
    for request_id, _request in answers():
        sys.stderr.write("warning " * 37_500)
        sys.stderr.flush()
        reply(request_id, {"results": []})
elif MODE == "env":  # report what the plugin handed over, as a search result's details
    for request_id, request in answers():
        reply(
            request_id,
            {"results": [], "argv": sys.argv[1:], "env": dict(os.environ), "request": request},
        )
else:
    sys.exit(f"unknown stub mode {MODE!r}")
