// The plugin against the REAL zkr from the workspace (node --test; Node 20+).
// Covers contract §9.8 (OpenClaw plugin checklist) with a real database instead of a fake CLI.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { ZKR, bridgeModule, closeAfter, manifest, plugin, registered, runner, tempDir, zkr } from "./helpers.js";

const { ZKR_COMMAND_FAILED } = runner;

/** A database holding the contract's example memory for agent "main", tenant "openclaw". */
function plansDb(t) {
  const db = join(tempDir(t), "memory.db");
  const stored = zkr(db, "remember", {
    tenant_id: "openclaw", person_id: "main", kind: "conversation", text: "I prefer short plans.",
    captured_at: 10, recorded_at: 10,
    claim: { subject: "me", predicate: "prefers", value: "short plans", kind: "preference", valid_from: 10 },
  });
  return { db, stored };
}

test("keeps the manifest memory ownership and tool contracts aligned (§9.8.12)", () => {
  const { rec, tools } = registered({ command: ZKR });
  assert.equal(manifest.id, "zkr");
  assert.equal(plugin.id, manifest.id);
  assert.equal(manifest.kind, "memory");
  assert.deepEqual(rec.errors, []);
  assert.deepEqual(Object.keys(tools).sort(), [...manifest.contracts.tools].sort());
});

test("registers the exclusive memory capability (§9.8.9)", async () => {
  const { rec, tools } = registered({ command: ZKR });
  const { capability } = rec;
  assert.ok(tools.memory_search && tools.memory_get);
  assert.deepEqual(capability.promptBuilder({ availableTools: new Set(["memory_search"]) }), [bridgeModule.PROMPT_LINE]);
  assert.deepEqual(capability.promptBuilder({ availableTools: new Set() }), []);
  assert.deepEqual(capability.runtime.resolveMemoryBackendConfig({ cfg: {}, agentId: "main" }), { backend: "builtin" });
  const { manager } = await capability.runtime.getMemorySearchManager({ cfg: {}, agentId: "main" });
  assert.equal(manager, (await capability.runtime.getMemorySearchManager({ cfg: {}, agentId: "main" })).manager);
  assert.deepEqual(manager.status().backend, "builtin");
  assert.equal(await manager.probeVectorAvailability(), false);
  assert.deepEqual(await manager.probeEmbeddingAvailability(), {
    ok: false, checked: true, error: "zkr does not use OpenClaw's embedding providers",
  });
});

test("memory_search and zkr_search rank for recall: a stemmed word finds its memory (issue 13)", async (t) => {
  const db = join(tempDir(t), "memory.db");
  const scope = { tenant_id: "openclaw", person_id: "main" };
  const stored = zkr(db, "remember", {
    ...scope, kind: "conversation", text: "My sister works as a nurse.", captured_at: 10, recorded_at: 10,
  });
  const { tools, runtime } = registered({ command: ZKR, database: db, serve: true });
  closeAfter(t, runtime);
  const found = await tools.memory_search.execute("c1", { query: "nurses" });
  assert.deepEqual(found.details.results.map((result) => result.citation), [stored.evidence_id]);
  const direct = await tools.zkr_search.execute("c2", { query: "nurses" });
  assert.deepEqual(direct.details.items.map((item) => item.evidence_ids[0]), [stored.evidence_id]);
  // The contract ranking does not stem: the hit above is the recall ranking's, zkr's default.
  assert.deepEqual(zkr(db, "search", { ...scope, query: "nurses", ranking: "contract" }).items, []);
  assert.deepEqual(zkr(db, "search", { ...scope, query: "nurses" }).items.map((item) => item.evidence_ids[0]), [stored.evidence_id]);
});

