// Event objects shaped like the gateway's, rebuilt from the captures in tests/fixtures.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export const FIXTURES = path.resolve(here, "..", "..", "tests", "fixtures");
export const VERSIONS = ["openclaw-2026.9.6", "openclaw-2026.7.35"];

/** Return the captured hook records of one gateway version. */
export function captures(version) {
  return readFileSync(path.join(FIXTURES, version, "hook-events.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line));
}

/** Given a capture, return an event as the gateway passes it, with the workspace replaced. */
export function eventFrom(capture, { workspaceDir, sessionEntryId, previousSessionEntryId } = {}) {
  const context = { ...capture.context };
  if (workspaceDir && "workspaceDir" in context) context.workspaceDir = workspaceDir;
  if (capture.contextKeys.includes("cfg")) {
    context.cfg = { gateway: { auth: { token: "secret-gateway-token" } } };
  }
  if (capture.bootstrapFiles) {
    context.bootstrapFiles = capture.bootstrapFiles.map((file) => ({
      name: file.name,
      path: workspaceDir ? path.join(workspaceDir, file.name) : file.path,
      content: "x".repeat(file.contentLen),
      missing: file.missing,
    }));
  }
  for (const key of ["sessionEntry", "previousSessionEntry"]) {
    if (typeof context[key] === "string") {
      const id = key === "sessionEntry" ? sessionEntryId : previousSessionEntryId;
      context[key] = { sessionId: id ?? "11111111-2222-4333-8444-555555555555" };
    }
  }
  return {
    type: capture.type,
    action: capture.action,
    sessionKey: capture.sessionKey,
    timestamp: new Date(capture.timestamp),
    context,
    messages: [],
  };
}

/** Return the first capture of `type:action` for a version. */
export function capture(version, type, action) {
  const found = captures(version).find((item) => item.type === type && item.action === action);
  if (!found) throw new Error(`${version}: no ${type}:${action} capture`);
  return found;
}
