import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, mock, test } from "node:test";

import handler, { entriesFor, isGroupSession } from "../memory-index-inject/handler.js";
import { VERSIONS, capture, eventFrom } from "./fixtures.mjs";

let workspace;

function writeManifest(manifest) {
  mkdirSync(path.join(workspace, "memory"), { recursive: true });
  writeFileSync(path.join(workspace, "memory", ".memwarden-bootstrap.json"), JSON.stringify(manifest));
}

function standardManifest(extra = {}) {
  return {
    version: 1,
    generator: "memwarden index",
    agents: ["main"],
    maxChars: 20000,
    totalMaxChars: 60000,
    groupChats: false,
    files: [
      { name: "memory/INDEX.md", path: "memory/INDEX.md", chars: 20 },
      { name: "memory/ACTIVE_CONTEXT.md", path: "memory/ACTIVE_CONTEXT.md", chars: 25 },
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
      writeManifest(standardManifest());
      writeMemory("INDEX.md", "# Memory index\nINDEX-BODY\n");
      writeMemory("ACTIVE_CONTEXT.md", "# Active context\nACTIVE-BODY\n");
      const event = eventFrom(capture(version, "agent", "bootstrap"), { workspaceDir: workspace });
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
  writeManifest(standardManifest());
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
  writeManifest(standardManifest());
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
  writeManifest(standardManifest());
  writeMemory("INDEX.md", "index");
  writeMemory("ACTIVE_CONTEXT.md", "active");
  const event = eventFrom(capture("openclaw-2026.9.6", "agent", "bootstrap"), { workspaceDir: workspace });
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

test("a manifest of another version is refused", async () => {
  writeManifest(standardManifest({ version: 2 }));
  writeMemory("INDEX.md", "index");
  const warn = mock.method(console, "warn", () => {});
  const event = eventFrom(capture("openclaw-2026.9.6", "agent", "bootstrap"), { workspaceDir: workspace });
  const count = event.context.bootstrapFiles.length;

  await handler(event);

  assert.equal(event.context.bootstrapFiles.length, count);
  assert.match(String(warn.mock.calls[0].arguments[0]), /not a version 1 manifest/);
});

test("isGroupSession tells group and channel keys from direct and main ones", () => {
  assert.equal(isGroupSession("agent:main:telegram:group:-100123"), true);
  assert.equal(isGroupSession("agent:main:slack:channel:c1:thread:9"), true);
  assert.equal(isGroupSession("agent:main:main"), false);
  assert.equal(isGroupSession("agent:main:telegram:direct:42"), false);
  assert.equal(isGroupSession(undefined), false);
});
