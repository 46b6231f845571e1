// Automatic memory: recall before each agent turn, capture after it (openclaw 2026.7.1-2).
//
// Two of OpenClaw's typed plugin hooks (node_modules/openclaw/docs/plugins/hooks.md; payload types
// in dist/hook-types-*.d.ts, PluginHookBeforePromptBuildEvent / PluginHookAgentEndEvent /
// PluginHookAgentContext):
//
// - before_prompt_build (event {prompt, messages}, ctx {agentId, sessionKey, sessionId, ...}):
//   zkr searches the user's prompt and the cited memories it finds are returned as
//   `prependContext`. OpenClaw puts that text in front of the prompt for the model only; the
//   transcript keeps the user's words as typed.
// - agent_end (event {runId?, messages, success, error?, durationMs?}, same ctx): `messages` is the
//   session's transcript. Its newest user (and, if configured, assistant) messages are remembered
//   with an ingestion key that names the session and the message, so a hook that fires twice, or
//   the next turn offering the same messages again, stores each message once. agent_end is a
//   "conversation hook": OpenClaw runs it for a non-bundled plugin only with
//   plugins.entries.zkr.hooks.allowConversationAccess=true (else the loader drops it and says so).
//
// Both go through ZkrBridge.call, the path the tools take (one warm zkr process, the configured
// scope, the output caps, the redaction). Neither ever fails the host's turn: any failure is one
// warning line in OpenClaw's log and the turn goes on without memory.

import { ZkrCommandError } from "./runner.js";

/**
 * @typedef {import("openclaw/plugin-sdk/plugin-entry").OpenClawPluginApi} OpenClawPluginApi
 * @typedef {import("./index.js").ZkrBridge} ZkrBridge
 */

/** The header of the cited block: the same words zkr-hermes and zkr-agent-hooks inject. */
export const RECALL_HEADER = "[zkr cited memory]";
/** One memory's excerpt is cut to this many characters. */
export const EXCERPT_CHARS = 500;
/** A prompt longer than this is searched by its beginning (a pasted file is not a question). */
export const PROMPT_QUERY_CHARS = 2000;
/** agent_end re-offers at most this many of the newest messages (their keys make repeats no-ops). */
export const CAPTURE_WINDOW = 20;
/** A message larger than this is not captured (zkr refuses requests over 1 MiB). */
export const MAX_MESSAGE_BYTES = 512 * 1024;
/** The prefix of every key auto-capture writes (`zkr captures` can list them by it). */
export const KEY_PREFIX = "openclaw:";
/**
 * Runs OpenClaw starts by itself (ctx.trigger; EmbeddedRunTrigger in dist/types-*.d.ts is
 * "cron" | "heartbeat" | "manual" | "memory" | "overflow" | "user"): their prompt is a job's or
 * the host's text, not the person's words, so they are not captured.
 */
export const UNCAPTURED_TRIGGERS = Object.freeze(["cron", "heartbeat", "memory"]);

/**
 * @typedef {object} AutoMemoryConfig
 * @property {boolean} recall before_prompt_build adds cited memories for the prompt
 * @property {boolean} capture agent_end remembers the turn's messages
 * @property {boolean} captureAssistant capture the assistant's answers too, not only the user's words
 * @property {number} recallLimit at most this many memories per turn
 * @property {number} recallMaxChars the cited block stays under this many characters
 * @property {number} recallTimeoutMs a recall slower than this is dropped for the turn
 */

export const AUTO_MEMORY_DEFAULTS = Object.freeze({
  recall: true,
  capture: true,
  captureAssistant: true,
  recallLimit: 5,
  recallMaxChars: 4000,
  recallTimeoutMs: 5000,
});

/**
 * The auto-memory part of plugins.entries.zkr.config (schema-checked by the loader; checked again
 * here for callers that skip the loader).
 * @param {Record<string, unknown> | undefined} raw
 * @returns {AutoMemoryConfig}
 */
export function resolveAutoMemoryConfig(raw) {
  const config = raw ?? {};
  /** @param {string} key @param {boolean} fallback */
  const flag = (key, fallback) => (typeof config[key] === "boolean" ? /** @type {boolean} */ (config[key]) : fallback);
  /** @param {string} key @param {number} fallback */
  const count = (key, fallback) => {
    const value = config[key];
    return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : fallback;
  };
  const d = AUTO_MEMORY_DEFAULTS;
  return {
    recall: flag("autoRecall", d.recall),
    capture: flag("autoCapture", d.capture),
    captureAssistant: flag("captureAssistant", d.captureAssistant),
    recallLimit: count("recallLimit", d.recallLimit),
    recallMaxChars: count("recallMaxChars", d.recallMaxChars),
    recallTimeoutMs: count("recallTimeoutMs", d.recallTimeoutMs),
  };
}

