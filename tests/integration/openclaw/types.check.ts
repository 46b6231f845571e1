// Type-level contract checks against the REAL openclaw@2026.7.1-2 declarations (tsc --noEmit).
// Each @ts-expect-error line must stay an error: if the SDK types decayed to `any`, or the plugin's
// exports stopped matching them, tsc fails.
import type { OpenClawPluginApi, OpenClawPluginDefinition } from "openclaw/plugin-sdk/plugin-entry";
import type { MemoryPluginCapability, MemoryPluginRuntime } from "openclaw/plugin-sdk/memory-core";
import type { MemorySearchManager, MemorySearchResult } from "openclaw/plugin-sdk/memory-host-files";
import { registerAutoMemory, resolveAutoMemoryConfig } from "../plugin/auto-memory.js";
import plugin, { ZkrBridge, ZkrMemoryHost, ZkrMemoryManager, createTools, promptBuilder, resolveConfig } from "../plugin/index.js";

// The default export is what the loader consumes.
const definition: OpenClawPluginDefinition = plugin;
const register: (api: OpenClawPluginApi) => void = plugin.register;

// Our manager, runtime and capability satisfy the host's interfaces.
const bridge = new ZkrBridge(resolveConfig({}));
const manager: MemorySearchManager = new ZkrMemoryManager(bridge, "main");
const runtime: MemoryPluginRuntime = new ZkrMemoryHost(bridge).runtime();
const capability: MemoryPluginCapability = { runtime, promptBuilder };
const tools = createTools(bridge, ["memory_search"], "main");
const executed: Promise<{ details: unknown }> = tools[0].execute("call", { query: "x" });

// Negative checks: these MUST be type errors.
// @ts-expect-error snippet is required on MemorySearchResult
const bad1: MemorySearchResult = { path: "p", startLine: 1, endLine: 1, score: 1, source: "memory" };
// @ts-expect-error source must be "memory" | "sessions"
const bad2: MemorySearchResult = { path: "p", startLine: 1, endLine: 1, score: 1, snippet: "s", source: "zkr" };
// @ts-expect-error backend is "builtin" | "qmd"
const bad3: ReturnType<MemorySearchManager["status"]> = { backend: "sqlite", provider: "zkr" };
declare const api: OpenClawPluginApi;
// @ts-expect-error registerMemoryCapability takes a capability object, not a string
api.registerMemoryCapability("zkr");
// @ts-expect-error registerTool options use names: string[]
api.registerTool(() => null, { names: "memory_search" });
// @ts-expect-error the plugin's manager needs a bridge, not options
new ZkrMemoryManager({ command: "zkr" }, "main");

// The lifecycle hooks (auto-memory.js) are typed by the SDK's hook map, not `any`.
registerAutoMemory(api, bridge, resolveAutoMemoryConfig({}));
api.on("before_prompt_build", (event) => ({ prependContext: event.prompt }));
api.on("agent_end", (event) => void event.messages.length);
// @ts-expect-error there is no hook of that name
api.on("after_turn", () => undefined);
// @ts-expect-error before_prompt_build's result has no `prompt` field
api.on("before_prompt_build", () => ({ prompt: "x" }));
// @ts-expect-error agent_end's event has no `prompt`
api.on("agent_end", (event) => void event.prompt);

void [definition, register, manager, capability, executed, bad1, bad2, bad3];
