// Auto-recall and auto-capture (auto-memory.js) through the hooks register() adds, driven with
// OpenClaw's documented hook payloads (hook-payloads.js) against the REAL zkr (node --test; Node 20+).
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { AGENT_CONTEXT, AGENT_END_1, AGENT_END_2, BEFORE_PROMPT_BUILD, SESSION_KEY } from "./hook-payloads.js";
import { PLUGIN_DIR, ZKR, fakeApi, makeStub, manifest, plugin, tempDir, zkr } from "./helpers.js";

const auto = await import(join(PLUGIN_DIR, "auto-memory.js"));
const SCOPE = { tenant_id: "openclaw", person_id: "main" };

/** Register the plugin with `config`; its hook handlers by name, its warnings, a closer. */
function hooked(t, config) {
  const { api, rec } = fakeApi(config);
  plugin.register(api);
  t.after(() => rec.capability.runtime.closeAllMemorySearchManagers());
  const hooks = Object.fromEntries(rec.hooks.map((hook) => [hook.hookName, hook]));
  return { hooks, rec };
}

/** A database holding "I prefer short plans." (with its claim) for agent main. */
function plansDb(t) {
  const db = join(tempDir(t), "memory.db");
  const stored = zkr(db, "remember", {
    ...SCOPE, kind: "conversation", text: "I prefer short plans.", captured_at: 10, recorded_at: 10,
    claim: { subject: "me", predicate: "prefers", value: "short plans", kind: "preference", valid_from: 10 },
  });
  return { db, stored };
}

/** What auto-capture stored: zkr's own listing, by the key prefix the plugin writes. */
function captured(db) {
  return zkr(db, "captures", { ...SCOPE, key_prefix: auto.KEY_PREFIX, limit: 100 });
}

test("both hooks are registered by default, each can be turned off, and the manifest documents them", (t) => {
  assert.deepEqual(Object.keys(hooked(t, { command: ZKR }).hooks).sort(), ["agent_end", "before_prompt_build"]);
  assert.deepEqual(Object.keys(hooked(t, { command: ZKR, autoRecall: false }).hooks), ["agent_end"]);
  assert.deepEqual(Object.keys(hooked(t, { command: ZKR, autoCapture: false }).hooks), ["before_prompt_build"]);
  assert.deepEqual(hooked(t, { command: ZKR, autoRecall: false, autoCapture: false }).hooks, {});
  const properties = manifest.configSchema.properties;
  const d = auto.AUTO_MEMORY_DEFAULTS;
  assert.deepEqual(
    ["autoRecall", "autoCapture", "captureAssistant", "recallLimit", "recallMaxChars", "recallTimeoutMs"].map((key) => properties[key].default),
    [d.recall, d.capture, d.captureAssistant, d.recallLimit, d.recallMaxChars, d.recallTimeoutMs],
  );
  // The runner's budget for recall is a little over the plugin's own timeout.
  assert.equal(hooked(t, { command: ZKR, recallTimeoutMs: 700 }).hooks.before_prompt_build.opts.timeoutMs, 1700);
});

test("before_prompt_build: the prompt's cited memories go in front of it (prependContext)", async (t) => {
  const { db, stored } = plansDb(t);
  const { hooks, rec } = hooked(t, { command: ZKR, database: db });
  const result = await hooks.before_prompt_build.handler(BEFORE_PROMPT_BUILD, AGENT_CONTEXT);
  assert.deepEqual(result, { prependContext: `[zkr cited memory]\n- me prefers short plans [evidence: ${stored.evidence_id}]` });
  assert.deepEqual(rec.warnings, []);
  // Nothing to add: no result at all (the prompt goes to the model unchanged).
  assert.equal(await hooks.before_prompt_build.handler({ prompt: "quantum chromodynamics", messages: [] }, AGENT_CONTEXT), undefined);
  assert.equal(await hooks.before_prompt_build.handler({ prompt: "   ", messages: [] }, AGENT_CONTEXT), undefined);
  // A long prompt is searched by its first 2,000 characters, never by half a character.
  const long = `${"plans ".repeat(333)}x😀 and more`;
  assert.equal(long.slice(0, auto.PROMPT_QUERY_CHARS).at(-1), "\uD83D");
  assert.match((await hooks.before_prompt_build.handler({ prompt: long, messages: [] }, AGENT_CONTEXT)).prependContext, /short plans/u);
  assert.deepEqual(rec.warnings, []);
  // Another agent is another person: agent "other" has no memory of main's plans.
  assert.equal(await hooks.before_prompt_build.handler(BEFORE_PROMPT_BUILD, { ...AGENT_CONTEXT, agentId: "other" }), undefined);
});

