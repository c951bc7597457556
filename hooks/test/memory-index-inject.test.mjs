import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, mock, test } from "node:test";

import handler, { entriesFor, isGroupSession, isSessionOf } from "../memory-index-inject/handler.js";
import { VERSIONS, capture, eventFrom } from "./fixtures.mjs";

let workspace;

function writeManifest(manifest) {
  mkdirSync(path.join(workspace, "memory"), { recursive: true });
  writeFileSync(path.join(workspace, "memory", ".memwarden-bootstrap.json"), JSON.stringify(manifest));
}

/** The SHA-256 of memory/ACTIVE_CONTEXT.md as it is now (null when absent), as the index reads it. */
function activeContextSha256() {
  const file = path.join(workspace, "memory", "ACTIVE_CONTEXT.md");
  return existsSync(file) ? createHash("sha256").update(readFileSync(file)).digest("hex") : null;
}

/**
 * A manifest as `memwarden index` writes it for the workspace as it is now: ACTIVE_CONTEXT.md
 * was written from `session`.
 */
function standardManifest(extra = {}, session = "agent:main:main") {
  const sha256 = activeContextSha256();
  return {
    version: 2,
    generator: "memwarden index",
    agents: ["main"],
    maxChars: 20000,
    totalMaxChars: 60000,
    groupChats: false,
    files: [
      { name: "memory/INDEX.md", path: "memory/INDEX.md", chars: 20 },
      { name: "memory/ACTIVE_CONTEXT.md", path: "memory/ACTIVE_CONTEXT.md", chars: 25, session, sha256 },
    ],
    ...extra,
  };
}

function writeMemory(name, text) {
  mkdirSync(path.join(workspace, "memory"), { recursive: true });
  writeFileSync(path.join(workspace, "memory", name), text);
}

beforeEach(() => {
  workspace = mkdtempSync(path.join(tmpdir(), "mw-inject-"));
});

afterEach(() => {
  rmSync(workspace, { recursive: true, force: true });
  mock.restoreAll();
});

for (const version of VERSIONS) {
  describe(`agent:bootstrap as captured from ${version}`, () => {
    test("with a manifest, INDEX.md and ACTIVE_CONTEXT.md are appended as full entries", async () => {
      const event = eventFrom(capture(version, "agent", "bootstrap"), { workspaceDir: workspace });
      writeMemory("INDEX.md", "# Memory index\nINDEX-BODY\n");
      writeMemory("ACTIVE_CONTEXT.md", "# Active context\nACTIVE-BODY\n");
      writeManifest(standardManifest({}, event.sessionKey));
      const before = event.context.bootstrapFiles.map((file) => ({ ...file }));

      await handler(event);

      const files = event.context.bootstrapFiles;
      assert.deepEqual(files.slice(0, before.length), before);
      assert.deepEqual(files.slice(before.length), [
        {
          name: "memory/INDEX.md",
          path: path.join(workspace, "memory", "INDEX.md"),
          content: "# Memory index\nINDEX-BODY\n",
          missing: false,
        },
        {
          name: "memory/ACTIVE_CONTEXT.md",
          path: path.join(workspace, "memory", "ACTIVE_CONTEXT.md"),
          content: "# Active context\nACTIVE-BODY\n",
          missing: false,
        },
      ]);
    });

    test("without a manifest, the bootstrap files are untouched and nothing is logged", async () => {
      writeMemory("INDEX.md", "# Memory index\n");
      const warn = mock.method(console, "warn", () => {});
      const event = eventFrom(capture(version, "agent", "bootstrap"), { workspaceDir: workspace });
      const before = structuredClone(event.context.bootstrapFiles);

      await handler(event);

      assert.deepEqual(event.context.bootstrapFiles, before);
      assert.equal(warn.mock.callCount(), 0);
    });
  });
}

test("a file the manifest names that does not exist yet is skipped", async () => {
  writeManifest(standardManifest({}, "agent:main:hooktest"));
  writeMemory("INDEX.md", "index only");
  const event = eventFrom(capture("openclaw-2026.9.6", "agent", "bootstrap"), { workspaceDir: workspace });

  const entries = await entriesFor(event);

  assert.deepEqual(
    entries.map((entry) => entry.name),
    ["memory/INDEX.md"],
  );
});