for (const serve of [true, false]) {
  test(`memory_search and memory_get return cited memory from a real zkr (${serve ? "serve" : "one-shot"}) (§9.8.8)`, async (t) => {
    const { db, stored } = plansDb(t);
    const { tools, runtime } = registered({ command: ZKR, database: db, serve });
    closeAfter(t, runtime);
    const found = await tools.memory_search.execute("c1", { query: "plans", maxResults: 5 });
    assert.deepEqual(JSON.parse(found.content[0].text), found.details);
    assert.deepEqual(found.details.results, [{
      path: `zkr://claim/${stored.claim_id}`, startLine: 1, endLine: 1, score: 1, snippet: "me prefers short plans",
      source: "memory", citation: stored.evidence_id, corpus: "memory",
    }]);
    const read = await tools.memory_get.execute("c2", { path: `zkr://evidence/${stored.evidence_id}` });
    assert.deepEqual(read.details, { text: "I prefer short plans.", path: `zkr://evidence/${stored.evidence_id}`, from: 1, lines: 1, truncated: false });
    const { manager } = await runtime.getMemorySearchManager({ cfg: {}, agentId: "main" });
    const hits = await manager.search("plans", { maxResults: 3 });
    assert.equal(hits[0].citation, stored.evidence_id);
    const file = await manager.readFile({ relPath: hits[0].path });
    assert.equal(file.text, hits[0].snippet);
    assert.equal(manager.status().dbPath, db);
  });
}

test("scopes every tool to the configured tenant and the active agent (§9.8.5, §9.8.10)", async (t) => {
  const db = join(tempDir(t), "memory.db");
  const alice = registered({ command: ZKR, database: db }, "alice");
  const bob = registered({ command: ZKR, database: db }, "bob");
  closeAfter(t, alice.runtime);
  closeAfter(t, bob.runtime);
  const stored = await alice.tools.zkr_store.execute("c", {
    kind: "conversation", text: "Alice's launch is on Friday", captured_at: 10, recorded_at: 10,
  });
  assert.ok(stored.details.source_id);
  const mine = zkr(db, "search", { tenant_id: "openclaw", person_id: "alice", query: "launch" });
  assert.equal(mine.items.length, 1);
  assert.deepEqual((await bob.tools.memory_search.execute("c", { query: "launch" })).details.results, []);
  // A tenant_id or person_id in the arguments is refused, never used.
  await assert.rejects(
    alice.tools.zkr_search.execute("c", { query: "launch", person_id: "bob" }),
    { message: "unknown field `person_id`" },
  );
  const fixed = registered({ command: ZKR, database: db, tenant: "openclaw", person: "alice" }, "bob");
  closeAfter(t, fixed.runtime);
  assert.equal((await fixed.tools.memory_search.execute("c", { query: "launch" })).details.results.length, 1);
  for (const name of Object.keys(fixed.tools)) {
    assert.equal("tenant_id" in fixed.tools[name].parameters.properties, false, name);
  }
});

test("offers the bitemporal fields in write tools and fills a left-out one with now (§9.8.6)", async (t) => {
  const db = join(tempDir(t), "m.db");
  const { tools, runtime } = registered({ command: ZKR, database: db });
  closeAfter(t, runtime);
  const properties = (name) => tools[name].parameters.properties;
  assert.ok(["captured_at", "recorded_at"].every((f) => f in properties("zkr_store")));
  assert.ok(["valid_at", "recorded_at"].every((f) => f in properties("zkr_correct")));
  assert.ok("as_of" in properties("zkr_search"));
  // The same projection as every host (zkr.tools): "now" fills what the model leaves out.
  const before = Math.floor(Date.now() / 1000);
  const stored = (await tools.zkr_store.execute("c", { text: "x", recorded_at: 1 })).details;
  const page = zkr(db, "export", { tenant_id: "openclaw", person_id: "main", export_format: 1 });
  const source = page.commits[0].records[0].record.source;
  assert.equal(source.id, stored.source_id);
  assert.equal(source.recorded_at, 1);
  assert.ok(source.captured_at >= before);
  await assert.rejects(tools.zkr_store.execute("c", { recorded_at: 1 }), { message: "missing field `text`" });
});