test("auto-recall is bounded: recallLimit memories, recallMaxChars characters, 500 per excerpt", async (t) => {
  const db = join(tempDir(t), "memory.db");
  for (let i = 0; i < 8; i++) {
    zkr(db, "remember", { ...SCOPE, kind: "conversation", text: `Plan ${i}: ${"walk the dog ".repeat(60)}`, captured_at: 10 + i, recorded_at: 10 + i });
  }
  const limited = hooked(t, { command: ZKR, database: db, recallLimit: 3 }).hooks.before_prompt_build;
  const three = (await limited.handler({ prompt: "dog plans", messages: [] }, AGENT_CONTEXT)).prependContext.split("\n");
  assert.equal(three.length, 1 + 3);
  for (const line of three.slice(1)) assert.ok(line.length <= auto.EXCERPT_CHARS + 80 && /…\s\[evidence: [0-9a-f]+\]$/u.test(line), line);
  const small = hooked(t, { command: ZKR, database: db, recallLimit: 8, recallMaxChars: 1200 }).hooks.before_prompt_build;
  const block = (await small.handler({ prompt: "dog plans", messages: [] }, AGENT_CONTEXT)).prependContext;
  assert.ok(block.length <= 1200 && block.split("\n").length === 3, block.length);
});

test("agent_end: each user and assistant message is remembered once, even when the hook fires twice", async (t) => {
  const { db } = plansDb(t);
  const { hooks, rec } = hooked(t, { command: ZKR, database: db });
  await hooks.agent_end.handler(AGENT_END_1, AGENT_CONTEXT);
  await hooks.agent_end.handler(AGENT_END_1, AGENT_CONTEXT); // the same hook, again
  const first = captured(db);
  assert.deepEqual(first.map((c) => c.text).sort(), [
    "Assistant: You like short plans. Noted: you live in Lisbon now.",
    "User: Which plans do I like? Remember that I moved to Lisbon.",
  ]);
  // Keyed by session and the answer's timestamp (the user's own timestamp is not stable).
  for (const key of [`openclaw:${SESSION_KEY}:assistant:1796194612514`, `openclaw:${SESSION_KEY}:user:1796194612514:0`]) {
    assert.equal(zkr(db, "captures", { ...SCOPE, key_prefix: key }).length, 1, key);
  }
  // captured_at is the message's own time (seconds).
  assert.deepEqual(first.map((c) => c.captured_at).sort(), [1796194612, 1796194612]);
  // The next turn offers the first turn again (its user message now with another timestamp, as the
  // real gateway does), plus a tool round: only the new turn's words are added.
  await hooks.agent_end.handler(AGENT_END_2, AGENT_CONTEXT);
  const second = captured(db);
  assert.deepEqual(second.map((c) => c.text).sort(), [
    "Assistant: You like short plans. Noted: you live in Lisbon now.",
    "Assistant: You live in Lisbon.",
    "User: Where do I live?",
    "User: Which plans do I like? Remember that I moved to Lisbon.",
  ]);
  assert.deepEqual(rec.warnings, []);
  // The captured turn is recalled on the next prompt.
  const recalled = await hooks.before_prompt_build.handler({ prompt: "Lisbon", messages: [] }, AGENT_CONTEXT);
  assert.match(recalled.prependContext, /User: Which plans do I like\? Remember that I moved to Lisbon\./u);
});

test("two gateways (two plugin instances, one-shot zkr processes) firing at once still store each message once", async (t) => {
  const { db } = plansDb(t);
  const a = hooked(t, { command: ZKR, database: db, serve: false }).hooks.agent_end;
  const b = hooked(t, { command: ZKR, database: db, serve: true }).hooks.agent_end;
  await Promise.all([a.handler(AGENT_END_2, AGENT_CONTEXT), b.handler(AGENT_END_2, AGENT_CONTEXT), a.handler(AGENT_END_1, AGENT_CONTEXT)]);
  assert.equal(captured(db).length, 4);
});

