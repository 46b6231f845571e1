// Shared helpers of the node --test suites: the plugin under test, the real zkr, a fake api
// that enforces the two loader gates the real loader enforces, temp databases.
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const here = (/** @type {string} */ p) => fileURLToPath(new URL(p, import.meta.url));

/** The shipped plugin folder (package data of zkr_openclaw_bridge). */
export const PLUGIN_DIR =
  process.env.ZKR_OPENCLAW_PLUGIN_DIR ?? here("../../../zkr-openclaw-bridge/src/zkr_openclaw_bridge/plugin/");
export const manifest = JSON.parse(readFileSync(join(PLUGIN_DIR, "openclaw.plugin.json"), "utf8"));
export const plugin = (await import(join(PLUGIN_DIR, "index.js"))).default;
export const bridgeModule = await import(join(PLUGIN_DIR, "index.js"));
export const runner = await import(join(PLUGIN_DIR, "runner.js"));

/** The workspace's real zkr (check.sh exports ZKR_COMMAND; else the one on PATH). */
export const ZKR = process.env.ZKR_COMMAND ?? execFileSync("sh", ["-c", "command -v zkr"], { encoding: "utf8" }).trim();

/**
 * The stub zkr (stubs/zkr-stub.py) as an executable in `dir`, run by the interpreter of the real
 * zkr's shebang: an `env python3` shebang could go through a shim (pyenv) that adds variables
 * of its own to the environment the test inspects.
 */
export function makeStub(dir, name = "zkr-stub") {
  const [shebang] = readFileSync(ZKR, "utf8").split("\n", 1);
  const python = shebang.startsWith("#!/") ? shebang : "#!/usr/bin/env python3";
  const body = readFileSync(here("./stubs/zkr-stub.py"), "utf8").replace(/^#!.*\n/u, "");
  const stub = join(dir, name);
  writeFileSync(stub, `${python}\n${body}`);
  chmodSync(stub, 0o755);
  return stub;
}

/** A temp folder removed after the suite. */
export function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), "zkr-openclaw-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Run the real zkr once (to build test data the way a user would). */
export function zkr(db, command, request) {
  return JSON.parse(execFileSync(ZKR, ["--db", db, command], { input: JSON.stringify(request), encoding: "utf8" }));
}

/**
 * A recording api with the real loader's gates: registerMemoryCapability needs manifest kind
 * "memory" ("only memory plugins can register a memory capability"), and every registered tool
 * name must be in contracts.tools ("plugin must declare contracts.tools for: ...").
 */
export function fakeApi(pluginConfig) {
  const rec = { capability: undefined, factories: [], errors: [], hooks: [], warnings: [] };
  const declared = new Set(manifest.contracts?.tools ?? []);
  const api = {
    id: manifest.id,
    pluginConfig,
    registerMemoryCapability(capability) {
      if (manifest.kind !== "memory") throw new Error("only memory plugins can register a memory capability");
      rec.capability = capability;
    },
    registerTool(tool, opts) {
      const names = [...(opts?.names ?? []), ...(opts?.name ? [opts.name] : [])];
      if (typeof tool !== "function") names.push(tool.name);
      const undeclared = names.filter((n) => !declared.has(n));
      if (undeclared.length) rec.errors.push(`plugin must declare contracts.tools for: ${undeclared.join(", ")}`);
      rec.factories.push({ factory: typeof tool === "function" ? tool : () => tool, names });
    },
    // api.on(hookName, handler, opts?): the typed lifecycle hooks (docs/plugins/hooks.md).
    on(hookName, handler, opts) {
      rec.hooks.push({ hookName, handler, opts });
    },
    logger: { info() {}, debug() {}, error: (line) => rec.warnings.push(line), warn: (line) => rec.warnings.push(line) },
  };
  return { api, rec };
}

/** Register the plugin with `config` and return its tools for agent `agentId`, by name. */
export function registered(config, agentId = "main") {
  const { api, rec } = fakeApi(config);
  plugin.register(api);
  const tools = rec.factories.flatMap(({ factory }) => [factory({ agentId })].flat().filter(Boolean));
  const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
  return { rec, tools: byName, runtime: rec.capability.runtime };
}

/** Close the serve processes a test started (runtime.closeAllMemorySearchManagers). */
export function closeAfter(t, runtime) {
  t.after(() => runtime.closeAllMemorySearchManagers());
}
