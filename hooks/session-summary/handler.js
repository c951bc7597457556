// session-summary: run memwarden when a conversation is about to be reset or compacted.
//
// command:new / command:reset / session:compact:before -> `memwarden checkpoint --session KEY`,
// waited for (at most CHECKPOINT_WAIT_MS): the gateway runs this hook before it resets or
// compacts, so the conversation's handoff holds every turn up to that moment when the next
// prompt's bootstrap injects it, also between two timer ticks (one still running then is
// stopped: a hung run never holds up the gateway, nor piles up);
// command:new / command:reset -> then `memwarden summarize` (a summary of the window that
// ended), started detached.
// The hook never throws. Only ids and the event time are passed, as
// arguments; never the event's cfg or any token. memwarden.json beside this file (written by
// `memwarden install hooks`) names the executable, its --config / --state-dir and the environment
// the timers were given (storage dir, secrets file path, XDG folders: never a secret), so the
// run it starts keeps its state where the timers keep theirs.
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const HOOK_NAME = "session-summary";
export const SETTINGS_PATH = path.join(path.dirname(fileURLToPath(import.meta.url)), "memwarden.json");
const SUMMARY_ACTIONS = new Set(["new", "reset"]);
// How long a reset or a compaction waits for the checkpoint (a run takes well under a second).
export const CHECKPOINT_WAIT_MS = 20000;
const SAFE_VALUE = /^[^\0-\x1f\x7f]{1,1024}$/;
const VARIABLE_NAME = /^[A-Z_][A-Z0-9_]{0,127}$/;

function log(message) {
  console.warn(`[${HOOK_NAME}] ${message}`);
}

/** Return `value` when it is a non-empty string without control characters, else undefined. */
function safe(value) {
  return typeof value === "string" && SAFE_VALUE.test(value) ? value : undefined;
}

/** Given the event, return its agent id: context.agentId, else the one in `agent:<id>:…`. */
export function agentIdOf(event) {
  const fromContext = safe(event?.context?.agentId);
  if (fromContext) return fromContext;
  const match = /^agent:([^:]+):/i.exec(event?.sessionKey ?? "");
  return match ? safe(match[1].toLowerCase()) : undefined;
}

function isoTime(value) {
  const moment = value instanceof Date ? value : new Date(value ?? Number.NaN);
  return Number.isNaN(moment.getTime()) ? undefined : moment.toISOString();
}

function globalOptions(settings) {
  const global = [];
  if (safe(settings?.config)) global.push(`--config=${settings.config}`);
  if (safe(settings?.stateDir)) global.push(`--state-dir=${settings.stateDir}`);
  global.push("-q");
  return global;
}

function isResetOrCompaction(event) {
  return (
    (event?.type === "command" && SUMMARY_ACTIONS.has(event.action)) ||
    (event?.type === "session" && event.action === "compact:before")
  );
}

/** Given an event and the settings, return the checkpoint's arguments, or null for none. */
export function checkpointFor(event, settings) {
  const key = safe(event?.sessionKey);
  if (!key || !isResetOrCompaction(event)) return null;
  return [...globalOptions(settings), "checkpoint", `--session=${key}`];
}

/** Given an event and the settings, return the summary's arguments, or null for none. */
export function commandFor(event, settings) {
  const key = safe(event?.sessionKey);
  if (!event || !key) return null;
  const global = globalOptions(settings);
  if (event.type !== "command" || !SUMMARY_ACTIONS.has(event.action)) return null;
  const context = event.context ?? {};
  const args = [...global, "summarize", `--session-key=${key}`, `--event=command:${event.action}`];
  const agentId = agentIdOf(event);
  if (agentId) args.push(`--agent=${agentId}`);
  const sessionId = safe(context.sessionEntry?.sessionId);
  if (sessionId) args.push(`--session-id=${sessionId}`);
  const previousId = safe(context.previousSessionEntry?.sessionId);
  if (previousId) args.push(`--previous-session-id=${previousId}`);
  const time = isoTime(event.timestamp);
  if (time) args.push(`--event-time=${time}`);
  return args;
}

/** Given the settings, return the environment of memwarden's run: the gateway's, with the
 * variables memwarden.json pins (names of the usual form, values without control characters). */
export function environmentFor(settings, base = process.env) {
  const pinned = settings?.environment;
  const environment = { ...base };
  if (!pinned || typeof pinned !== "object" || Array.isArray(pinned)) return environment;
  for (const [name, value] of Object.entries(pinned)) {
    if (VARIABLE_NAME.test(name) && safe(value)) environment[name] = value;
  }
  return environment;
}

/** Read memwarden.json; throw when it is missing or names no executable. */
export async function readSettings(settingsPath = SETTINGS_PATH) {
  const settings = JSON.parse(await readFile(settingsPath, "utf8"));
  if (!settings || typeof settings.executable !== "string" || !path.isAbsolute(settings.executable)) {
    throw new Error(`${settingsPath}: no absolute "executable"; run \`memwarden install hooks\``);
  }
  return settings;
}

/** Start memwarden detached with `args`; resolve once it has ended, or at once when `waitMs`
 * is 0 (it runs on), or after `waitMs`, stopping it then (SIGTERM: memwarden keeps what it has
 * done): to true, or to false when it could not start (logged in one line). Never rejects. */
export function start(settings, args, waitMs = 0) {
  return new Promise((resolve) => {
    const child = spawn(settings.executable, args, {
      detached: true,
      stdio: "ignore",
      env: environmentFor(settings),
    });
    const timer = setTimeout(() => {
      if (waitMs > 0) {
        log(`${args.find((arg) => !arg.startsWith("-"))} still running after ${waitMs} ms: stopped`);
        child.kill("SIGTERM");
      }
      resolve(true);
    }, waitMs);
    const done = (started) => {
      clearTimeout(timer);
      resolve(started);
    };
    child.on("error", (error) => {
      log(`could not start ${settings.executable}: ${error.message}`);
      done(false);
    });
    child.on("exit", () => done(true));
    child.unref();
  });
}

export default async function sessionSummary(event, waitMs = CHECKPOINT_WAIT_MS) {
  try {
    if (!isResetOrCompaction(event)) return;
    const settings = await readSettings();
    const checkpoint = checkpointFor(event, settings);
    if (checkpoint && !(await start(settings, checkpoint, waitMs))) return;
    const summary = commandFor(event, settings);
    if (summary) await start(settings, summary);
  } catch (error) {
    log(`skipped: ${error?.message ?? String(error)}`);
  }
}
