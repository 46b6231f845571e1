// Hostile input and a hostile zkr (node --test; Node 20+): the process stays up, every failure
// is the redacted "zkr command failed", and the child sees only the allowed environment.
// A crash of this test process (say, an unhandled EPIPE) fails the whole file.
import assert from "node:assert/strict";
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { ZKR, bridgeModule, closeAfter, makeStub, registered, runner, tempDir, zkr } from "./helpers.js";

const { ZkrBridge, ZkrMemoryManager, createTools, resolveConfig, MEMORY_TOOL_NAMES, ZKR_TOOL_NAMES } = bridgeModule;
const { ZkrClient, ZKR_COMMAND_FAILED, ENV_NAMES } = runner;
const ALL_TOOLS = [...MEMORY_TOOL_NAMES, ...ZKR_TOOL_NAMES];
const SECRETS = { OPENAI_API_KEY: "sk-secret", OPENCLAW_GATEWAY_TOKEN: "gw-secret", AWS_SECRET_ACCESS_KEY: "aws-secret" };

/** What the stub logged at `log`: a record per start (argv, env, pid) and per SIGTERM received. */
function stubRecords(log) {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8").trim().split("\n").filter(Boolean).map((line) => JSON.parse(line));
}

/** Tools whose zkr is the stub in `mode` (real zkr behind it for mode "real"); log of its starts. */
function stubTools(t, mode, { serve = true, timeoutMs = 5_000, extraEnv = {}, database = undefined } = {}) {
  const dir = tempDir(t);
  const log = join(dir, "stub.log");
  const env = { ...process.env, ...SECRETS, ...extraEnv, ZKR_STUB_MODE: mode, ZKR_STUB_LOG: log, ZKR_STUB_REAL: ZKR };
  database ??= join(dir, "memory.db");
  const client = new ZkrClient({ command: makeStub(dir), database, serve, timeoutMs, env });
  const bridge = new ZkrBridge(resolveConfig({ database }), client);
  t.after(() => bridge.close());
  const tools = Object.fromEntries(createTools(bridge, ALL_TOOLS, "main").map((tool) => [tool.name, tool]));
  const starts = () => stubRecords(log).filter((record) => "argv" in record);
  const sigterms = () => stubRecords(log).filter((record) => record.signal === "SIGTERM");
  return { tools, client, bridge, database, starts, sigterms };
}

