// The REAL gateway on Node 24: `openclaw gateway run` on 127.0.0.1 with the zkr plugin in the
// memory slot, then POST /tools/invoke: cited memory_search / memory_get from a real zkr database,
// hostile arguments, and a hostile zkr. The gateway must stay up, failures must be redacted, and
// every zkr the plugin started must have seen only the allowed environment.
//
// The plugin's command is the stub (stubs/zkr-stub.py) whose mode comes from a file: "real" execs
// the real zkr, the other modes misbehave. Every start is logged (argv + environment).
//
// Usage (check.sh): node gateway-check.mjs, with in the environment
//   OPENCLAW_ENTRY (openclaw.mjs), CHECK_WORK (work dir), CHECK_PORT, OPENCLAW_CONFIG_PATH,
//   ZKR_STUB_MODE_FILE, ZKR_STUB_LOG, and the OPENCLAW_* isolation variables.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const env = process.env;
const work = /** @type {string} */ (env.CHECK_WORK);
const port = Number(env.CHECK_PORT);
const token = `check-${process.pid}`;
const modeFile = /** @type {string} */ (env.ZKR_STUB_MODE_FILE);
const stubLog = /** @type {string} */ (env.ZKR_STUB_LOG);
const SECRETS = { OPENAI_API_KEY: "sk-zkr-check-secret", ANTHROPIC_API_KEY: "anthropic-zkr-check-secret" };
const ALLOWED = ["PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ"];
const started = Date.now();
const log = (/** @type {string} */ line) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${line}`);

const out = openSync(join(work, "gateway.out"), "w");
const gateway = spawn(process.execPath, [/** @type {string} */ (env.OPENCLAW_ENTRY), "gateway", "run", "--allow-unconfigured",
  "--port", String(port), "--bind", "loopback", "--auth", "token"], {
  env: { ...env, ...SECRETS, OPENCLAW_GATEWAY_TOKEN: token, OPENCLAW_SKIP_CHANNELS: "1", OPENCLAW_SKIP_CRON: "1",
    OPENCLAW_SKIP_BROWSER_CONTROL_SERVER: "1", OPENCLAW_SKIP_CANVAS_HOST: "1", OPENCLAW_SKIP_GMAIL_WATCHER: "1",
    OPENCLAW_SKIP_STARTUP_MODEL_PREWARM: "1", OPENCLAW_DISABLE_BONJOUR: "1" },
  stdio: ["ignore", out, out],
});
let exited = false;
gateway.on("exit", () => { exited = true; });
const stop = () => { if (!exited) gateway.kill("SIGKILL"); };
process.on("exit", stop);

/** @param {unknown} body raw string or a value to encode */
async function invoke(body) {
  const response = await fetch(`http://127.0.0.1:${port}/tools/invoke`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  return { status: response.status, text, json: (() => { try { return JSON.parse(text); } catch { return null; } })() };
}

async function up() {
  assert.equal(exited, false, "the gateway process exited");
  const response = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(10_000) });
  assert.ok(response.status < 500, `gateway answers (${response.status})`);
}

/** Everything the stub logged: start records, and a record per SIGTERM it received. */
function records() {
  return readFileSync(stubLog, "utf8").trim().split("\n").filter(Boolean).map((line) => JSON.parse(line));
}

/** The stub's start records: argv, environment and mode of every zkr the plugin spawned. */
function starts() {
  return records().filter((record) => "argv" in record);
}

