// zkr as OpenClaw's memory slot (openclaw 2026.7.1-2).
//
// The plugin owns the exclusive memory slot (manifest kind "memory", selected with
// plugins.slots.memory: "zkr"), registers OpenClaw's memory capability (prompt line + runtime
// with one MemorySearchManager per agent) and the tools memory_search, memory_get and the explicit
// zkr_* tools, and, through OpenClaw's lifecycle hooks, recalls before each agent turn and
// captures after it (auto-memory.js). It stays thin on purpose: every tool call goes, unvalidated, to `zkr openclaw-tool`
// (Python, package zkr_openclaw_bridge), which checks the arguments and maps zkr's cited items
// onto OpenClaw's shapes in one place. Tool names, descriptions and parameter schemas come from
// tools.json, which the Python side reads too.
//
// No runtime import of openclaw: the default export is a plain plugin definition, and the SDK
// types below are JSDoc-only (checked by `tsc --checkJs` against the real declarations).

import { readFileSync } from "node:fs";
import { registerAutoMemory, resolveAutoMemoryConfig } from "./auto-memory.js";
import { ZKR_COMMAND_FAILED, ZkrClient, ZkrCommandError } from "./runner.js";

/**
 * @typedef {import("openclaw/plugin-sdk/plugin-entry").OpenClawPluginApi} OpenClawPluginApi
 * @typedef {import("openclaw/plugin-sdk/plugin-entry").OpenClawPluginDefinition} OpenClawPluginDefinition
 * @typedef {import("openclaw/plugin-sdk/plugin-entry").OpenClawPluginToolContext} OpenClawPluginToolContext
 * @typedef {import("openclaw/plugin-sdk/plugin-entry").AnyAgentTool} AnyAgentTool
 * @typedef {import("openclaw/plugin-sdk/memory-core").MemoryPluginCapability} MemoryPluginCapability
 * @typedef {import("openclaw/plugin-sdk/memory-core").MemoryPluginRuntime} MemoryPluginRuntime
 * @typedef {import("openclaw/plugin-sdk/memory-core").MemoryPromptSectionBuilder} MemoryPromptSectionBuilder
 * @typedef {import("openclaw/plugin-sdk/memory-host-files").MemorySearchManager} MemorySearchManager
 * @typedef {import("openclaw/plugin-sdk/memory-host-files").MemorySearchResult} MemorySearchResult
 * @typedef {Awaited<ReturnType<MemorySearchManager["readFile"]>>} MemoryReadResult
 */

/**
 * @typedef {object} ToolDefinition
 * @property {string} label
 * @property {string} description
 * @property {Record<string, unknown>} parameters plain JSON Schema (the loader supplies no typebox)
 * @property {string} [operation] the zkr operation behind an explicit zkr_* tool
 * @property {boolean} [readOnly] the tool only reads
 */

/** @type {Record<string, ToolDefinition>} */
export const TOOLS = JSON.parse(readFileSync(new URL("./tools.json", import.meta.url), "utf8"));
export const MEMORY_TOOL_NAMES = Object.freeze(["memory_search", "memory_get"]);
export const ZKR_TOOL_NAMES = Object.freeze(Object.keys(TOOLS).filter((name) => !MEMORY_TOOL_NAMES.includes(name)));
/** Tools that only read (tools.json says so): safe to repeat one-shot when the serve process fails. */
const READ_ONLY_TOOLS = new Set(Object.keys(TOOLS).filter((name) => TOOLS[name].readOnly === true));
export const PROMPT_LINE = "Search zkr memory before answering questions about prior user context.";
export const DEFAULT_TENANT = "openclaw";
/** OpenClaw's DEFAULT_AGENT_ID: what the host passes when no agent is named. */
export const DEFAULT_AGENT = "main";

/** A call the model can fix (bad arguments, unknown record): its message is zkr's and safe. */
export class ZkrToolError extends Error {
  // The name OpenClaw recognises as the caller's mistake (`/tools/invoke` answers 400 with it).
  name = "ToolInputError";
}

/**
 * @typedef {object} BridgeConfig
 * @property {string} [command]
 * @property {string} [database]
 * @property {string} tenant
 * @property {string} [person] fixed person; default: the active agent id
 * @property {number} [timeoutMs]
 * @property {boolean} [serve]
 */