/**
 * The cited block for memory_search results: the header, then `- excerpt [evidence: ids]` per
 * memory while the block stays within `maxChars`; "" for no memory.
 * @param {ReadonlyArray<{ snippet?: unknown; citation?: unknown }>} results
 * @param {number} maxChars
 */
export function renderRecall(results, maxChars) {
  const lines = [RECALL_HEADER];
  let size = RECALL_HEADER.length;
  for (const result of results) {
    if (typeof result.snippet !== "string") continue;
    let text = result.snippet.split(/\s+/u).filter(Boolean).join(" ");
    if (!text) continue;
    if (text.length > EXCERPT_CHARS) text = `${text.slice(0, EXCERPT_CHARS - 1)}…`;
    const line = `- ${text} [evidence: ${typeof result.citation === "string" ? result.citation : ""}]`;
    if (size + 1 + line.length > maxChars) break;
    lines.push(line);
    size += 1 + line.length;
  }
  return lines.length > 1 ? lines.join("\n") : "";
}

/**
 * The `prependContext` for a prompt, or undefined when there is nothing to add.
 * @param {ZkrBridge} bridge
 * @param {AutoMemoryConfig} config
 * @param {unknown} prompt
 * @param {string | undefined} agentId
 * @param {AbortSignal} [signal]
 */
export async function recallFor(bridge, config, prompt, agentId, signal) {
  // A cut that splits a surrogate pair would leave half a character, which zkr refuses.
  const query = typeof prompt === "string" ? prompt.trim().slice(0, PROMPT_QUERY_CHARS).replace(/[\uD800-\uDBFF]$/u, "") : "";
  if (!query) return undefined;
  const details = await bridge.call("memory_search", { query, maxResults: config.recallLimit }, agentId, signal);
  const block = renderRecall(Array.isArray(details?.results) ? details.results : [], config.recallMaxChars);
  return block ? block : undefined;
}

/**
 * @typedef {object} CapturableMessage
 * @property {"user" | "assistant"} role
 * @property {string} text
 * @property {string} id the message's identity in its session (see capturableMessages)
 * @property {number} timestamp milliseconds: the time zkr records for it
 */

/** @param {unknown} content */
function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((block) => block !== null && typeof block === "object" && block.type === "text" && typeof block.text === "string")
    .map((block) => /** @type {string} */ (block.text))
    .join("\n");
}

/** Our own recall block, should a host ever keep it in the user's text: never captured back. */
/** @param {string} text */
function withoutRecallBlock(text) {
  if (!text.startsWith(RECALL_HEADER)) return text;
  const end = text.indexOf("\n\n");
  return end === -1 ? "" : text.slice(end + 2);
}

/** @param {unknown} value */
const isTime = (value) => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

/**
 * The transcript messages worth remembering, oldest first, each with an identity that stays the
 * same whenever OpenClaw offers the message again: user messages (OpenClaw's transient
 * runtime-context carriers excluded) and, with `assistant`, the assistant's text answers (tool
 * calls, thinking and failed answers are not the conversation).
 *
 * An assistant message is identified by OpenClaw's timestamp on it, which the transcript keeps.
 * A user message is not: the live message of a turn carries the time its run started, the same
 * message read back from the transcript the time it arrived (seen with the real gateway). So a
 * user message is identified by the assistant message that answers it (the first one after it)
 * and its place among the user messages that answer covers (`user:<answer timestamp>:<n>`), and
 * recorded at that answer's time. A user message nothing has answered yet is left for the next
 * agent_end.
 * @param {unknown} messages agent_end's event.messages
 * @param {{ assistant: boolean }} options
 * @returns {CapturableMessage[]}
 */