test("a corrupt manifest logs one line and leaves bootstrap untouched", async () => {
  mkdirSync(path.join(workspace, "memory"), { recursive: true });
  writeFileSync(path.join(workspace, "memory", ".memwarden-bootstrap.json"), "{not json");
  writeMemory("INDEX.md", "index");
  const warn = mock.method(console, "warn", () => {});
  const event = eventFrom(capture("openclaw-2026.9.6", "agent", "bootstrap"), { workspaceDir: workspace });
  const before = structuredClone(event.context.bootstrapFiles);

  await handler(event);

  assert.deepEqual(event.context.bootstrapFiles, before);
  assert.equal(warn.mock.callCount(), 1);
  assert.match(String(warn.mock.calls[0].arguments[0]), /^\[memory-index-inject\] bootstrap left unchanged/);
});

test("a manifest path leaving the workspace is refused and nothing is injected", async () => {
  writeManifest(standardManifest({ files: [{ name: "x", path: "../outside.md" }] }));
  const warn = mock.method(console, "warn", () => {});
  const event = eventFrom(capture("openclaw-2026.9.6", "agent", "bootstrap"), { workspaceDir: workspace });
  const count = event.context.bootstrapFiles.length;

  await handler(event);

  assert.equal(event.context.bootstrapFiles.length, count);
  assert.match(String(warn.mock.calls[0].arguments[0]), /leaves the workspace/);
});

test("a symlinked file is not followed: one line logged, nothing injected", async () => {
  writeManifest(standardManifest({}, "agent:main:hooktest"));
  writeMemory("INDEX.md", "index");
  const secret = path.join(workspace, "secret.txt");
  writeFileSync(secret, "do not inject");
  symlinkSync(secret, path.join(workspace, "memory", "ACTIVE_CONTEXT.md"));
  const warn = mock.method(console, "warn", () => {});
  const event = eventFrom(capture("openclaw-2026.9.6", "agent", "bootstrap"), { workspaceDir: workspace });
  const count = event.context.bootstrapFiles.length;

  await handler(event);

  assert.equal(event.context.bootstrapFiles.length, count);
  assert.equal(warn.mock.callCount(), 1);
});

test("group and channel sessions get nothing unless the manifest allows group chats", async () => {
  writeMemory("INDEX.md", "index");
  const event = eventFrom(capture("openclaw-2026.9.6", "agent", "bootstrap"), { workspaceDir: workspace });
  event.sessionKey = event.context.sessionKey = "agent:main:slack:channel:c0123";

  writeManifest(standardManifest());
  assert.deepEqual(await entriesFor(event), []);

  writeManifest(standardManifest({ groupChats: true }));
  assert.equal((await entriesFor(event)).length, 1);
});

test("a file already among the bootstrap files is not added twice", async () => {
  writeMemory("INDEX.md", "index");
  writeMemory("ACTIVE_CONTEXT.md", "active");
  const event = eventFrom(capture("openclaw-2026.9.6", "agent", "bootstrap"), { workspaceDir: workspace });
  writeManifest(standardManifest({}, event.sessionKey));
  event.context.bootstrapFiles.push({
    name: "ACTIVE_CONTEXT.md",
    path: path.join(workspace, "memory", "ACTIVE_CONTEXT.md"),
    content: "active",
    missing: false,
  });

  const entries = await entriesFor(event);

  assert.deepEqual(
    entries.map((entry) => entry.name),
    ["memory/INDEX.md"],
  );
});

test("events other than agent:bootstrap are ignored", async () => {
  writeManifest(standardManifest());
  writeMemory("INDEX.md", "index");
  const event = eventFrom(capture("openclaw-2026.9.6", "command", "reset"), { workspaceDir: workspace });

  await handler(event);

  assert.equal(event.context.bootstrapFiles, undefined);
});

test("a manifest of another version (1: without sessions) is refused", async () => {
  writeManifest(standardManifest({ version: 1 }));
  writeMemory("INDEX.md", "index");
  const warn = mock.method(console, "warn", () => {});
  const event = eventFrom(capture("openclaw-2026.9.6", "agent", "bootstrap"), { workspaceDir: workspace });
  const count = event.context.bootstrapFiles.length;

  await handler(event);

  assert.equal(event.context.bootstrapFiles.length, count);
  assert.match(String(warn.mock.calls[0].arguments[0]), /not a version 2 manifest/);
});

test("isGroupSession tells group and channel keys from direct and main ones", () => {
  assert.equal(isGroupSession("agent:main:telegram:group:-100123"), true);
  assert.equal(isGroupSession("agent:main:slack:channel:c1:thread:9"), true);
  assert.equal(isGroupSession("agent:main:main"), false);
  assert.equal(isGroupSession("agent:main:telegram:direct:42"), false);
  assert.equal(isGroupSession(undefined), false);
});

