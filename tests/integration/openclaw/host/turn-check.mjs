// The REAL gateway on Node 24 running real agent turns with the zkr plugin in the memory slot:
// auto-recall (before_prompt_build) puts cited memories in front of the prompt the model gets, and
// auto-capture (agent_end) remembers each turn's messages once, although every later turn offers
// them again. A failing zkr costs the turn its memory, never the turn.
//
// There is no LLM here: the agent's model is a custom OpenAI-compatible provider (the documented
// `models.providers` shape, docs/gateway/local-models.md) served by this script on 127.0.0.1. It
// answers every call with a fixed text and records what it was sent, which is exactly what the
// model would have read. Turns enter through the gateway's OpenAI-compatible endpoint
// (/v1/chat/completions, docs/gateway/openai-http-api.md), which runs "a normal Gateway agent run";
// the same OpenAI `user` keeps the turns in one session.
//
// Usage (check.sh): node turn-check.mjs, with in the environment
//   OPENCLAW_ENTRY (openclaw.mjs), CHECK_WORK (work dir: plugin/, state/zkr.db), CHECK_PORT,
//   ZKR_STUB (the stub zkr), ZKR_STUB_REAL (the real zkr), ZKR_STUB_MODE_FILE, ZKR_STUB_LOG, and the
//   OPENCLAW_* isolation variables.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { openSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";

const env = process.env;
const work = /** @type {string} */ (env.CHECK_WORK);
const port = Number(env.CHECK_PORT);
const realZkr = /** @type {string} */ (env.ZKR_STUB_REAL);
const modeFile = /** @type {string} */ (env.ZKR_STUB_MODE_FILE);
const database = join(work, "state", "zkr.db");
const token = `turns-${process.pid}`;
const ANSWER = "Noted: short plans, and you live in Lisbon now.";
const started = Date.now();
const log = (/** @type {string} */ line) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${line}`);

// --- the model: records each request, answers ANSWER (streamed or not, as asked) --------------
/** @type {any[]} */
const modelRequests = [];
const model = http.createServer((request, response) => {
  let body = "";
  request.on("data", (chunk) => { body += chunk; });
  request.on("end", () => {
    if (!request.url?.endsWith("/chat/completions")) { response.writeHead(404).end("{}"); return; }
    const parsed = JSON.parse(body);
    modelRequests.push(parsed);
    const base = { id: `c${modelRequests.length}`, created: 1, model: "echo" };
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    if (!parsed.stream) {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
        ...base, object: "chat.completion", usage,
        choices: [{ index: 0, message: { role: "assistant", content: ANSWER }, finish_reason: "stop" }],
      }));
      return;
    }
    response.writeHead(200, { "content-type": "text/event-stream" });
    const send = (/** @type {unknown} */ data) => response.write(`data: ${JSON.stringify(data)}\n\n`);
    send({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta: { role: "assistant", content: ANSWER }, finish_reason: null }] });
    send({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
    send({ ...base, object: "chat.completion.chunk", choices: [], usage });
    response.end("data: [DONE]\n\n");
  });
});
await new Promise((resolve) => model.listen(0, "127.0.0.1", () => resolve(undefined)));
const modelPort = /** @type {import("node:net").AddressInfo} */ (model.address()).port;

// --- the gateway's configuration: the plugin, its hooks allowed, the model, the HTTP endpoint ---
const configPath = join(work, "openclaw-turns.json");
writeFileSync(configPath, JSON.stringify({
  logging: { file: join(work, "openclaw-turns.log") },
  gateway: { http: { endpoints: { chatCompletions: { enabled: true } } } },
  agents: { defaults: { model: { primary: "fake/echo" } } },
  models: {
    mode: "merge",
    providers: {
      fake: {
        baseUrl: `http://127.0.0.1:${modelPort}/v1`, apiKey: "fake-local", api: "openai-completions",
        models: [{ id: "echo", name: "Echo", reasoning: false, input: ["text"], contextWindow: 32000, maxTokens: 1000,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }],
      },
    },
  },
  plugins: {
    load: { paths: [join(work, "plugin")] },
    slots: { memory: "zkr" },
    entries: {
      zkr: {
        enabled: true,
        // agent_end is a conversation hook: OpenClaw runs it for a non-bundled plugin only with this.
        hooks: { allowConversationAccess: true },
        config: { command: env.ZKR_STUB, database, timeoutMs: 10000 },
      },
    },
  },
}, null, 2));

const out = openSync(join(work, "gateway-turns.out"), "w");
const gateway = spawn(process.execPath, [/** @type {string} */ (env.OPENCLAW_ENTRY), "gateway", "run", "--allow-unconfigured",
  "--port", String(port), "--bind", "loopback", "--auth", "token"], {
  env: { ...env, OPENCLAW_CONFIG_PATH: configPath, OPENCLAW_GATEWAY_TOKEN: token, OPENCLAW_SKIP_CHANNELS: "1", OPENCLAW_SKIP_CRON: "1",
    OPENCLAW_SKIP_BROWSER_CONTROL_SERVER: "1", OPENCLAW_SKIP_CANVAS_HOST: "1", OPENCLAW_SKIP_GMAIL_WATCHER: "1",
    OPENCLAW_SKIP_STARTUP_MODEL_PREWARM: "1", OPENCLAW_DISABLE_BONJOUR: "1" },
  stdio: ["ignore", out, out],
});
let exited = false;
gateway.on("exit", () => { exited = true; });
const stop = () => { if (!exited) gateway.kill("SIGKILL"); model.close(); };
process.on("exit", stop);

