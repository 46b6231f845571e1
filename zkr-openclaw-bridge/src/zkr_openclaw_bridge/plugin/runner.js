// Runs the zkr command for the plugin, and nothing else.
//
// The gateway process holds provider API keys and its own token, and crashes on an unhandled
// stream error, so every call here is defensive:
// - the command is an absolute path (a bare name is looked up on PATH once) and runs without a
//   shell; its arguments are `--db <database> <operation>` with the operation from a fixed list;
// - whatever the model supplied travels only as JSON on stdin, never in argv;
// - the child sees a minimal environment (ENV_NAMES and ZKR_*), never the gateway's secrets;
// - each call has a timeout and honours the tool's AbortSignal; output is capped;
// - a stdin 'error' handler keeps a zkr that exits early from killing the gateway with EPIPE;
// - every failure is the same redacted message: no exit code, stderr or path reaches the model.
//
// One long-lived `zkr --db PATH openclaw-serve` process answers the calls of a database (JSON
// lines with ids); if it cannot be used, read-only calls fall back to one-shot
// `zkr --db PATH openclaw-tool`.

import { spawn } from "node:child_process";
import { accessSync, constants, mkdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join } from "node:path";

export const ZKR_COMMAND_FAILED = "zkr command failed";
/** The only operations the plugin runs (one-shot, and the long-lived variant). */
export const ZKR_OPERATIONS = Object.freeze(["openclaw-tool", "openclaw-serve"]);
const TOOL_OPERATION = "openclaw-tool";
const SERVE_OPERATION = "openclaw-serve";
/** Variables the child may see, besides ZKR_* (zkr's own settings). */
export const ENV_NAMES = Object.freeze(["PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ"]);
const ENV_PREFIX = "ZKR_";
/** zkr's own request limit (contract: 1 MiB of stdin); larger calls are refused before spawning. */
export const MAX_REQUEST_BYTES = 1024 * 1024;
/** Cap on what one call may print (stdout and stderr together), after which zkr is killed. */
export const MAX_OUTPUT_BYTES = 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_DATABASE = "~/.zkr/memory.db";
const SERVE_FAILURES_BEFORE_PAUSE = 2;
const SERVE_PAUSE_MS = 60_000;
const CLOSE_GRACE_MS = 2_000;

/**
 * @typedef {object} ZkrOptions
 * @property {string} [command]   zkr executable: absolute path, or a bare name looked up on PATH.
 * @property {string} [database]  zkr database file (`~/` is the user's home).
 * @property {number} [timeoutMs] per-call timeout.
 * @property {boolean} [serve]    keep one `openclaw-serve` process per database (default true).
 * @property {NodeJS.ProcessEnv} [env] where PATH and the allowed variables come from (default: process.env).
 */

/**
 * A failed zkr call. Its message is always ZKR_COMMAND_FAILED; `reason` says why, for the
 * fallback decision and for tests, and never reaches the model.
 */
export class ZkrCommandError extends Error {
  /** @param {string} reason */
  constructor(reason) {
    super(ZKR_COMMAND_FAILED);
    this.reason = reason;
  }
}

/**
 * The child's environment: ENV_NAMES and ZKR_* from `env`, nothing else.
 * @param {NodeJS.ProcessEnv} env
 * @returns {Record<string, string>}
 */
export function childEnv(env) {
  /** @type {Record<string, string>} */
  const out = {};
  for (const [name, value] of Object.entries(env)) {
    if (typeof value === "string" && (ENV_NAMES.includes(name) || name.startsWith(ENV_PREFIX))) {
      out[name] = value;
    }
  }
  return out;
}