/** Poll `check` until it returns something truthy; fail after `ms`. */
async function until(check, what, ms = 5_000) {
  for (const end = Date.now() + ms; Date.now() < end; await delay(10)) {
    const value = check();
    if (value) return value;
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** Whether process `pid` still exists (a dead child is reaped by Node right after it exits). */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The call fails with exactly the redacted message and nothing of `leak` in it. */
async function assertRedacted(tool, args, leak = "secret") {
  const outcome = await tool.execute("c", args).then(
    (result) => JSON.stringify(result),
    (error) => String(error),
  );
  assert.ok(outcome.includes(ZKR_COMMAND_FAILED), outcome.slice(0, 300));
  assert.ok(!outcome.includes(leak), outcome.slice(0, 300));
  return outcome;
}

const big = (bytes) => "x".repeat(bytes);

for (const serve of [true, false]) {
  const how = serve ? "serve" : "one-shot";

  test(`a zkr that exits before reading stdin cannot crash the process with EPIPE (${how})`, async (t) => {
    const { tools } = stubTools(t, "early-exit", { serve });
    // Far more than a pipe buffer, still under the 1 MiB request limit: the write hits EPIPE.
    await assertRedacted(tools.memory_search, { query: big(900_000) });
    assert.equal(String(await tools.zkr_store.execute("c", { text: big(900_000) }).catch((e) => e)), "Error: zkr command failed");
  });

  test(`a zkr printing 10 MB is killed at the output cap (${how})`, async (t) => {
    for (const mode of ["flood", "flood-stderr"]) {
      const { tools } = stubTools(t, mode, { serve });
      await assertRedacted(tools.memory_search, { query: "x" }, "xxxxxxxxxx");
    }
  });

  test(`garbage output, a zkr error and a hang are redacted (${how})`, async (t) => {
    for (const mode of ["garbage", "fail"]) {
      await assertRedacted(stubTools(t, mode, { serve }).tools.memory_get, { path: "zkr://claim/c-1" }, "secret-detail");
    }
  });

  test(`a zkr that hangs is killed with SIGKILL at the timeout, redacted (${how})`, async (t) => {
    // The stub survives SIGTERM (and logs it): only SIGKILL makes its pid go away.
    const { tools, starts, sigterms } = stubTools(t, "hang", { serve, timeoutMs: 1_500 });
    await assertRedacted(tools.zkr_search, { query: "x" });
    const [{ pid }] = starts();
    await until(() => !alive(pid), `the timed-out zkr (pid ${pid}) to be gone`, 3_000);
    assert.deepEqual(sigterms(), []);
    assert.equal(starts().length, 1);
  });

  test(`an abort ends the call at once and kills zkr, long before the timeout (${how})`, async (t) => {
    const { tools, bridge, starts, sigterms } = stubTools(t, "hang", { serve, timeoutMs: 30_000 });
    const manager = new ZkrMemoryManager(bridge, "main");
    /** @type {Record<string, (signal: AbortSignal) => Promise<string>>} the outcome of each kind of call */
    const calls = {
      "memory_search tool": (signal) => tools.memory_search.execute("c", { query: "x" }, signal).then((r) => r.details.error),
      "zkr_search tool": (signal) => tools.zkr_search.execute("c", { query: "x" }, signal).then(() => "answered", String),
      "manager.search": (signal) => manager.search("x", { signal }).then(() => "answered", (e) => `${e.message} (${e.reason})`),
    };
    const expected = {
      "memory_search tool": ZKR_COMMAND_FAILED,
      "zkr_search tool": `Error: ${ZKR_COMMAND_FAILED}`,
      "manager.search": `${ZKR_COMMAND_FAILED} (aborted)`,
    };
    for (const [what, run] of Object.entries(calls)) {
      const before = starts().length;
      const controller = new AbortController();
      const outcome = run(controller.signal);
      // Abort once the stub runs (about 100 ms in): its logged pid is the child to be killed.
      const { pid } = await until(() => starts()[before], `${what}: the stub to start`);
      await delay(100);
      const abortedAt = Date.now();
      controller.abort();
      // Without the abort listener the call would only end at the 30 s timeout.
      const settled = await Promise.race([outcome, delay(5_000, "still running 5 s after the abort")]);
      assert.equal(settled, expected[what], what);
      assert.ok(Date.now() - abortedAt < 1_000, `${what} settled ${Date.now() - abortedAt} ms after the abort`);
      await until(() => !alive(pid), `${what}: the aborted zkr (pid ${pid}) to be gone`, 2_000);
      // An aborted read is not retried one-shot.
      assert.equal(starts().length, before + 1, what);
    }
    assert.deepEqual(sigterms(), []);
  });

  test(`an already aborted call starts no zkr (${how})`, async (t) => {
    const { tools, bridge, client, starts } = stubTools(t, "env", { serve });
    const signal = AbortSignal.abort();
    assert.equal((await tools.memory_search.execute("c", { query: "x" }, signal)).details.error, ZKR_COMMAND_FAILED);
    await assert.rejects(tools.zkr_store.execute("c", { text: "x" }, signal), { message: ZKR_COMMAND_FAILED });
    await assert.rejects(bridge.call("memory_search", { query: "x" }, "main", signal), { reason: "aborted" });
    assert.equal(client.servePid, undefined);
    // A call after them starts the only zkr process (by then the log would show any earlier one).
    assert.deepEqual((await tools.memory_search.execute("c", { query: "x" })).details.results, []);
    assert.equal(starts().length, 1);
  });

  test(`the database folder is created once per client, private (${how})`, async (t) => {
    const folder = join(tempDir(t), "state", "zkr");
    const { tools, starts } = stubTools(t, "env", { serve, database: join(folder, "memory.db") });
    await tools.memory_search.execute("c", { query: "x" });
    assert.equal(statSync(folder).mode & 0o777, 0o700);
    // Gone after the first call: a client that made it on every call would make it again.
    rmSync(folder, { recursive: true });
    for (let i = 0; i < 3; i += 1) assert.deepEqual((await tools.memory_search.execute("c", { query: "x" })).details.results, []);
    assert.equal(existsSync(folder), false);
    assert.equal(starts().length, serve ? 1 : 4);
  });

  test(`the child environment holds only the allowed variables, argv only constants (${how})`, async (t) => {
    const { tools, database } = stubTools(t, "env", { serve, extraEnv: { LD_PRELOAD: "/evil.so", NODE_OPTIONS: "--inspect" } });
    const args = { query: "--db /etc/passwd; $(id) `id` | rm -rf / --help" };
    const { details } = await tools.memory_search.execute("c", args);
    const allowed = (name) => ENV_NAMES.includes(name) || name.startsWith("ZKR_");
    assert.deepEqual(Object.keys(details.env).filter((name) => !allowed(name)), []);
    for (const secret of Object.values(SECRETS)) assert.ok(!JSON.stringify(details.env).includes(secret));
    assert.equal(details.env.PATH, process.env.PATH);
    assert.deepEqual(details.argv, ["--db", database, serve ? "openclaw-serve" : "openclaw-tool"]);
    // The model's data arrives on stdin only, as JSON, untouched.
    assert.deepEqual(details.request, { tenant_id: "openclaw", person_id: "main", tool: "memory_search", args });
  });
}

test("a write is never repeated after the serve process failed; a read falls back to one-shot", async (t) => {
  const write = stubTools(t, "early-exit");
  await assert.rejects(write.tools.zkr_store.execute("c", { text: "x" }), { message: ZKR_COMMAND_FAILED });
  assert.deepEqual(write.starts().map((s) => s.argv.at(-1)), ["openclaw-serve"]);
  const read = stubTools(t, "early-exit");
  await assertRedacted(read.tools.memory_search, { query: "x" });
  assert.deepEqual(read.starts().map((s) => s.argv.at(-1)), ["openclaw-serve", "openclaw-tool"]);
  // Two failed serve starts in a row pause serve: the third read goes one-shot directly.
  await assertRedacted(read.tools.memory_search, { query: "x" });
  await assertRedacted(read.tools.memory_search, { query: "x" });
  assert.deepEqual(read.starts().map((s) => s.argv.at(-1)), [
    "openclaw-serve", "openclaw-tool", "openclaw-serve", "openclaw-tool", "openclaw-tool",
  ]);
});

test("a killed serve process is replaced and no call is lost", async (t) => {
  // The first call starts a real serve process (Python, click, the plugins): on a loaded machine
  // that alone can pass the 5 s default. This test is about replacement, not speed.
  const { tools, client, starts } = stubTools(t, "real", { timeoutMs: 30_000 });
  await tools.zkr_store.execute("c", { kind: "conversation", text: "The launch is on Friday", captured_at: 1, recorded_at: 1 });
  const first = client.servePid;
  assert.ok(first);
  process.kill(first, "SIGKILL");
  const found = await tools.memory_search.execute("c", { query: "launch" });
  assert.equal(found.details.results.length, 1);
  await tools.memory_search.execute("c", { query: "launch" });
  assert.ok(client.servePid && client.servePid !== first);
  assert.ok(starts().filter((s) => s.argv.at(-1) === "openclaw-serve").length >= 2);
});

test("argument injection, prototype-pollution keys and oversized arguments against the real zkr", async (t) => {
  const db = join(tempDir(t), "memory.db");
  zkr(db, "remember", { tenant_id: "openclaw", person_id: "main", kind: "conversation", text: "plain note", captured_at: 1, recorded_at: 1 });
  const { tools, runtime } = registered({ command: ZKR, database: db });
  closeAfter(t, runtime);
  // Injection attempts are just text to search for.
  for (const query of ["--help", "--db /etc/passwd search", "'; DROP TABLE sources; --", "note\" OR \"x", "$(id)"]) {
    const { details } = await tools.memory_search.execute("c", { query });
    assert.ok(Array.isArray(details.results), query);
  }
  await assert.rejects(tools.memory_search.execute("c", { query: ["--db", "/etc/passwd"] }), { message: "query must be a non-empty string" });
  assert.equal((await tools.memory_get.execute("c", { path: "zkr://claim/x --help" })).details.error, "invalid zkr memory path");
  // Own "__proto__" / "constructor" keys (what JSON.parse makes of hostile input) are refused.
  for (const raw of ['{"query":"note","__proto__":{"polluted":true}}', '{"query":"note","constructor":{"prototype":{"polluted":true}}}']) {
    const args = JSON.parse(raw);
    await assert.rejects(tools.memory_search.execute("c", args), { message: /^unknown field `(__proto__|constructor)`$/ });
    await assert.rejects(tools.zkr_store.execute("c", { ...args, kind: "conversation", text: "x", captured_at: 1, recorded_at: 1 }), {
      message: /^unknown field `(query|__proto__|constructor)`$/,
    });
  }
  assert.equal(/** @type {any} */ ({}).polluted, undefined);
  assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, "polluted"), false);
  // Oversized arguments never reach zkr, and the serve process survives them.
  const oversized = await tools.memory_search.execute("c", { query: big(2_000_000) });
  assert.equal(oversized.details.error, ZKR_COMMAND_FAILED);
  assert.ok(!JSON.stringify(oversized).includes("xxxxxxxxxx"));
  const oversizedRead = await tools.memory_get.execute("c", { path: big(2_000_000) });
  assert.deepEqual(oversizedRead.details, { path: "", text: "", disabled: true, error: ZKR_COMMAND_FAILED });
  assert.equal((await tools.memory_search.execute("c", { query: "note" })).details.results.length, 1);
  // Arguments that are not an object at all.
  for (const args of [null, "query", 42, ["query"]]) {
    await assert.rejects(tools.memory_search.execute("c", args), { message: "arguments must be a JSON object" });
  }
});