test("captureAssistant: false keeps only the user's messages; no session or a run OpenClaw started: no capture", async (t) => {
  const { db } = plansDb(t);
  const { hooks } = hooked(t, { command: ZKR, database: db, captureAssistant: false });
  await hooks.agent_end.handler(AGENT_END_2, AGENT_CONTEXT);
  assert.deepEqual(captured(db).map((c) => c.text).sort(), ["User: Where do I live?", "User: Which plans do I like? Remember that I moved to Lisbon."]);
  const other = hooked(t, { command: ZKR, database: db, person: "nobody" }).hooks.agent_end;
  await other.handler(AGENT_END_1, { agentId: "main" }); // no sessionKey, no sessionId: no stable key
  for (const trigger of ["cron", "heartbeat", "memory"]) await other.handler(AGENT_END_1, { ...AGENT_CONTEXT, trigger });
  assert.deepEqual(zkr(db, "captures", { tenant_id: "openclaw", person_id: "nobody", limit: 10 }), []);
});

test("a forgotten message is not captured again when the hook offers it once more", async (t) => {
  const { db } = plansDb(t);
  const { hooks, rec } = hooked(t, { command: ZKR, database: db });
  await hooks.agent_end.handler(AGENT_END_1, AGENT_CONTEXT);
  const user = captured(db).find((c) => c.text.startsWith("User:"));
  zkr(db, "forget", { ...SCOPE, source_id: user.source_id, erased_at: 1796194800 });
  await hooks.agent_end.handler(AGENT_END_2, AGENT_CONTEXT);
  const contents = captured(db).map((c) => c.text);
  assert.equal(contents.length, 3);
  assert.ok(!contents.some((text) => text.includes("Which plans")), contents);
  assert.deepEqual(rec.warnings, []);
});

test("a failing, hanging or missing zkr never fails the turn: no result, one redacted warning", async (t) => {
  const dir = tempDir(t);
  const stub = makeStub(dir);
  for (const [mode, config] of [["fail", {}], ["garbage", {}], ["hang", { recallTimeoutMs: 300 }]]) {
    process.env.ZKR_STUB_MODE = mode;
    t.after(() => delete process.env.ZKR_STUB_MODE);
    const { hooks, rec } = hooked(t, { command: stub, database: join(dir, "m.db"), timeoutMs: 2000, ...config });
    const started = Date.now();
    assert.equal(await hooks.before_prompt_build.handler(BEFORE_PROMPT_BUILD, AGENT_CONTEXT), undefined);
    if (mode === "hang") assert.ok(Date.now() - started < 1900, "recallTimeoutMs, not timeoutMs, bounds recall");
    assert.equal(await hooks.agent_end.handler(AGENT_END_1, AGENT_CONTEXT), undefined);
    assert.equal(rec.warnings.length, 2, `${mode}: ${rec.warnings}`);
    assert.match(rec.warnings[0], /^zkr: auto-recall skipped for this turn: zkr command failed \(/u);
    assert.match(rec.warnings[1], /^zkr: auto-capture left this turn for the next one: zkr command failed \(/u);
    assert.ok(!rec.warnings.join("\n").includes("secret"), rec.warnings.join("\n"));
  }
  const missing = hooked(t, { command: join(dir, "no-such-zkr"), database: join(dir, "m.db") });
  assert.equal(await missing.hooks.before_prompt_build.handler(BEFORE_PROMPT_BUILD, AGENT_CONTEXT), undefined);
  assert.equal(await missing.hooks.agent_end.handler(AGENT_END_1, AGENT_CONTEXT), undefined);
  assert.equal(missing.rec.warnings.length, 2);
});

test("capturableMessages: documented content shapes, carriers, failed answers, identities", () => {
  const messages = [
    ...AGENT_END_2.messages,
    { role: "assistant", content: [{ type: "text", text: "partial" }], stopReason: "error", timestamp: 5 },
    { role: "user", content: [{ type: "image", data: "x", mimeType: "image/png" }], timestamp: 6 },
    { role: "user", content: "no timestamp" },
    { role: "user", content: "[zkr cited memory]\n- old [evidence: e]\n\nmy own words", timestamp: 7 },
    null,
    { role: "assistant", content: "untimed answer" },
    { role: "assistant", content: [{ type: "text", text: "ok" }], stopReason: "stop", timestamp: 8000 },
    { role: "user", content: "not answered yet", timestamp: 9000 },
  ];
  assert.deepEqual(auto.capturableMessages(messages, { assistant: true }).map((m) => `${m.id} ${m.text}`), [
    "user:1796194612514:0 Which plans do I like? Remember that I moved to Lisbon.",
    "assistant:1796194612514 You like short plans. Noted: you live in Lisbon now.",
    "user:1796194700100:0 Where do I live?",
    "assistant:1796194700300 You live in Lisbon.",
    "user:8000:0 no timestamp",
    "user:8000:1 my own words",
    "assistant:8000 ok",
  ]);
  assert.deepEqual(auto.capturableMessages({ not: "a list" }, { assistant: true }), []);
});