/** @param {string} file */
function isExecutableFile(file) {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * An absolute, executable zkr: the configured absolute path, or a bare name found on PATH.
 * Relative paths are refused (they would depend on the gateway's working directory).
 * @param {string} command
 * @param {NodeJS.ProcessEnv} env
 */
export function resolveCommand(command, env) {
  if (isAbsolute(command)) {
    if (isExecutableFile(command)) return command;
  } else if (!command.includes("/") && !command.includes("\\")) {
    for (const dir of (env.PATH ?? "").split(delimiter)) {
      if (dir && isAbsolute(dir) && isExecutableFile(join(dir, command))) return join(dir, command);
    }
  }
  throw new ZkrCommandError("command not found");
}

/** @param {string} database */
export function resolveDatabase(database) {
  if (database === "~" || database.startsWith("~/")) return join(homedir(), database.slice(1));
  if (isAbsolute(database)) return database;
  throw new ZkrCommandError("database path is not absolute");
}

/**
 * Spawn zkr with fixed arguments and the minimal environment (exported for the allow-list test).
 * @param {string} command @param {string} database @param {string} operation @param {Record<string, string>} env
 */
export function spawnZkr(command, database, operation, env) {
  if (!ZKR_OPERATIONS.includes(operation)) throw new TypeError("unsupported zkr operation");
  const child = spawn(command, ["--db", database, operation], {
    shell: false,
    stdio: ["pipe", "pipe", "pipe"],
    env,
    windowsHide: true,
  });
  // A zkr that exits before reading its input makes our write fail with EPIPE; unhandled, that
  // error would crash the gateway. The exit is reported through 'close'.
  child.stdin.on("error", () => {});
  return child;
}

/** @param {unknown} input */
function encodeRequest(input) {
  let text;
  try {
    text = JSON.stringify(input);
  } catch {
    throw new ZkrCommandError("request is not JSON");
  }
  if (typeof text !== "string" || Buffer.byteLength(text) > MAX_REQUEST_BYTES) {
    throw new ZkrCommandError("request too large");
  }
  return text;
}

/** @param {string} text */
function parseJson(text) {
  try {
    return /** @type {unknown} */ (JSON.parse(text));
  } catch {
    throw new ZkrCommandError("unparseable output");
  }
}

/**
 * One call of `zkr --db DATABASE openclaw-tool`: `input` as JSON on stdin, one JSON value out.
 * @param {string} command absolute path (see resolveCommand)
 * @param {string} database absolute path
 * @param {unknown} input
 * @param {{ env: Record<string, string>; timeoutMs: number; signal?: AbortSignal; operation?: string }} options
 * @returns {Promise<unknown>}
 */
export function runOnce(command, database, input, options) {
  const operation = options.operation ?? TOOL_OPERATION;
  if (operation !== TOOL_OPERATION) return Promise.reject(new TypeError("unsupported zkr operation"));
  return new Promise((resolve, reject) => {
    const { signal } = options;
    if (signal?.aborted) return reject(new ZkrCommandError("aborted"));
    let text;
    try {
      text = encodeRequest(input);
    } catch (error) {
      return reject(error);
    }
    const child = spawnZkr(command, database, operation, options.env);
    /** @type {Buffer[]} */
    const stdout = [];
    let outputBytes = 0;
    let settled = false;
    /** @param {string | null} failure @param {unknown} [value] */
    const settle = (failure, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      if (failure === null) resolve(value);
      else {
        child.kill("SIGKILL");
        reject(new ZkrCommandError(failure));
      }
    };
    const onAbort = () => settle("aborted");
    const timer = setTimeout(() => settle("timeout"), options.timeoutMs);
    signal?.addEventListener("abort", onAbort, { once: true });
    /** @param {Buffer} chunk @param {boolean} keep */
    const take = (chunk, keep) => {
      outputBytes += chunk.length;
      if (outputBytes > MAX_OUTPUT_BYTES) settle("output too large");
      else if (keep) stdout.push(chunk);
    };
    child.stdout.on("data", (chunk) => take(chunk, true));
    child.stderr.on("data", (chunk) => take(chunk, false)); // counted, never shown
    child.on("error", () => settle("spawn failed"));
    child.on("close", (code) => {
      if (settled) return;
      if (code !== 0) return settle("exit status");
      try {
        settle(null, parseJson(Buffer.concat(stdout).toString("utf8")));
      } catch {
        settle("unparseable output");
      }
    });
    child.stdin.end(text);
  });
}

/**
 * One long-lived `zkr --db DATABASE openclaw-serve`: requests carry an id, answers come back in
 * order, one line each. Any trouble (exit, timeout, oversized or garbled line) kills it and fails
 * every call in flight; the client then starts a new one.
 */
class ServeSession {
  /** @type {Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void; done: () => void }>} */
  #pending = new Map();
  #nextId = 1;
  /** @type {Buffer[]} */
  #partial = [];
  #partialBytes = 0;
  // stderr since the last answer: the output cap applies per call, like one-shot, so a serve
  // process that warns now and then is not killed for the sum of its lifetime's warnings.
  #stderrBytes = 0;
  alive = true;
  /** @type {import("node:child_process").ChildProcessWithoutNullStreams} */
  #child;

  /** @param {string} command @param {string} database @param {Record<string, string>} env */
  constructor(command, database, env) {
    this.#child = spawnZkr(command, database, SERVE_OPERATION, env);
    this.#child.stdout.on("data", (chunk) => this.#onData(chunk));
    this.#child.stderr.on("data", (chunk) => {
      this.#stderrBytes += chunk.length;
      if (this.#stderrBytes > MAX_OUTPUT_BYTES) this.fail("output too large");
    });
    this.#child.on("error", () => this.fail("spawn failed"));
    this.#child.on("close", () => this.fail("exited"));
    this.#setActive(false);
  }

  get pid() {
    return this.#child.pid;
  }

  // An idle serve process must not keep the gateway (or a CLI run) alive.
  /** @param {boolean} active */
  #setActive(active) {
    const handles = [this.#child, this.#child.stdin, this.#child.stdout, this.#child.stderr];
    for (const handle of handles) {
      const h = /** @type {{ ref?: () => void; unref?: () => void }} */ (/** @type {unknown} */ (handle));
      if (active) h.ref?.();
      else h.unref?.();
    }
  }

  /** @param {Buffer} chunk */
  #onData(chunk) {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      this.#partial.push(chunk.subarray(start, newline));
      const line = Buffer.concat(this.#partial).toString("utf8");
      this.#partial = [];
      this.#partialBytes = 0;
      start = newline + 1;
      this.#onLine(line);
      if (!this.alive) return;
    }
    const rest = chunk.subarray(start);
    this.#partialBytes += rest.length;
    if (this.#partialBytes > MAX_OUTPUT_BYTES) return this.fail("output too large");
    if (rest.length) this.#partial.push(rest);
  }

  /** @param {string} line */
  #onLine(line) {
    if (!line.trim()) return;
    let message;
    try {
      message = /** @type {Record<string, unknown>} */ (parseJson(line));
    } catch {
      return this.fail("unparseable output");
    }
    const id = message !== null && typeof message === "object" ? message.id : undefined;
    const [firstId] = this.#pending.keys();
    // Answers come in request order; anything else means we lost track of the stream.
    if (typeof id !== "number" || id !== firstId) return this.fail("protocol");
    const waiter = this.#pending.get(id);
    this.#pending.delete(id);
    this.#stderrBytes = 0;
    if (this.#pending.size === 0) this.#setActive(false);
    if (!waiter) return;
    waiter.done();
    if (Object.hasOwn(message, "error")) waiter.reject(new ZkrCommandError("zkr error"));
    else if (Object.hasOwn(message, "result")) waiter.resolve(message.result);
    else waiter.reject(new ZkrCommandError("protocol"));
  }

  /** @param {string} reason */
  fail(reason) {
    if (!this.alive) return;
    this.alive = false;
    this.#child.kill("SIGKILL");
    const waiters = [...this.#pending.values()];
    this.#pending.clear();
    for (const waiter of waiters) {
      waiter.done();
      waiter.reject(new ZkrCommandError(reason));
    }
  }

  /** Close gracefully: EOF ends `serve`; a stuck one is killed after a grace period. */
  close() {
    if (!this.alive) return;
    this.#child.stdin.end();
    const timer = setTimeout(() => this.fail("closed"), CLOSE_GRACE_MS);
    timer.unref();
    this.#child.once("close", () => clearTimeout(timer));
  }

  /**
   * @param {unknown} input
   * @param {number} timeoutMs
   * @param {AbortSignal} [signal]
   * @returns {Promise<unknown>}
   */
  request(input, timeoutMs, signal) {
    return new Promise((resolve, reject) => {
      if (!this.alive) return reject(new ZkrCommandError("exited"));
      if (signal?.aborted) return reject(new ZkrCommandError("aborted"));
      const id = this.#nextId++;
      let line;
      try {
        line = encodeRequest({ id, command: TOOL_OPERATION, request: input });
      } catch (error) {
        return reject(error);
      }
      // A call that times out or is aborted cannot be cancelled inside zkr: the process goes.
      const onAbort = () => this.fail("aborted");
      const timer = setTimeout(() => this.fail("timeout"), timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      this.#pending.set(id, { resolve, reject, done });
      this.#setActive(true);
      this.#child.stdin.write(`${line}\n`);
    });
  }
}

/** Calls zkr for one database: through a warm serve process when possible, else one-shot. */
export class ZkrClient {
  #options;
  /** @type {{ command: string; database: string; env: Record<string, string> } | null} */
  #resolved = null;
  /** @type {ServeSession | null} */
  #session = null;
  #serveFailures = 0;
  #servePausedUntil = 0;

  /** @param {ZkrOptions} options */
  constructor(options = {}) {
    this.#options = options;
  }

  /** The database file, `~/` expanded (what status() reports; a relative path stays as given). */
  get database() {
    const database = this.#options.database ?? DEFAULT_DATABASE;
    try {
      return resolveDatabase(database);
    } catch {
      return database;
    }
  }

  /** Whether calls currently go through a serve process. */
  get serving() {
    return this.#session?.alive === true;
  }

  /** The serve process's pid, while there is one (for status and tests). */
  get servePid() {
    return this.#session?.alive ? this.#session.pid : undefined;
  }

  #resolve() {
    if (this.#resolved) return this.#resolved;
    const env = this.#options.env ?? process.env;
    const command = resolveCommand(this.#options.command ?? "zkr", env);
    const database = resolveDatabase(this.database);
    try {
      // Once per client, not per call: zkr creates the file, not its folder.
      mkdirSync(dirname(database), { recursive: true, mode: 0o700 });
    } catch {
      // zkr reports the unusable path itself (redacted like every failure).
    }
    this.#resolved = { command, database, env: childEnv(env) };
    return this.#resolved;
  }

  #useServe() {
    return this.#options.serve !== false && Date.now() >= this.#servePausedUntil;
  }

  /**
   * Run one `openclaw-tool` call.
   * @param {unknown} input the call (JSON-serialisable)
   * @param {{ signal?: AbortSignal; readOnly?: boolean }} [options]
   *   readOnly: may be repeated one-shot if the serve process fails (never for writes: the
   *   write may already have happened).
   * @returns {Promise<unknown>}
   */
  async call(input, options = {}) {
    const { signal, readOnly = false } = options;
    // Checked before a serve process is started for nothing.
    if (signal?.aborted) throw new ZkrCommandError("aborted");
    const { command, database, env } = this.#resolve();
    const timeoutMs = this.#options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (this.#useServe()) {
      if (!this.#session?.alive) this.#session = new ServeSession(command, database, env);
      try {
        const answer = await this.#session.request(input, timeoutMs, signal);
        this.#serveFailures = 0;
        return answer;
      } catch (error) {
        const reason = error instanceof ZkrCommandError ? error.reason : "unknown";
        // The call's own fault (or a zkr error answer): running it again would not help.
        if (["aborted", "timeout", "output too large", "request too large", "request is not JSON", "zkr error"].includes(reason)) {
          throw error;
        }
        if (++this.#serveFailures >= SERVE_FAILURES_BEFORE_PAUSE) {
          this.#servePausedUntil = Date.now() + SERVE_PAUSE_MS;
          this.#serveFailures = 0;
        }
        if (!readOnly) throw error;
      }
    }
    return runOnce(command, database, input, { env, timeoutMs, signal });
  }

  /** Stop the serve process (a later call starts a new one). */
  close() {
    this.#session?.close();
    this.#session = null;
  }
}