async function up() {
  assert.equal(exited, false, "the gateway process exited");
  const response = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(10_000) });
  assert.ok(response.status < 500, `gateway answers (${response.status})`);
}

/** One agent turn of the conversation "zkr-turns"; returns what the model was sent and answered. */
async function turn(/** @type {string} */ text) {
  const before = modelRequests.length;
  const response = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "openclaw", user: "zkr-turns", messages: [{ role: "user", content: text }] }),
    signal: AbortSignal.timeout(120_000),
  });
  const body = await response.text();
  assert.equal(response.status, 200, body.slice(0, 500));
  const answer = JSON.parse(body).choices[0].message.content;
  assert.equal(modelRequests.length, before + 1, "one model call per turn");
  const sent = modelRequests.at(-1).messages.filter((/** @type {any} */ m) => m.role === "user").at(-1);
  const prompt = typeof sent.content === "string" ? sent.content : sent.content.map((/** @type {any} */ p) => p.text ?? "").join("");
  return { prompt, answer };
}

/** The captures auto-capture wrote, read with the real zkr. */
function captures(/** @type {string | null} */ prefix = "openclaw:") {
  const request = JSON.stringify({ tenant_id: "openclaw", person_id: "main", key_prefix: prefix, limit: 100 });
  return JSON.parse(execFileSync(realZkr, ["--db", database, "captures"], { input: request, encoding: "utf8" }));
}

/** agent_end runs after the reply (fire-and-forget): wait until `count` captures are there. */
async function capturesReach(/** @type {number} */ count) {
  for (let i = 0; i < 120; i++) {
    const found = captures();
    if (found.length >= count) return found;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  assert.fail(`auto-capture did not reach ${count} captures: ${JSON.stringify(captures())}`);
}

/** The stub's start records (argv, mode, pid of every zkr the plugin spawned). */
function starts() {
  return readFileSync(/** @type {string} */ (env.ZKR_STUB_LOG), "utf8").trim().split("\n").filter(Boolean)
    .map((line) => JSON.parse(line)).filter((record) => "argv" in record);
}

try {
  writeFileSync(modeFile, "real");
  for (let i = 0; ; i++) {
    assert.ok(i < 240 && !exited, `gateway did not start:\n${readFileSync(join(work, "gateway-turns.out"), "utf8").slice(-3000)}`);
    try { await up(); break; } catch { await new Promise((r) => setTimeout(r, 500)); }
  }
  log("gateway is up");
  const evidence = captures(null).length; // check.sh stored "I prefer short plans." (no key)
  assert.equal(captures().length, 0);

  // 1. Recall: the model reads the cited memory in front of the user's words.
  const first = await turn("Which plans do I like? Remember that I moved to Lisbon.");
  log(`turn 1: model was sent ${JSON.stringify(first.prompt.slice(0, 300))}`);
  assert.equal(first.answer, ANSWER);
  assert.match(first.prompt, /\[zkr cited memory\]\n- me prefers short plans \[evidence: [0-9a-f]+\]\n\nWhich plans do I like\?/u);

  // 2. Capture: the user's message and the answer, once each.
  const afterFirst = await capturesReach(2);
  assert.deepEqual(afterFirst.map((/** @type {any} */ c) => c.text).sort(), [`Assistant: ${ANSWER}`, "User: Which plans do I like? Remember that I moved to Lisbon."]);
  log(`turn 1 captured: ${JSON.stringify(afterFirst.map((/** @type {any} */ c) => c.text))}`);

  // 3. The next turn recalls what the first one said; its agent_end offers turn 1's messages again.
  const second = await turn("Tell me about Lisbon again.");
  log(`turn 2: model was sent ${JSON.stringify(second.prompt.slice(0, 400))}`);
  assert.match(second.prompt, /\[zkr cited memory\]\n(- .*\n)*- User: Which plans do I like\? Remember that I moved to Lisbon\. \[evidence: [0-9a-f]+\]\n/u);
  assert.ok(second.prompt.endsWith("Tell me about Lisbon again."), second.prompt);
  const afterSecond = await capturesReach(4);
  await new Promise((resolve) => setTimeout(resolve, 2000)); // anything still on its way would show
  const texts = captures().map((/** @type {any} */ c) => c.text).sort();
  assert.deepEqual(texts, [`Assistant: ${ANSWER}`, `Assistant: ${ANSWER}`, "User: Tell me about Lisbon again.", "User: Which plans do I like? Remember that I moved to Lisbon."]);
  assert.equal(afterSecond.length, 4);
  log(`turn 2: ${texts.length} captures in all, each message once although turn 1 was offered twice`);

  // 4. zkr fails: the turn still gets its answer, without memory; nothing is stored.
  writeFileSync(modeFile, "fail");
  for (const start of starts().filter((s) => s.mode === "real" && s.argv.at(-1) === "openclaw-serve")) {
    try { process.kill(start.pid, "SIGKILL"); } catch { /* already gone */ }
  }
  const third = await turn("Which plans do I like now?");
  log(`turn 3 (zkr failing): model was sent ${JSON.stringify(third.prompt.slice(0, 200))}`);
  assert.equal(third.answer, ANSWER);
  assert.ok(!third.prompt.includes("[zkr cited memory]"), third.prompt);
  await new Promise((resolve) => setTimeout(resolve, 3000));
  writeFileSync(modeFile, "real");
  assert.equal(captures().length, 4);
  assert.equal(captures(null).length, evidence + 4);
  await up();
  console.log("TURN CHECKS PASSED");
} finally {
  stop();
}
process.exit(0);
