// The REAL host path on Node 20: memory slot -> OpenClaw's plugin loader (discovery, manifest,
// slot decision, config-schema validation, kind gate, register()) -> our MemoryPluginRuntime ->
// our MemorySearchManager -> the real zkr.
// Usage: node host-probe.mjs EXPECT   (EXPECT: "cited" or "invalid-config"); config from
// $OPENCLAW_CONFIG_PATH. Exits non-zero when the expectation fails.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { closeActiveMemorySearchManagers, getActiveMemorySearchManager } from "openclaw/plugin-sdk/memory-host-search";

const expect = process.argv[2];
const cfg = JSON.parse(readFileSync(/** @type {string} */ (process.env.OPENCLAW_CONFIG_PATH), "utf8"));
const started = Date.now();
const { manager, error } = await getActiveMemorySearchManager({ cfg, agentId: "main" });
console.log(`manager: ${manager?.constructor?.name ?? null}, error: ${error ?? null} (${Date.now() - started} ms)`);

if (expect === "invalid-config") {
  // The loader refused the plugin's config (configSchema has additionalProperties: false).
  assert.equal(manager, null);
  assert.ok(error);
  process.exit(0);
}

assert.equal(manager?.constructor?.name, "ZkrMemoryManager");
const hits = await manager.search("plans", { maxResults: 3 });
console.log("search:", JSON.stringify(hits));
assert.equal(hits.length, 1);
assert.match(hits[0].path, /^zkr:\/\/claim\/[0-9a-f]+$/u);
assert.equal(hits[0].snippet, "me prefers short plans");
assert.match(hits[0].citation ?? "", /^[0-9a-f]+$/u);
const read = await manager.readFile({ relPath: `zkr://evidence/${hits[0].citation}` });
console.log("readFile:", JSON.stringify(read));
assert.equal(read.text, "I prefer short plans.");
console.log("status:", JSON.stringify(manager.status()));
assert.equal(manager.status().backend, "builtin");
await closeActiveMemorySearchManagers(cfg);
process.exit(0);