/** A bootstrap event of the 2026.9.6 capture, renamed to `sessionKey` (and `agentId`). */
function bootstrapOf(sessionKey, agentId = "main") {
  const event = eventFrom(capture("openclaw-2026.9.6", "agent", "bootstrap"), { workspaceDir: workspace });
  event.sessionKey = event.context.sessionKey = sessionKey;
  event.context.agentId = agentId;
  return event;
}

async function injectedNames(event) {
  return (await entriesFor(event)).map((entry) => entry.name);
}

test("ACTIVE_CONTEXT.md written from one peer's DM is not injected into another peer's DM", async () => {
  writeMemory("INDEX.md", "index");
  writeMemory("ACTIVE_CONTEXT.md", "what peer 111 said");
  writeManifest(standardManifest({}, "agent:main:telegram:direct:111"));

  assert.deepEqual(await injectedNames(bootstrapOf("agent:main:telegram:direct:222")), ["memory/INDEX.md"]);
  assert.deepEqual(await injectedNames(bootstrapOf("agent:main:main")), ["memory/INDEX.md"]);
  assert.deepEqual(await injectedNames(bootstrapOf("Agent:Main:Telegram:Direct:111")), [
    "memory/INDEX.md",
    "memory/ACTIVE_CONTEXT.md",
  ]);
});

test("ACTIVE_CONTEXT.md of the main session reaches that agent's main session only", async () => {
  writeMemory("INDEX.md", "index");
  writeMemory("ACTIVE_CONTEXT.md", "main conversation");
  writeManifest(standardManifest({}, "agent:main:main"));
  const both = ["memory/INDEX.md", "memory/ACTIVE_CONTEXT.md"];

  assert.deepEqual(await injectedNames(bootstrapOf("agent:main:main")), both);
  assert.deepEqual(await injectedNames(bootstrapOf("main", "main")), both);
  assert.deepEqual(await injectedNames(bootstrapOf("main", "ops")), ["memory/INDEX.md"]);
  assert.deepEqual(await injectedNames(bootstrapOf("agent:ops:main", "ops")), ["memory/INDEX.md"]);
  assert.deepEqual(await injectedNames(bootstrapOf("agent:main:slack:direct:u1")), ["memory/INDEX.md"]);
});

test("ACTIVE_CONTEXT.md whose session is unknown (null) is injected into no session", async () => {
  writeMemory("INDEX.md", "index");
  writeMemory("ACTIVE_CONTEXT.md", "from nobody knows where");
  writeManifest(standardManifest({}, null));

  assert.deepEqual(await injectedNames(bootstrapOf("agent:main:main")), ["memory/INDEX.md"]);
});

test("isSessionOf compares lower-cased keys and never matches without a key", () => {
  assert.equal(isSessionOf("agent:main:main", { sessionKey: "AGENT:MAIN:MAIN" }), true);
  assert.equal(isSessionOf("agent:main:main", { sessionKey: "main", context: { agentId: "Main" } }), true);
  assert.equal(isSessionOf("agent:main:main", { sessionKey: "main", context: {} }), false);
  assert.equal(isSessionOf("agent:main:work", { sessionKey: "main", context: { agentId: "main" } }), false);
  assert.equal(isSessionOf("agent:main:main", { context: {} }), false);
  assert.equal(isSessionOf(undefined, { sessionKey: "agent:main:main" }), false);
  assert.equal(isSessionOf("", { sessionKey: "" }), false);
});

test("ACTIVE_CONTEXT.md rewritten since the manifest (from another session) is not injected", async () => {
  writeMemory("INDEX.md", "index");
  writeMemory("ACTIVE_CONTEXT.md", "what peer 111 said");
  writeManifest(standardManifest({}, "agent:main:telegram:direct:111"));
  const event = bootstrapOf("agent:main:telegram:direct:111");
  assert.deepEqual(await injectedNames(event), ["memory/INDEX.md", "memory/ACTIVE_CONTEXT.md"]);

  writeMemory("ACTIVE_CONTEXT.md", "what peer 222 said"); // a checkpoint of 222's DM; no index yet

  assert.deepEqual(await injectedNames(event), ["memory/INDEX.md"]);
});

