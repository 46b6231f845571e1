// The plugin with an empty config (node --test; Node 20+): the documented defaults apply.
// This file changes process.env (HOME, PATH) for its one test, so it has a process of its own.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { ZKR, fakeApi, makeStub, plugin, tempDir } from "./helpers.js";

/** Set `vars` in process.env for the test, restoring the old values after it. */
function setEnv(t, vars) {
  const old = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]));
  Object.assign(process.env, vars);
  t.after(() => {
    for (const [name, value] of Object.entries(old)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
}

test("with config {}: zkr from PATH, ~/.zkr/memory.db, tenant openclaw, agent main", async (t) => {
  const dir = tempDir(t);
  const bin = join(dir, "bin");
  const home = join(dir, "home");
  mkdirSync(bin);
  mkdirSync(home);
  const log = join(dir, "stub.log");
  // `zkr` on PATH is the stub, reporting what it was handed (mode "env").
  makeStub(bin, "zkr");
  setEnv(t, { HOME: home, PATH: `${bin}:${process.env.PATH}`, ZKR_STUB_MODE: "env", ZKR_STUB_LOG: log, ZKR_STUB_REAL: ZKR });
  assert.equal(homedir(), home);

  const { api, rec } = fakeApi({});
  plugin.register(api);
  const { runtime } = rec.capability;
  t.after(() => runtime.closeAllMemorySearchManagers());
  // Tool factories called the way the host does when no agent is active: no agentId.
  const tools = Object.fromEntries(rec.factories.flatMap(({ factory }) => factory({})).map((tool) => [tool.name, tool]));
  const { manager } = await runtime.getMemorySearchManager({ cfg: {} });

  const database = join(home, ".zkr", "memory.db");
  assert.equal(manager.status().dbPath, database);
  for (const name of ["memory_search", "zkr_search"]) {
    const { details } = await tools[name].execute("c", { query: "x" });
    assert.deepEqual(details.request, { tenant_id: "openclaw", person_id: "main", tool: name, args: { query: "x" } });
    assert.deepEqual(details.argv, ["--db", database, "openclaw-serve"]);
  }
  const starts = readFileSync(log, "utf8").trim().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(starts.map((start) => start.command), [join(bin, "zkr")]);
  assert.equal(statSync(join(home, ".zkr")).mode & 0o777, 0o700);

  // The manager of "no agent" is main's, for getting and for closing alike.
  assert.equal((await runtime.getMemorySearchManager({ cfg: {}, agentId: "main" })).manager, manager);
  assert.equal((await runtime.getMemorySearchManager({ cfg: {}, agentId: "" })).manager, manager);
  await runtime.closeMemorySearchManager({ cfg: {} });
  const fresh = (await runtime.getMemorySearchManager({ cfg: {} })).manager;
  assert.notEqual(fresh, manager);
  await runtime.closeMemorySearchManager({ cfg: {}, agentId: "main" });
  assert.notEqual((await runtime.getMemorySearchManager({ cfg: {} })).manager, fresh);
});