test("the explicit tools correct, reflect and delete through zkr", async (t) => {
  const { tools, runtime } = registered({ command: ZKR, database: join(tempDir(t), "m.db") });
  closeAfter(t, runtime);
  const stored = (await tools.zkr_store.execute("c", {
    kind: "conversation", text: "Sam works at Acme", captured_at: 10, recorded_at: 10,
    claim: { subject: "Sam", predicate: "employer", value: "Acme", kind: "fact", valid_from: 10 },
  })).details;
  const corrected = (await tools.zkr_correct.execute("c", {
    claim_id: stored.claim_id, text: "Sam moved to Beta", value: "Beta", valid_at: 20, recorded_at: 20,
  })).details;
  assert.equal(corrected.superseded_claim_id, stored.claim_id);
  const asOf = await tools.zkr_search.execute("c", { query: "Sam", as_of: { valid_at: 15, recorded_at: 15 } });
  assert.equal(asOf.details.items[0].excerpt, "Sam employer Acme");
  const review = await tools.zkr_reflect.execute("c", {
    day: "2026-01-02", summary: "Sam changed jobs", evidence_ids: [corrected.evidence_id], recorded_at: 21,
  });
  assert.ok(review.details.id);
  const deleted = await tools.zkr_delete.execute("c", { source_id: stored.source_id, deleted_at: 30 });
  assert.equal(deleted.details.source_id, stored.source_id);
});

test("rejects invalid runtime read windows and paths (§9.8.7)", async (t) => {
  const { db, stored } = plansDb(t);
  const { tools, runtime } = registered({ command: ZKR, database: db });
  closeAfter(t, runtime);
  const { manager } = await runtime.getMemorySearchManager({ cfg: {}, agentId: "main" });
  const path = `zkr://claim/${stored.claim_id}`;
  await assert.rejects(manager.readFile({ relPath: path, from: 0 }), { message: "from and lines must be positive integers" });
  await assert.rejects(tools.memory_get.execute("c", { path, lines: 1.5 }), { message: "from and lines must be positive integers" });
  assert.deepEqual((await tools.memory_get.execute("c", { path: "/etc/passwd" })).details, {
    path: "/etc/passwd", text: "", disabled: true, error: "invalid zkr memory path",
  });
  await assert.rejects(manager.readFile({ relPath: "zkr://claim/../../etc/passwd" }), { message: "invalid zkr memory path" });
  await assert.rejects(tools.memory_search.execute("c", {}), { message: "query must be a non-empty string" });
});

test("redacts local CLI failures (§9.8.1) and does not expose them through memory tools (§9.8.11)", async (t) => {
  const missing = join(tempDir(t), "no-such-zkr");
  const { tools, runtime } = registered({ command: missing });
  closeAfter(t, runtime);
  const error = await tools.zkr_search.execute("c", { query: "x" }).catch((e) => e);
  assert.equal(String(error), "Error: zkr command failed");
  const search = await tools.memory_search.execute("c", { query: "x" });
  assert.equal(search.details.disabled, true);
  assert.equal(search.details.error, ZKR_COMMAND_FAILED);
  assert.ok(!search.content[0].text.includes("no-such-zkr"));
  const { manager } = await runtime.getMemorySearchManager({ cfg: {}, agentId: "main" });
  await assert.rejects(manager.search("x"), { message: ZKR_COMMAND_FAILED });
  const relative = registered({ command: "./zkr" });
  await assert.rejects(relative.tools.zkr_search.execute("c", { query: "x" }), { message: ZKR_COMMAND_FAILED });
});

test("a bare command name is resolved on PATH to an absolute path", () => {
  const dir = ZKR.slice(0, ZKR.lastIndexOf("/"));
  assert.equal(runner.resolveCommand("zkr", { PATH: `relative/bin:${dir}` }), ZKR);
  assert.throws(() => runner.resolveCommand("zkr", { PATH: "relative/bin" }), { message: ZKR_COMMAND_FAILED });
});