export function capturableMessages(messages, { assistant }) {
  if (!Array.isArray(messages)) return [];
  /** @type {CapturableMessage[]} */
  const found = [];
  /** @type {string[]} the user's words since the last assistant message */
  let waiting = [];
  for (const raw of messages) {
    if (raw === null || typeof raw !== "object") continue;
    const message = /** @type {Record<string, unknown>} */ (raw);
    if (message.role === "user" && message.runtimeContextCarrier !== true) {
      const text = withoutRecallBlock(textOf(message.content).trim()).trim();
      if (text) waiting.push(text);
    } else if (message.role === "assistant" && isTime(message.timestamp)) {
      const timestamp = /** @type {number} */ (message.timestamp);
      waiting.forEach((text, n) => found.push({ role: "user", text, id: `user:${timestamp}:${n}`, timestamp }));
      waiting = [];
      const text = textOf(message.content).trim();
      if (assistant && text && message.stopReason !== "error" && message.stopReason !== "aborted") {
        found.push({ role: "assistant", text, id: `assistant:${timestamp}`, timestamp });
      }
    }
  }
  return found;
}

/**
 * The ingestion key of a message: its session and its identity there, never its text (a digest
 * of the text would let whoever holds the key test guesses of an erased message). The session is
 * OpenClaw's session key (stable across compactions, which can rotate the session id), else the
 * session id.
 * @param {string} session
 * @param {CapturableMessage} message
 */
export function captureKey(session, message) {
  return `${KEY_PREFIX}${session}:${message.id}`;
}

/**
 * Remember the newest capturable messages of a finished turn, each once.
 * @param {ZkrBridge} bridge
 * @param {AutoMemoryConfig} config
 * @param {unknown} messages
 * @param {{ agentId?: string; sessionKey?: string; sessionId?: string; trigger?: string }} ctx
 * @returns {Promise<{ offered: number; kept: number; refused: number }>}
 *   kept: stored now or already stored (a replay); refused: zkr said no to that message (erased,
 *   too large): the others are still remembered.
 * @throws {ZkrCommandError} zkr could not be reached: the rest is left for the next turn
 */
export async function captureTurn(bridge, config, messages, ctx) {
  const session = ctx.sessionKey || ctx.sessionId;
  if (!session || UNCAPTURED_TRIGGERS.includes(ctx.trigger ?? "")) return { offered: 0, kept: 0, refused: 0 };
  const offered = capturableMessages(messages, { assistant: config.captureAssistant }).slice(-CAPTURE_WINDOW);
  let kept = 0;
  let refused = 0;
  for (const message of offered) {
    const text = `${message.role === "user" ? "User" : "Assistant"}: ${message.text}`;
    if (Buffer.byteLength(text) > MAX_MESSAGE_BYTES) {
      refused += 1;
      continue;
    }
    // captured_at and recorded_at come from the message's identity, so offering it again is an
    // exact replay (zkr compares both) and answers the first store instead of adding a second.
    const seconds = Math.floor(message.timestamp / 1000);
    const args = { kind: "conversation", text, captured_at: seconds, recorded_at: seconds, ingestion_key: captureKey(session, message) };
    try {
      await bridge.call("zkr_store", args, ctx.agentId);
      kept += 1;
    } catch (error) {
      if (error instanceof ZkrCommandError) throw error;
      refused += 1; // a forgotten message keeps its key: zkr refuses to store it again
    }
  }
  return { offered: offered.length, kept, refused };
}

/** @param {unknown} error */
function reason(error) {
  return error instanceof ZkrCommandError ? `zkr command failed (${error.reason})` : "zkr command failed";
}

/**
 * Register the two hooks `config` asks for on the plugin api.
 * @param {OpenClawPluginApi} api
 * @param {ZkrBridge} bridge
 * @param {AutoMemoryConfig} config
 */
export function registerAutoMemory(api, bridge, config) {
  /** @param {string} line */
  const warn = (line) => api.logger?.warn?.(`zkr: ${line}`);
  if (config.recall) {
    api.on(
      "before_prompt_build",
      async (event, ctx) => {
        try {
          const prependContext = await recallFor(bridge, config, event.prompt, ctx.agentId, AbortSignal.timeout(config.recallTimeoutMs));
          return prependContext ? { prependContext } : undefined;
        } catch (error) {
          warn(`auto-recall skipped for this turn: ${reason(error)}`);
          return undefined;
        }
      },
      // The runner's own budget, a little over ours, so our timeout is the one that fires.
      { timeoutMs: config.recallTimeoutMs + 1000 },
    );
  }
  if (config.capture) {
    api.on("agent_end", async (event, ctx) => {
      try {
        await captureTurn(bridge, config, event.messages, ctx);
      } catch (error) {
        warn(`auto-capture left this turn for the next one: ${reason(error)}`);
      }
    });
  }
}