try {
  writeFileSync(modeFile, "real");
  for (let i = 0; ; i++) {
    assert.ok(i < 120 && !exited, `gateway did not start:\n${readFileSync(join(work, "gateway.out"), "utf8").slice(-3000)}`);
    try { await up(); break; } catch { await new Promise((r) => setTimeout(r, 500)); }
  }
  log("gateway is up");

  // 1. Cited memory from the real database.
  const search = await invoke({ tool: "memory_search", args: { query: "plans", maxResults: 3 } });
  log(`memory_search -> ${search.status} ${search.text.slice(0, 300)}`);
  assert.equal(search.status, 200);
  const [hit] = search.json.result.details.results;
  assert.match(hit.path, /^zkr:\/\/claim\/[0-9a-f]+$/u);
  assert.equal(hit.snippet, "me prefers short plans");
  assert.equal(hit.source, "memory");
  assert.match(hit.citation, /^[0-9a-f]+$/u);
  const cited = await invoke({ tool: "memory_get", args: { path: `zkr://evidence/${hit.citation}` } });
  log(`memory_get (citation) -> ${cited.status} ${cited.text.slice(0, 300)}`);
  assert.equal(cited.json.result.details.text, "I prefer short plans.");
  const window = await invoke({ tool: "memory_get", args: { path: hit.path, from: 1, lines: 1 } });
  assert.deepEqual(window.json.result.details, { from: 1, lines: 1, path: hit.path, text: "me prefers short plans", truncated: false });

  // 2. Hostile arguments, through the real zkr.
  const injected = await invoke({ tool: "memory_search", args: { query: "--db /etc/passwd; $(id) `id` --help" } });
  assert.equal(injected.status, 200);
  assert.deepEqual(injected.json.result.details.results, []);
  const polluted = await invoke('{"tool":"memory_search","args":{"query":"plans","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}}');
  log(`__proto__ args -> ${polluted.status} ${polluted.text.slice(0, 200)}`);
  assert.equal(polluted.status, 400);
  assert.match(polluted.json.error.message, /unknown field `(__proto__|constructor)`/u);
  const badPath = await invoke({ tool: "memory_get", args: { path: "../../../../etc/passwd" } });
  assert.equal(badPath.json.result.details.error, "invalid zkr memory path");
  const badWindow = await invoke({ tool: "memory_get", args: { path: hit.path, from: 0 } });
  assert.equal(badWindow.status, 400);
  const oversized = await invoke({ tool: "memory_search", args: { query: "x".repeat(1_500_000) } });
  log(`1.5 MB query -> ${oversized.status} ${oversized.text.slice(0, 200)}`);
  assert.equal(oversized.json.result.details.error, "zkr command failed");
  assert.ok(!oversized.text.includes("xxxxxxxx"));
  await up();

  // 3. A hostile zkr: the running serve process is replaced by misbehaving ones.
  const realServe = starts().filter((s) => s.mode === "real" && s.argv.at(-1) === "openclaw-serve").at(-1);
  for (const mode of ["early-exit", "flood", "flood-stderr", "garbage", "fail"]) {
    writeFileSync(modeFile, mode);
    if (mode === "early-exit") process.kill(realServe.pid, "SIGKILL");
    // 900 KB of query: more than a pipe buffer, so a zkr that never reads makes the write EPIPE.
    const query = mode === "early-exit" ? "y".repeat(900_000) : "plans";
    const failed = await invoke({ tool: "memory_search", args: { query } });
    log(`${mode} -> ${failed.status} ${failed.text.slice(0, 160)}`);
    assert.equal(failed.status, 200);
    assert.equal(failed.json.result.details.disabled, true);
    assert.equal(failed.json.result.details.error, "zkr command failed");
    assert.ok(!/secret|xxxxxxxx|yyyyyyyy|memory\.db/u.test(failed.text), failed.text.slice(0, 300));
    const write = await invoke({ tool: "zkr_store", args: { kind: "conversation", text: "x", captured_at: 1, recorded_at: 1 } });
    assert.ok(!/secret|memory\.db/u.test(write.text), write.text.slice(0, 300));
    await up();
  }
  writeFileSync(modeFile, "real");
  const again = await invoke({ tool: "memory_search", args: { query: "plans" } });
  assert.equal(again.json.result.details.results.length, 1, "memory works again once zkr behaves");
  await up();
  log("gateway stayed up through every hostile case");

  // 4. What every zkr the plugin started could see.
  const all = starts();
  assert.ok(all.length >= 8, `zkr starts logged: ${all.length}`);
  for (const start of all) {
    const extra = Object.keys(start.env).filter((name) => !ALLOWED.includes(name) && !name.startsWith("ZKR_"));
    assert.deepEqual(extra, [], `unexpected variables in zkr's environment: ${extra}`);
    for (const secret of [...Object.values(SECRETS), token]) assert.ok(!JSON.stringify(start.env).includes(secret));
    assert.equal(start.argv.length, 3);
    assert.equal(start.argv[0], "--db");
    assert.ok(["openclaw-serve", "openclaw-tool"].includes(start.argv[2]));
  }
  // The plugin stops zkr with SIGKILL only (the stub would survive a SIGTERM and log it).
  assert.deepEqual(records().filter((record) => record.signal), []);
  log(`${all.length} zkr starts, each with only [${[...new Set(all.flatMap((s) => Object.keys(s.env)))].sort().join(", ")}]`);
  console.log("GATEWAY CHECKS PASSED");
} finally {
  stop();
}
process.exit(0);
