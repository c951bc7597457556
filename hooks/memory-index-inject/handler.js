// memory-index-inject: add the files named by memwarden's bootstrap manifest to the bootstrap.
//
// `memwarden index` decides everything (threshold, files, cap) and writes
// <workspace>/memory/.memwarden-bootstrap.json; this handler only reads files. It never spawns a
// process and never throws: a failure logs one line and leaves bootstrapFiles untouched.
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";

export const HOOK_NAME = "memory-index-inject";
export const MANIFEST_PATH = path.join("memory", ".memwarden-bootstrap.json");
const MANIFEST_VERSION = 1;
const MAX_FILE_BYTES = 4 * 1024 * 1024;

/** Return true for session keys of group or channel conversations (`…:group:…`, `…:channel:…`). */
export function isGroupSession(sessionKey) {
  return typeof sessionKey === "string" && /:(group|channel):/i.test(sessionKey);
}

/** Read a file without following a symlink; return null when it does not exist. */
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
    return await handle.readFile({ encoding: "utf8" });
  } finally {
    await handle.close();
  }
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
  const manifestText = await readOwnFile(path.join(context.workspaceDir, MANIFEST_PATH));
  if (manifestText === null) return [];
  const manifest = JSON.parse(manifestText);
  if (!manifest || manifest.version !== MANIFEST_VERSION || !Array.isArray(manifest.files)) {
    throw new Error(`${MANIFEST_PATH}: not a version ${MANIFEST_VERSION} manifest`);
  }
  if (manifest.groupChats !== true && isGroupSession(context.sessionKey ?? event.sessionKey)) return [];
  const present = new Set(
    context.bootstrapFiles.map((file) => (typeof file?.path === "string" ? path.resolve(file.path) : "")),
  );
  const entries = [];
  for (const file of manifest.files) {
    const filePath = insideWorkspace(context.workspaceDir, file?.path);
    if (present.has(filePath)) continue;
    const content = await readOwnFile(filePath);
    if (content === null) continue;
    const name = typeof file.name === "string" && file.name ? file.name : file.path;
    entries.push({ name, path: filePath, content, missing: false });
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