/**
 * plugins.entries.zkr.config (already checked by the loader against configSchema; checked again
 * here because tests and other hosts may call register() directly).
 * @param {Record<string, unknown> | undefined} raw
 * @returns {BridgeConfig}
 */
export function resolveConfig(raw) {
  const config = raw ?? {};
  /** @param {string} key */
  const text = (key) => {
    const value = config[key];
    return typeof value === "string" && value.length > 0 ? value : undefined;
  };
  const timeoutMs = config.timeoutMs;
  return {
    command: text("command"),
    database: text("database"),
    tenant: text("tenant") ?? DEFAULT_TENANT,
    person: text("person"),
    timeoutMs: typeof timeoutMs === "number" && Number.isInteger(timeoutMs) && timeoutMs > 0 ? timeoutMs : undefined,
    serve: config.serve === false ? false : undefined,
  };
}

/** The same envelope as the SDK's jsonResult (openclaw/plugin-sdk/tool-results). */
/** @param {unknown} payload */
function jsonResult(payload) {
  return { content: [{ type: /** @type {const} */ ("text"), text: JSON.stringify(payload, null, 2) }], details: payload };
}

/** Sends tool calls for one configuration to zkr. */
export class ZkrBridge {
  #config;
  #client;

  /** @param {BridgeConfig} config @param {ZkrClient} [client] */
  constructor(config, client) {
    this.#config = config;
    const { command, database, timeoutMs, serve } = config;
    this.#client = client ?? new ZkrClient({ command, database, timeoutMs, serve });
  }

  get database() {
    return this.#client.database;
  }

  get serving() {
    return this.#client.serving;
  }

  /**
   * Run `tool` with the model's `args` for the agent's scope; returns the result details.
   * @param {string} tool
   * @param {unknown} args passed through as they came: zkr checks them
   * @param {string | undefined} agentId
   * @param {AbortSignal} [signal]
   * @returns {Promise<any>}
   * @throws {ZkrToolError} for arguments or records the model got wrong
   * @throws {ZkrCommandError} for anything else (message: ZKR_COMMAND_FAILED)
   */
  async call(tool, args, agentId, signal) {
    const call = {
      tenant_id: this.#config.tenant,
      person_id: this.#config.person ?? (agentId || DEFAULT_AGENT),
      tool,
      args: args === undefined ? {} : args,
    };
    const answer = /** @type {Record<string, unknown> | null} */ (
      await this.#client.call(call, { signal, readOnly: READ_ONLY_TOOLS.has(tool) })
    );
    if (answer !== null && typeof answer === "object") {
      if (typeof answer.tool_error === "string") throw new ZkrToolError(answer.tool_error);
      if (Object.hasOwn(answer, "details")) return answer.details;
    }
    throw new ZkrCommandError("protocol");
  }

  close() {
    this.#client.close();
  }
}

/** A short, harmless echo of the path the model asked for (never a huge or non-string value). */
/** @param {unknown} args */
function requestedPath(args) {
  const path = args !== null && typeof args === "object" ? /** @type {Record<string, unknown>} */ (args).path : undefined;
  return typeof path === "string" && path.length <= 1024 ? path : "";
}

/** @implements {MemorySearchManager} */
export class ZkrMemoryManager {
  #bridge;
  #agentId;

  /** @param {ZkrBridge} bridge @param {string} agentId */
  constructor(bridge, agentId) {
    this.#bridge = bridge;
    this.#agentId = agentId;
  }

  /** @type {MemorySearchManager["search"]} */
  async search(query, opts = {}) {
    opts.signal?.throwIfAborted();
    const args = { query, maxResults: opts.maxResults, minScore: opts.minScore };
    const details = await this.#bridge.call("memory_search", args, this.#agentId, opts.signal);
    return /** @type {MemorySearchResult[]} */ (details.results);
  }

  /** @type {MemorySearchManager["readFile"]} */
  async readFile({ relPath, from, lines }) {
    const details = await this.#bridge.call("memory_get", { path: relPath, from, lines }, this.#agentId);
    if (details.disabled) throw new ZkrToolError(String(details.error));
    return /** @type {MemoryReadResult} */ (details);
  }