test("ACTIVE_CONTEXT.md of a manifest without its sha256 is injected into no session", async () => {
  writeMemory("INDEX.md", "index");
  writeMemory("ACTIVE_CONTEXT.md", "main conversation");
  const manifest = standardManifest({}, "agent:main:main");
  delete manifest.files[1].sha256;
  writeManifest(manifest);

  assert.deepEqual(await injectedNames(bootstrapOf("agent:main:main")), ["memory/INDEX.md"]);
});

/** The manifest entry memwarden writes for a conversation's handoff, as the file is now. */
function handoffEntry(relative, session) {
  const bytes = readFileSync(path.join(workspace, "memory", relative));
  return {
    name: `memory/${relative}`,
    path: `memory/${relative}`,
    chars: bytes.length,
    session,
    sha256: createHash("sha256").update(bytes).digest("hex"),
  };
}

function handoffManifest(files) {
  return { version: 2, generator: "memwarden", agents: ["main"], maxChars: 20000, totalMaxChars: 60000, groupChats: false, files };
}

test("each conversation gets its own handoff and never another peer's, with or without INDEX.md", async () => {
  mkdirSync(path.join(workspace, "memory", "sessions"), { recursive: true });
  writeMemory("ACTIVE_CONTEXT.md", "main: plan the launch");
  writeMemory("sessions/main.telegram.direct.111.md", "peer 111: book the flights");
  writeMemory("sessions/main.telegram.direct.222.md", "peer 222: renew the passport");
  const files = [
    handoffEntry("ACTIVE_CONTEXT.md", "agent:main:main"),
    handoffEntry("sessions/main.telegram.direct.111.md", "agent:main:telegram:direct:111"),
    handoffEntry("sessions/main.telegram.direct.222.md", "agent:main:telegram:direct:222"),
  ];
  writeManifest(handoffManifest(files)); // a small memory folder: no INDEX.md listed

  const contents = async (key) => (await entriesFor(bootstrapOf(key))).map((entry) => entry.content);

  assert.deepEqual(await contents("agent:main:main"), ["main: plan the launch"]);
  assert.deepEqual(await contents("agent:main:telegram:direct:111"), ["peer 111: book the flights"]);
  assert.deepEqual(await contents("agent:main:telegram:direct:222"), ["peer 222: renew the passport"]);
  assert.deepEqual(await contents("agent:main:telegram:direct:333"), []);

  writeMemory("INDEX.md", "index");
  writeManifest(handoffManifest([...files, { name: "memory/INDEX.md", path: "memory/INDEX.md", chars: 5 }]));
  assert.deepEqual(await contents("agent:main:telegram:direct:111"), ["peer 111: book the flights", "index"]);
  assert.deepEqual(await contents("agent:main:telegram:direct:333"), ["index"]);
});

test("without a manifest, handoffs on disk are not injected and nothing is logged", async () => {
  mkdirSync(path.join(workspace, "memory", "sessions"), { recursive: true });
  writeMemory("ACTIVE_CONTEXT.md", "> - session: `agent:main:main`\nmain");
  writeMemory("sessions/main.telegram.direct.111.md", "> - session: `agent:main:telegram:direct:111`\n");
  const warn = mock.method(console, "warn", () => {});

  for (const key of ["agent:main:main", "agent:main:telegram:direct:111"]) {
    const event = bootstrapOf(key);
    const before = structuredClone(event.context.bootstrapFiles);
    await handler(event);
    assert.deepEqual(event.context.bootstrapFiles, before);
  }
  assert.equal(warn.mock.callCount(), 0);
});

test("a workspace without a memory folder at all leaves the bootstrap untouched, silently", async () => {
  const warn = mock.method(console, "warn", () => {});
  const event = bootstrapOf("agent:main:main");
  const before = structuredClone(event.context.bootstrapFiles);

  await handler(event);

  assert.deepEqual(event.context.bootstrapFiles, before);
  assert.equal(warn.mock.callCount(), 0);
});

test("a group's own handoff follows the manifest's groupChats", async () => {
  mkdirSync(path.join(workspace, "memory", "sessions"), { recursive: true });
  writeMemory("sessions/main.telegram.group.-100.md", "the group's plans");
  const files = [handoffEntry("sessions/main.telegram.group.-100.md", "agent:main:telegram:group:-100")];
  const event = bootstrapOf("agent:main:telegram:group:-100");

  writeManifest(handoffManifest(files));
  assert.deepEqual(await entriesFor(event), []);

  writeManifest({ ...handoffManifest(files), groupChats: true });
  assert.deepEqual((await entriesFor(event)).map((entry) => entry.content), ["the group's plans"]);
});
