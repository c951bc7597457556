// memory-index-inject: add the files named by memwarden's bootstrap manifest to the bootstrap.
//
// memwarden decides everything (which files, the cap, which session may see a file) and writes
// <workspace>/memory/.memwarden-bootstrap.json: checkpoint and rotate when a conversation gets a
// handoff file, index when it writes INDEX.md. This handler only reads files: each
// conversation's handoff goes to that conversation's session alone (the manifest names it, and
// the file's own provenance line must name it too, as it is now), INDEX.md (when listed) to
// every session. No manifest (memwarden has not written one yet): nothing is added, nothing is
// logged. It never spawns a process and never throws: a failure logs one line and leaves
// bootstrapFiles untouched.
//
// It leaves a receipt of each delivery, for memwarden's health, status and metrics: which files
// it added for which session, their lengths, and whether the gateway's bootstrap caps will cut
// them, in <deliveries>/<sha256 of the session key>.json, the folder memwarden.json beside this
// file names (written by `memwarden install hooks`; without it, no receipt).
import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { mkdir, open, readFile, realpath, rename, stat, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const HOOK_NAME = "memory-index-inject";
export const MANIFEST_PATH = path.join("memory", ".memwarden-bootstrap.json");
const MANIFEST_VERSION = 3;
const MAX_FILE_BYTES = 4 * 1024 * 1024;
// The provenance line memwarden writes at the top of a handoff: "> - session: `KEY` (id …".
const PROVENANCE_SESSION = /^> - session: `([^`]+)`/;
export const SETTINGS_PATH = path.join(path.dirname(fileURLToPath(import.meta.url)), "memwarden.json");
const RECEIPT_VERSION = 1;
const RECEIPT_DELIVERIES = 10;
const SINCE_FILE = ".since";
// The gateway's bootstrap caps (openclaw 2026.7.x and 2026.9.x): per file, in all, USER.md's own,
// and the least room in which it still adds a file.
const DEFAULT_MAX_CHARS = 20000;
const DEFAULT_TOTAL_MAX_CHARS = 60000;
const USER_FILE_MAX_CHARS = 4000;
const MIN_FILE_BUDGET_CHARS = 64;
// How much shorter than its cap the gateway's digest of a long AGENTS.md may come out.
const AGENTS_DIGEST_SLACK = 1000;
// Sessions the gateway runs for automation: no conversation to hand off, no receipt.
const AUTOMATION_KEY = /(^|:)(cron|subagent|acp|boot)(:|$)|:heartbeat$|^(hook:|node-)/i;

/** Return true for session keys of group or channel conversations (`…:group:…`, `…:channel:…`). */
export function isGroupSession(sessionKey) {
  return typeof sessionKey === "string" && /:(group|channel):/i.test(sessionKey);
}

/** Given the event, return its session key, lower-cased, or undefined. */
export function sessionKeyOf(event) {
  const key = typeof event?.sessionKey === "string" ? event.sessionKey : event?.context?.sessionKey;
  return typeof key === "string" && key !== "" ? key.toLowerCase() : undefined;
}

/** Given the event, return its agent id, lower-cased: context.agentId, else the key's. */
function agentIdOf(event) {
  const fromContext = event?.context?.agentId;
  if (typeof fromContext === "string" && fromContext !== "") return fromContext.toLowerCase();
  const match = /^agent:([^:]+):/.exec(sessionKeyOf(event) ?? "");
  return match ? match[1] : undefined;
}

/**
 * Return true when the event is the session `recorded` names: the same key, or, when `recorded`
 * is an agent's main session (`agent:<id>:main`), that agent's main session however the event
 * names it (`main`). A missing or empty `recorded` matches no session.
 */
export function isSessionOf(recorded, event) {
  if (typeof recorded !== "string" || recorded === "") return false;
  const wanted = recorded.toLowerCase();
  const key = sessionKeyOf(event);
  if (key === undefined) return false;
  if (key === wanted) return true;
  const main = /^agent:([^:]+):main$/.exec(wanted);
  return main !== null && key === "main" && agentIdOf(event) === main[1];
}

/**
 * Given a handoff's text and the agents sharing the workspace, return the session key its
 * provenance line names, lower-cased, or undefined. Only the first quoted block before the first
 * section counts (the rest of the file quotes conversations); a legacy unscoped `main` is the
 * main session of the only agent.
 */
export function handoffSession(text, agents) {
  const lines = String(text).split(/\r?\n/);
  let quoted = false;
  for (const [number, line] of lines.entries()) {
    if (line.startsWith(">")) {
      quoted = true;
      const match = PROVENANCE_SESSION.exec(line);
      if (!match) continue;
      const key = match[1].toLowerCase();
      if (key === "main" && Array.isArray(agents) && agents.length === 1) {
        return `agent:${String(agents[0]).toLowerCase()}:main`;
      }
      return key;
    }
    if (quoted || (number > 0 && line.startsWith("#"))) return undefined;
  }
  return undefined;
}

/**
 * Read a file of the workspace (`relative` to it, as the manifest names it); return its bytes, or
 * null when it does not exist. Never through a symlink: the file itself must not be one
 * (O_NOFOLLOW), and its real path must lie inside the workspace's real path, so a symlinked
 * folder on the way (`memory/sessions` leading elsewhere) is refused too. The file opened must be
 * the one its real path names (same device and inode), so a swap in between is refused as well.
 */
async function readOwnFile(workspaceDir, relative) {
  const filePath = insideWorkspace(workspaceDir, relative);
  let handle;
  try {
    handle = await open(filePath, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if (error && error.code === "ENOENT") return null;
    if (error && error.code === "ELOOP") throw new Error(`${relative}: is a symlink; the hook does not follow links`);
    throw error;
  }
  try {
    const opened = await handle.stat();
    await checkRealPath(workspaceDir, relative, filePath, opened);
    if (opened.size > MAX_FILE_BYTES) throw new Error(`${relative}: ${opened.size} bytes, too large to inject`);
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** Throw unless `filePath`, opened as `opened`, really is inside the workspace. */
async function checkRealPath(workspaceDir, relative, filePath, opened) {
  const [root, real] = await Promise.all([realpath(workspaceDir), realpath(filePath)]);
  if (!real.startsWith(root + path.sep)) {
    throw new Error(`${relative}: leads out of the workspace through a symlink (to ${real}); not read`);
  }
  const found = await stat(real);
  if (found.dev !== opened.dev || found.ino !== opened.ino) {
    throw new Error(`${relative}: replaced while it was opened; not read`);
  }
}

/** Given the workspace and a manifest path, return the absolute path inside the workspace, as
 * written (a path with `..` or an absolute one is refused; links are checked by readOwnFile). */
function insideWorkspace(workspaceDir, relative) {
  if (typeof relative !== "string" || relative === "" || path.isAbsolute(relative)) {
    throw new Error(`manifest path ${JSON.stringify(relative)} is not relative to the workspace`);
  }
  const root = path.resolve(workspaceDir);
  const resolved = path.resolve(root, relative);
  if (!resolved.startsWith(root + path.sep)) {
    throw new Error(`manifest path ${JSON.stringify(relative)} leaves the workspace`);
  }
  return resolved;
}

/** Given an agent:bootstrap event, return the entries to append (possibly none). */
export async function entriesFor(event) {
  if (!event || event.type !== "agent" || event.action !== "bootstrap") return [];
  const context = event.context;
  if (!context || typeof context.workspaceDir !== "string" || !Array.isArray(context.bootstrapFiles)) {
    return [];
  }
  const manifestBytes = await readOwnFile(context.workspaceDir, MANIFEST_PATH);
  if (manifestBytes === null) return [];
  const manifest = JSON.parse(manifestBytes.toString("utf8"));
  if (!manifest || manifest.version !== MANIFEST_VERSION || !Array.isArray(manifest.files)) {
    throw new Error(`${MANIFEST_PATH}: not a version ${MANIFEST_VERSION} manifest`);
  }
  if (manifest.groupChats !== true && isGroupSession(sessionKeyOf(event))) return [];
  const present = new Set(
    context.bootstrapFiles.map((file) => (typeof file?.path === "string" ? path.resolve(file.path) : "")),
  );
  const entries = [];
  for (const file of manifest.files) {
    // A file with a `session` (a conversation's handoff) goes to that session only, and only
    // while the file itself names that session: what it holds now, not what it held when the
    // manifest was written.
    const isPrivate = Boolean(file) && Object.hasOwn(file, "session");
    if (isPrivate && !isSessionOf(file.session, event)) continue;
    const filePath = insideWorkspace(context.workspaceDir, file?.path);
    if (present.has(filePath)) continue;
    const bytes = await readOwnFile(context.workspaceDir, file.path);
    if (bytes === null) continue;
    const content = bytes.toString("utf8");
    if (isPrivate && !isSessionOf(handoffSession(content, manifest.agents), event)) continue;
    const name = typeof file.name === "string" && file.name ? file.name : file.path;
    entries.push({ name, path: filePath, content, missing: false, ...(isPrivate ? { handoff: true } : {}) });
  }
  return entries;
}

/** Given a positive number (as the gateway reads its caps), return it floored, else undefined. */
function positive(value) {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;
}

/** Given the gateway config and an agent id, return its bootstrap caps: the agent's own, else
 * agents.defaults, else the gateway's defaults. */
export function bootstrapCaps(cfg, agentId) {
  const agents = cfg?.agents ?? {};
  const listed = Array.isArray(agents.list) ? agents.list : Object.entries(agents.entries ?? {}).map(([id, entry]) => ({ id, ...entry }));
  const own = listed.find((entry) => typeof entry?.id === "string" && entry.id.toLowerCase() === agentId) ?? {};
  const defaults = agents.defaults ?? {};
  // As the gateway reads them (resolveBootstrapCharLimit): the agent's value when it has one,
  // else the defaults', and a value that is not a positive number is the gateway's default.
  return {
    maxChars: positive(own.bootstrapMaxChars ?? defaults.bootstrapMaxChars) ?? DEFAULT_MAX_CHARS,
    totalMaxChars: positive(own.bootstrapTotalMaxChars ?? defaults.bootstrapTotalMaxChars) ?? DEFAULT_TOTAL_MAX_CHARS,
  };
}

/**
 * Given the bootstrap files before ours, ours and the caps, return for each of ours what the
 * gateway will do with it: its length, and whether it is cut or left out. The gateway takes the
 * files in order, each trimmed at its end and cut past the per-file cap, until they pass the
 * total cap (`buildBootstrapContextFiles`).
 */
export function budgetOf(before, added, caps) {
  let remaining = caps.totalMaxChars;
  for (const file of before) {
    if (remaining <= 0) break;
    const content = file?.missing ? `[MISSING] Expected at: ${file?.path ?? ""}` : String(file?.content ?? "").trimEnd();
    const name = String(file?.name ?? "").toLowerCase();
    const cap = name === "user.md" ? Math.min(caps.maxChars, USER_FILE_MAX_CHARS) : caps.maxChars;
    // An AGENTS.md past its cap becomes a digest that may be shorter than the cap: counted at
    // the least it takes, so a receipt never says "cut" of a handoff the gateway kept whole.
    const taken = name === "agents.md" && content.length > cap ? cap - AGENTS_DIGEST_SLACK : content.length;
    remaining -= Math.min(taken, file?.missing ? remaining : Math.min(cap, remaining));
  }
  return added.map((file) => {
    const chars = file.content.trimEnd().length;
    if (remaining < MIN_FILE_BUDGET_CHARS) return { chars, cut: true, leftOut: true };
    const room = Math.min(caps.maxChars, remaining);
    remaining -= Math.min(chars, room);
    return { chars, cut: chars > room, leftOut: false };
  });
}

/** Read memwarden.json beside this file; return its `deliveries` folder, or undefined. */
async function deliveriesFolder(settingsPath) {
  let settings;
  try {
    settings = JSON.parse(await readFile(settingsPath, "utf8"));
  } catch (error) {
    if (error && error.code === "ENOENT") return undefined;
    throw new Error(`${settingsPath}: ${error?.message ?? String(error)}`);
  }
  const folder = settings?.deliveries;
  return typeof folder === "string" && path.isAbsolute(folder) ? folder : undefined;
}

/** Given the event's key and agent, return the key a receipt is filed under: an agent's main
 * session named `main` (a legacy unscoped key) as `agent:<id>:main`, as memwarden names it. */
export function canonicalKey(key, agentId) {
  return key === "main" && agentId ? `agent:${agentId}:main` : key;
}

/** Given a session key, return its receipt's file name: the first 32 hex digits of its SHA-256. */
export function receiptName(sessionKey) {
  return `${createHash("sha256").update(sessionKey).digest("hex").slice(0, 32)}.json`;
}

/**
 * Record this bootstrap's delivery for the session: the receipt keeps the session's last
 * RECEIPT_DELIVERIES deliveries, newest last, and is replaced whole (a temp file, then a rename).
 */
export async function recordDelivery(event, entries, before, settingsPath = SETTINGS_PATH) {
  const agentId = agentIdOf(event);
  const key = canonicalKey(sessionKeyOf(event), agentId);
  if (key === undefined || AUTOMATION_KEY.test(key)) return;
  const folder = await deliveriesFolder(settingsPath);
  if (folder === undefined) return;
  const budgets = budgetOf(before, entries, bootstrapCaps(event.context?.cfg, agentId));
  const files = entries.map((entry, index) => ({
    path: path.relative(event.context.workspaceDir, entry.path),
    handoff: entry.handoff === true,
    ...budgets[index],
  }));
  const handoff = files.find((file) => file.handoff);
  const delivery = {
    at: new Date().toISOString(),
    sessionId: typeof event.context?.sessionId === "string" ? event.context.sessionId : null,
    handoff: handoff === undefined ? "none" : handoff.leftOut ? "left out" : handoff.cut ? "cut" : "whole",
    files,
  };
  const target = path.join(folder, receiptName(key));
  let deliveries = [];
  try {
    const previous = JSON.parse(await readFile(target, "utf8"));
    if (previous?.version === RECEIPT_VERSION && Array.isArray(previous.deliveries)) deliveries = previous.deliveries;
  } catch {
    // none yet, or unreadable: this receipt starts over
  }
  const receipt = {
    version: RECEIPT_VERSION,
    sessionKey: key,
    agentId: agentId ?? null,
    workspace: event.context.workspaceDir,
    deliveries: [...deliveries, delivery].slice(-RECEIPT_DELIVERIES),
  };
  await mkdir(folder, { recursive: true, mode: 0o700 });
  // When receipts began: health judges no reset or compaction before it.
  await writeFile(path.join(folder, SINCE_FILE), `${delivery.at}\n`, { mode: 0o600, flag: "wx" }).catch((error) => {
    if (error?.code !== "EEXIST") throw error;
  });
  const temporary = `${target}.${process.pid}.${Date.now()}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(receipt)}\n`, { mode: 0o600, flag: "wx" });
    await rename(temporary, target);
  } catch (error) {
    await unlink(temporary).catch(() => {});
    throw error;
  }
}

export default async function memoryIndexInject(event) {
  let entries = [];
  const before = Array.isArray(event?.context?.bootstrapFiles) ? [...event.context.bootstrapFiles] : [];
  try {
    entries = await entriesFor(event);
    if (entries.length > 0) {
      event.context.bootstrapFiles.push(...entries.map(({ handoff, ...entry }) => entry));
    }
  } catch (error) {
    console.warn(`[${HOOK_NAME}] bootstrap left unchanged: ${error?.message ?? String(error)}`);
    return;
  }
  const workspace = event?.context?.workspaceDir;
  const manifest = workspace ? await manifestOf(workspace) : undefined;
  // Nothing is meant for a group chat unless the manifest says so: no receipt either.
  if (!manifest || (manifest.groupChats !== true && isGroupSession(sessionKeyOf(event)))) return;
  try {
    await recordDelivery(event, entries, before);
  } catch (error) {
    console.warn(`[${HOOK_NAME}] no delivery receipt: ${error?.message ?? String(error)}`);
  }
}

/** Return the workspace's manifest when memwarden keeps it (and it can be read), else undefined. */
async function manifestOf(workspaceDir) {
  try {
    const bytes = await readOwnFile(workspaceDir, MANIFEST_PATH);
    return bytes === null ? undefined : JSON.parse(bytes.toString("utf8"));
  } catch {
    return undefined;
  }
}