  /** @type {MemorySearchManager["status"]} */
  status() {
    return {
      backend: "builtin",
      provider: "zkr",
      dbPath: this.#bridge.database,
      sources: ["memory"],
      fts: { enabled: true, available: true },
      vector: { enabled: false, available: false },
      custom: { bridge: "zkr openclaw-tool", serving: this.#bridge.serving },
    };
  }

  async probeEmbeddingAvailability() {
    return { ok: false, checked: true, error: "zkr does not use OpenClaw's embedding providers" };
  }

  async probeVectorAvailability() {
    return false;
  }
}

/** The memory runtime: one cached manager per agent, all sharing one bridge (one zkr process). */
export class ZkrMemoryHost {
  /** @type {Map<string, ZkrMemoryManager>} */
  #managers = new Map();
  #bridge;

  /** @param {ZkrBridge} bridge */
  constructor(bridge) {
    this.#bridge = bridge;
  }

  /** @param {string | undefined} agentId */
  manager(agentId) {
    const id = agentId || DEFAULT_AGENT;
    let manager = this.#managers.get(id);
    if (!manager) {
      manager = new ZkrMemoryManager(this.#bridge, id);
      this.#managers.set(id, manager);
    }
    return manager;
  }

  /** @returns {MemoryPluginRuntime} */
  runtime() {
    return {
      getMemorySearchManager: async ({ agentId }) => ({ manager: this.manager(agentId) }),
      resolveMemoryBackendConfig: () => ({ backend: "builtin" }),
      closeMemorySearchManager: async ({ agentId }) => {
        this.#managers.delete(agentId || DEFAULT_AGENT); // the same key manager() used
      },
      closeAllMemorySearchManagers: async () => {
        this.#managers.clear();
        this.#bridge.close();
      },
    };
  }
}

/** @type {MemoryPromptSectionBuilder} */
export const promptBuilder = ({ availableTools }) => (availableTools.has("memory_search") ? [PROMPT_LINE] : []);

/**
 * What a memory tool returns when zkr could not answer: memory-core's "unavailable" shapes, so the
 * model is told memory is unavailable (the tool descriptions say so) and learns nothing else.
 * @param {string} tool @param {unknown} args
 */
function unavailable(tool, args) {
  if (tool === "memory_search") {
    return {
      results: [],
      disabled: true,
      unavailable: true,
      error: ZKR_COMMAND_FAILED,
      warning: "zkr memory is unavailable.",
      action: "Tell the user that memory search is unavailable right now.",
    };
  }
  return { path: requestedPath(args), text: "", disabled: true, error: ZKR_COMMAND_FAILED };
}

/**
 * @param {ZkrBridge} bridge
 * @param {readonly string[]} names
 * @param {string | undefined} agentId
 * @returns {AnyAgentTool[]}
 */
export function createTools(bridge, names, agentId) {
  return names.map((name) => {
    const definition = TOOLS[name];
    return {
      name,
      label: definition.label,
      description: definition.description,
      parameters: /** @type {any} */ (definition.parameters),
      /** @type {AnyAgentTool["execute"]} */
      async execute(_toolCallId, params, signal) {
        try {
          return jsonResult(await bridge.call(name, params, agentId, signal));
        } catch (error) {
          // Memory tools report an unavailable memory in-band, like memory-core; the explicit
          // tools throw. Either way a failure says only ZKR_COMMAND_FAILED.
          if (error instanceof ZkrToolError || !MEMORY_TOOL_NAMES.includes(name)) {
            throw error instanceof ZkrToolError ? error : new Error(ZKR_COMMAND_FAILED);
          }
          return jsonResult(unavailable(name, params));
        }
      },
    };
  });
}

/** @type {OpenClawPluginDefinition & { register: (api: OpenClawPluginApi) => void }} */
const plugin = {
  id: "zkr",
  name: "zkr Memory",
  description: "OpenClaw memory slot backed by zkr: cited, temporal memory in a local database.",
  register(api) {
    const bridge = new ZkrBridge(resolveConfig(api.pluginConfig));
    const host = new ZkrMemoryHost(bridge);
    api.registerMemoryCapability({ promptBuilder, runtime: host.runtime() });
    api.registerTool((ctx) => createTools(bridge, MEMORY_TOOL_NAMES, ctx.agentId), { names: [...MEMORY_TOOL_NAMES] });
    api.registerTool((ctx) => createTools(bridge, ZKR_TOOL_NAMES, ctx.agentId), { names: [...ZKR_TOOL_NAMES] });
    // Recall before each agent turn and capture after it (auto-memory.js), as configured.
    registerAutoMemory(api, bridge, resolveAutoMemoryConfig(api.pluginConfig));
  },
};

export default plugin;