test("only the allow-listed operations are ever started", async (t) => {
  const dir = tempDir(t);
  const log = join(dir, "stub.log");
  const stub = makeStub(dir);
  const env = { PATH: process.env.PATH ?? "", ZKR_STUB_MODE: "env", ZKR_STUB_LOG: log };
  const db = join(dir, "memory.db");
  const refused = { name: "TypeError", message: "unsupported zkr operation" };
  const outside = ["embed", "export", "search", "remember", "--help", "serve", "openclaw-tool --help", "", "__proto__"];
  // runOnce runs openclaw-tool only (openclaw-serve belongs to the serve session).
  for (const operation of [...outside, "openclaw-serve"]) {
    await assert.rejects(runner.runOnce(stub, db, { query: "x" }, { env, timeoutMs: 5_000, operation }), refused, operation);
  }
  for (const operation of outside) assert.throws(() => runner.spawnZkr(stub, db, operation, env), refused, operation);
  assert.deepEqual(stubRecords(log), []);
  // The same call with the allowed operation does start the stub (so the log above is meaningful).
  const answer = await runner.runOnce(stub, db, { query: "x" }, { env, timeoutMs: 5_000, operation: "openclaw-tool" });
  assert.deepEqual(answer.details.argv, ["--db", db, "openclaw-tool"]);
  assert.deepEqual(stubRecords(log).map((record) => record.argv), [["--db", db, "openclaw-tool"]]);
});

test("the serve process's stderr is capped per call, not over its lifetime", async (t) => {
  // 300 kB of warnings with each answer: six calls print 1.8 MB, each well under the 1 MiB cap.
  const { tools, starts } = stubTools(t, "chatty");
  const search = () => tools.zkr_search.execute("c", { query: "x" }).then((result) => result.details);
  for (let i = 0; i < 6; i += 1) assert.deepEqual(await search(), { results: [] }, `call ${i + 1}`);
  // Six calls in flight at once: the window restarts at every answer, not only when idle.
  assert.deepEqual(await Promise.all(Array.from({ length: 6 }, search)), Array(6).fill({ results: [] }));
  assert.equal(starts().length, 1);
});
