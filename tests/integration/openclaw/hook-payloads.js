// OpenClaw 2026.7.1-2's lifecycle hook payloads, as documented in the npm package (openclaw@2026.7.1-2):
//
// - node_modules/openclaw/docs/plugins/hooks.md: "Prompt and model hooks" (before_prompt_build
//   "receives the current prompt and session messages. Return prependContext, appendContext,
//   systemPrompt, prependSystemContext, or appendSystemContext"), and agent_end ("Observe final
//   messages, success state, and run duration"; a conversation hook that "non-bundled plugins ...
//   must set plugins.entries.<id>.hooks.allowConversationAccess" for).
// - node_modules/openclaw/dist/hook-types-DQ9eTy2x.d.ts: PluginHookBeforePromptBuildEvent
//   { prompt: string; messages: unknown[] }, PluginHookBeforePromptBuildResult, PluginHookAgentEndEvent
//   { runId?: string; messages: unknown[]; success: boolean; error?: string; durationMs?: number },
//   PluginHookAgentContext { runId?, agentId?, sessionKey?, sessionId?, workspaceDir?, modelProviderId?,
//   modelId?, messageProvider?, channel?, chatId?, trigger?, channelId?, ... }.
// - node_modules/openclaw/dist/types-CFIUY_La.d.ts: the messages are AgentMessage values, here
//   UserMessage { role: "user"; content: string | (TextContent | ImageContent)[]; timestamp: number;
//   runtimeContextCarrier?: boolean }, AssistantMessage { role: "assistant"; content: (TextContent |
//   ThinkingContent | ToolCall)[]; api; provider; model; usage; stopReason; timestamp; ... } and
//   ToolResultMessage { role: "toolResult"; toolCallId; toolName; content; isError; timestamp }.
//
// The values are the ones the real gateway passed on /v1/chat/completions turns (recorded with a
// probe plugin on 2026-12-02), with a tool round added to the second turn in the documented shapes.
// Note what the gateway did: the first turn's user message carries the time its run started
// (1796194612310) in that turn's agent_end, but the time it arrived (1796194611191) when the
// transcript offers it again in later turns; the assistant message keeps its timestamp.

export const SESSION_KEY = "agent:main:openai-user:zkr-check";

/** ctx of both hooks (PluginHookAgentContext). */
export const AGENT_CONTEXT = Object.freeze({
  runId: "chatcmpl_1033d36b-6204-439b-8d07-fe0c4e5e1361",
  agentId: "main",
  sessionKey: SESSION_KEY,
  sessionId: "6bfcad86-0ae9-4d4f-8c8d-ba72b7ee7859",
  workspaceDir: "/home/me/.openclaw/workspace",
  modelProviderId: "fake",
  modelId: "echo",
  trigger: "user",
  channel: "webchat",
  messageProvider: "webchat",
  channelId: "webchat",
  chatId: "webchat",
});

/** before_prompt_build of the first turn (PluginHookBeforePromptBuildEvent). */
export const BEFORE_PROMPT_BUILD = Object.freeze({
  prompt: "Which plans do I like? Remember that I moved to Lisbon.",
  messages: [],
});

const USER_1 = {
  role: "user",
  content: [{ type: "text", text: "Which plans do I like? Remember that I moved to Lisbon." }],
  timestamp: 1796194612310,
};
const ASSISTANT_1 = {
  role: "assistant",
  content: [{ type: "text", text: "You like short plans. Noted: you live in Lisbon now." }],
  api: "openai-completions",
  provider: "fake",
  model: "echo",
  usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: "stop",
  timestamp: 1796194612514,
  responseId: "c1",
};

/** agent_end of the first turn (PluginHookAgentEndEvent): the session's transcript so far. */
export const AGENT_END_1 = Object.freeze({
  messages: [USER_1, ASSISTANT_1],
  success: true,
  durationMs: 481,
  runId: AGENT_CONTEXT.runId,
});

/** agent_end of the second turn: the first turn again (read back from the transcript), then a tool round and the answer. */
export const AGENT_END_2 = Object.freeze({
  messages: [
    { ...USER_1, timestamp: 1796194611191 },
    ASSISTANT_1,
    { role: "user", content: "Where do I live?", timestamp: 1796194700000 },
    {
      role: "assistant",
      content: [{ type: "thinking", thinking: "search memory" }, { type: "toolCall", id: "call-1", name: "memory_search", arguments: { query: "live" } }],
      api: "openai-completions", provider: "fake", model: "echo", usage: ASSISTANT_1.usage, stopReason: "toolUse", timestamp: 1796194700100,
    },
    { role: "toolResult", toolCallId: "call-1", toolName: "memory_search", content: [{ type: "text", text: "{\"results\":[]}" }], isError: false, timestamp: 1796194700200 },
    // A transient runtime-context carrier: not the person's words, never captured.
    { role: "user", content: "runtime context", timestamp: 1796194700250, runtimeContextCarrier: true },
    {
      role: "assistant", content: [{ type: "text", text: "You live in Lisbon." }],
      api: "openai-completions", provider: "fake", model: "echo", usage: ASSISTANT_1.usage, stopReason: "stop", timestamp: 1796194700300,
    },
  ],
  success: true,
  durationMs: 512,
  runId: "chatcmpl_2",
});
