// memory-index-inject: add the files named by memwarden's bootstrap manifest to the bootstrap.
//
// memwarden decides everything (which files, the cap, which session may see a file) and writes
// <workspace>/memory/.memwarden-bootstrap.json: checkpoint and rotate after they write a
// conversation's handoff, index after it writes INDEX.md. This handler only reads files: each
// conversation's handoff goes to that conversation's session alone, INDEX.md (when listed) to
// every session. No manifest (memwarden has not written one yet): nothing is added, nothing is
// logged. It never spawns a process and never throws: a failure logs one line and leaves
// bootstrapFiles untouched.
import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";

export const HOOK_NAME = "memory-index-inject";
export const MANIFEST_PATH = path.join("memory", ".memwarden-bootstrap.json");
const MANIFEST_VERSION = 2;
const MAX_FILE_BYTES = 4 * 1024 * 1024;

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

/** Read a file's bytes without following a symlink; return null when it does not exist. */
async function readOwnFile(filePath) {
  let handle;
  try {
    handle = await open(filePath, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if (error && error.code === "ENOENT") return null;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    if (size > MAX_FILE_BYTES) throw new Error(`${filePath}: ${size} bytes, too large to inject`);
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

function sha256(bytes) {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Given the workspace and a manifest path, return the absolute path inside the workspace. */
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
  const manifestBytes = await readOwnFile(path.join(context.workspaceDir, MANIFEST_PATH));
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
    // while it is the file the manifest describes (its sha256): a file rewritten after the
    // manifest was written is left out until memwarden describes it again.
    const isPrivate = Boolean(file) && Object.hasOwn(file, "session");
    if (isPrivate && !isSessionOf(file.session, event)) continue;
    const filePath = insideWorkspace(context.workspaceDir, file?.path);
    if (present.has(filePath)) continue;
    const bytes = await readOwnFile(filePath);
    if (bytes === null) continue;
    if (isPrivate && sha256(bytes) !== file.sha256) continue;
    const name = typeof file.name === "string" && file.name ? file.name : file.path;
    entries.push({ name, path: filePath, content: bytes.toString("utf8"), missing: false });
  }
  return entries;
}

export default async function memoryIndexInject(event) {
  try {
    const entries = await entriesFor(event);
    if (entries.length > 0) event.context.bootstrapFiles.push(...entries);
  } catch (error) {
    console.warn(`[${HOOK_NAME}] bootstrap left unchanged: ${error?.message ?? String(error)}`);
  }
}
