import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, mock, test } from "node:test";

import handler, {
  bootstrapCaps,
  budgetOf,
  canonicalKey,
  entriesFor,
  handoffSession,
  isGroupSession,
  isSessionOf,
  receiptName,
  recordDelivery,
  sessionKeyOf,
} from "../memory-index-inject/handler.js";
import { VERSIONS, capture, eventFrom } from "./fixtures.mjs";

let workspace;

function writeManifest(manifest) {
  mkdirSync(path.join(workspace, "memory"), { recursive: true });
  writeFileSync(path.join(workspace, "memory", ".memwarden-bootstrap.json"), JSON.stringify(manifest));
}

function writeMemory(name, text) {
  mkdirSync(path.dirname(path.join(workspace, "memory", name)), { recursive: true });
  writeFileSync(path.join(workspace, "memory", name), text);
}

/** A handoff as the checkpoint writes it: its provenance block names `session`. */
function handoffText(session, body) {
  return `# Conversation Handoff\n\n> Written by memwarden checkpoint.\n> - session: \`${session}\` (id \`x\`)\n\n${body}\n`;
}

/** Write a conversation's handoff (`relative` to memory/) and return its manifest entry. */
function writeHandoff(relative, session, body) {
  writeMemory(relative, handoffText(session, body));
  return { name: `memory/${relative}`, path: `memory/${relative}`, session };
}

const INDEX_ENTRY = { name: "memory/INDEX.md", path: "memory/INDEX.md", chars: 20 };

/** A manifest as memwarden writes it: the handoffs first, then INDEX.md when listed. */
function manifestOf(files, extra = {}) {
  return { version: 3, generator: "memwarden", agents: ["main"], maxChars: 20000, totalMaxChars: 60000, groupChats: false, files, ...extra };
}

/** ACTIVE_CONTEXT.md of `session` and INDEX.md, and the manifest that lists both. */
function standardMemory(session = "agent:main:main", extra = {}) {
  writeMemory("INDEX.md", "# Memory index\nINDEX-BODY\n");
  const active = writeHandoff("ACTIVE_CONTEXT.md", session, "ACTIVE-BODY");
  writeManifest(manifestOf([active, INDEX_ENTRY], extra));
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
    test("with a manifest, the session's handoff then INDEX.md are appended as full entries", async () => {
      const event = eventFrom(capture(version, "agent", "bootstrap"), { workspaceDir: workspace });
      standardMemory(event.sessionKey);
      const before = event.context.bootstrapFiles.map((file) => ({ ...file }));

      await handler(event);

      const files = event.context.bootstrapFiles;
      assert.deepEqual(files.slice(0, before.length), before);
      assert.deepEqual(files.slice(before.length), [
        {
          name: "memory/ACTIVE_CONTEXT.md",
          path: path.join(workspace, "memory", "ACTIVE_CONTEXT.md"),
          content: handoffText(event.sessionKey, "ACTIVE-BODY"),
          missing: false,
        },
        {
          name: "memory/INDEX.md",
          path: path.join(workspace, "memory", "INDEX.md"),
          content: "# Memory index\nINDEX-BODY\n",
          missing: false,
        },
      ]);
    });

    test("without a manifest, the bootstrap files are untouched and nothing is logged", async () => {
      writeMemory("INDEX.md", "# Memory index\n");

      await expectUntouched(eventFrom(capture(version, "agent", "bootstrap"), { workspaceDir: workspace }));
    });
  });
}

/** A bootstrap event of the 2026.9.6 capture, renamed to `sessionKey` (and `agentId`). */
/** Run the hook on `event`: the bootstrap files must stay as they were, with one log line
 * matching `warning`, or none when it is null. */
async function expectUntouched(event, warning = null) {
  const warn = mock.method(console, "warn", () => {});
  const before = structuredClone(event.context.bootstrapFiles);
  await handler(event);
  assert.deepEqual(event.context.bootstrapFiles, before);
  assert.equal(warn.mock.callCount(), warning ? 1 : 0);
  if (warning) assert.match(String(warn.mock.calls[0].arguments[0]), warning);
}

function bootstrapOf(sessionKey, agentId = "main") {
  const event = eventFrom(capture("openclaw-2026.9.6", "agent", "bootstrap"), { workspaceDir: workspace });
  event.sessionKey = event.context.sessionKey = sessionKey;
  event.context.agentId = agentId;
  return event;
}

async function injectedNames(event) {
  return (await entriesFor(event)).map((entry) => entry.name);
}

test("a file the manifest names that does not exist (any more) is skipped", async () => {
  writeManifest(manifestOf([{ name: "memory/ACTIVE_CONTEXT.md", path: "memory/ACTIVE_CONTEXT.md", session: "agent:main:main" }, INDEX_ENTRY]));
  writeMemory("INDEX.md", "index only");

  assert.deepEqual(await injectedNames(bootstrapOf("agent:main:main")), ["memory/INDEX.md"]);
});

test("a corrupt manifest logs one line and leaves bootstrap untouched", async () => {
  mkdirSync(path.join(workspace, "memory"), { recursive: true });
  writeFileSync(path.join(workspace, "memory", ".memwarden-bootstrap.json"), "{not json");
  writeMemory("INDEX.md", "index");

  await expectUntouched(bootstrapOf("agent:main:main"), /^\[memory-index-inject\] bootstrap left unchanged/);
});

test("a manifest path leaving the workspace is refused and nothing is injected", async () => {
  writeManifest(manifestOf([{ name: "x", path: "../outside.md" }]));
  const warn = mock.method(console, "warn", () => {});
  const event = bootstrapOf("agent:main:main");
  const count = event.context.bootstrapFiles.length;

  await handler(event);

  assert.equal(event.context.bootstrapFiles.length, count);
  assert.match(String(warn.mock.calls[0].arguments[0]), /leaves the workspace/);
});

test("a symlinked file is not followed: one line logged, nothing injected", async () => {
  writeMemory("INDEX.md", "index");
  const secret = path.join(workspace, "secret.md");
  writeFileSync(secret, handoffText("agent:main:main", "do not inject"));
  symlinkSync(secret, path.join(workspace, "memory", "ACTIVE_CONTEXT.md"));
  writeManifest(manifestOf([{ name: "memory/ACTIVE_CONTEXT.md", path: "memory/ACTIVE_CONTEXT.md", session: "agent:main:main" }, INDEX_ENTRY]));
  const warn = mock.method(console, "warn", () => {});
  const event = bootstrapOf("agent:main:main");
  const count = event.context.bootstrapFiles.length;

  await handler(event);

  assert.equal(event.context.bootstrapFiles.length, count);
  assert.equal(warn.mock.callCount(), 1);
  const line = String(warn.mock.calls[0].arguments[0]);
  assert.match(line, /memory\/ACTIVE_CONTEXT\.md: is a symlink/);
  assert.doesNotMatch(line, /ELOOP|too many symbolic links/);
});

test("a file under a symlinked folder leading out of the workspace is not read", async () => {
  const outside = mkdtempSync(path.join(tmpdir(), "mw-outside-"));
  try {
    writeFileSync(path.join(outside, "x.md"), handoffText("agent:main:main", "OUTSIDE-SECRET"));
    writeMemory("INDEX.md", "index");
    symlinkSync(outside, path.join(workspace, "memory", "sessions"), "dir");
    const handoff = { name: "memory/sessions/x.md", path: "memory/sessions/x.md", session: "agent:main:main" };
    writeManifest(manifestOf([handoff, INDEX_ENTRY]));

    await expectUntouched(
      bootstrapOf("agent:main:main"),
      /memory\/sessions\/x\.md: leads out of the workspace through a symlink/,
    );
  } finally {
    rmSync(outside, { recursive: true, force: true });
  }
});

test("a symlinked folder inside the workspace, and a workspace reached through a link, are read", async () => {
  const shared = path.join(workspace, "shared-sessions");
  mkdirSync(shared);
  writeFileSync(path.join(shared, "x.md"), handoffText("agent:main:main", "INSIDE"));
  mkdirSync(path.join(workspace, "memory"), { recursive: true });
  symlinkSync(shared, path.join(workspace, "memory", "sessions"), "dir");
  writeManifest(manifestOf([{ name: "memory/sessions/x.md", path: "memory/sessions/x.md", session: "agent:main:main" }]));
  const linked = `${workspace}-link`;
  symlinkSync(workspace, linked, "dir");
  try {
    const event = bootstrapOf("agent:main:main");
    event.context.workspaceDir = linked;

    assert.deepEqual(await injectedNames(event), ["memory/sessions/x.md"]);
  } finally {
    rmSync(linked);
  }
});

test("group and channel sessions get nothing unless the manifest allows group chats", async () => {
  const event = bootstrapOf("agent:main:slack:channel:c0123");

  standardMemory();
  assert.deepEqual(await entriesFor(event), []);

  standardMemory("agent:main:main", { groupChats: true });
  assert.deepEqual(await injectedNames(event), ["memory/INDEX.md"]);
});

test("a group's own handoff follows the manifest's groupChats", async () => {
  const files = [writeHandoff("sessions/main.telegram.group.-100.md", "agent:main:telegram:group:-100", "the group's plans")];
  const event = bootstrapOf("agent:main:telegram:group:-100");

  writeManifest(manifestOf(files));
  assert.deepEqual(await entriesFor(event), []);

  writeManifest(manifestOf(files, { groupChats: true }));
  assert.deepEqual(await injectedNames(event), ["memory/sessions/main.telegram.group.-100.md"]);
});

test("a file already among the bootstrap files is not added twice", async () => {
  standardMemory();
  const event = bootstrapOf("agent:main:main");
  event.context.bootstrapFiles.push({
    name: "ACTIVE_CONTEXT.md",
    path: path.join(workspace, "memory", "ACTIVE_CONTEXT.md"),
    content: "active",
    missing: false,
  });

  assert.deepEqual(await injectedNames(event), ["memory/INDEX.md"]);
});

test("events other than agent:bootstrap are ignored", async () => {
  standardMemory();
  const event = eventFrom(capture("openclaw-2026.9.6", "command", "reset"), { workspaceDir: workspace });

  await handler(event);

  assert.equal(event.context.bootstrapFiles, undefined);
});

for (const version of [1, 2]) {
  test(`a manifest of version ${version} is refused, nothing is injected`, async () => {
    standardMemory("agent:main:main", { version });
    const warn = mock.method(console, "warn", () => {});
    const event = bootstrapOf("agent:main:main");
    const count = event.context.bootstrapFiles.length;

    await handler(event);

    assert.equal(event.context.bootstrapFiles.length, count);
    assert.match(String(warn.mock.calls[0].arguments[0]), /not a version 3 manifest/);
  });
}

test("isGroupSession tells group and channel keys from direct and main ones", () => {
  assert.equal(isGroupSession("agent:main:telegram:group:-100123"), true);
  assert.equal(isGroupSession("agent:main:slack:channel:c1:thread:9"), true);
  assert.equal(isGroupSession("agent:main:main"), false);
  assert.equal(isGroupSession("agent:main:telegram:direct:42"), false);
  assert.equal(isGroupSession(undefined), false);
});

test("a peer's handoff is never injected into another peer's session, nor into main", async () => {
  writeMemory("INDEX.md", "index");
  writeManifest(manifestOf([writeHandoff("sessions/main.telegram.direct.111.md", "agent:main:telegram:direct:111", "peer 111"), INDEX_ENTRY]));

  assert.deepEqual(await injectedNames(bootstrapOf("agent:main:telegram:direct:222")), ["memory/INDEX.md"]);
  assert.deepEqual(await injectedNames(bootstrapOf("agent:main:main")), ["memory/INDEX.md"]);
  assert.deepEqual(await injectedNames(bootstrapOf("Agent:Main:Telegram:Direct:111")), [
    "memory/sessions/main.telegram.direct.111.md",
    "memory/INDEX.md",
  ]);
});

test("ACTIVE_CONTEXT.md of the main session reaches that agent's main session only", async () => {
  standardMemory("agent:main:main");
  const both = ["memory/ACTIVE_CONTEXT.md", "memory/INDEX.md"];

  assert.deepEqual(await injectedNames(bootstrapOf("agent:main:main")), both);
  assert.deepEqual(await injectedNames(bootstrapOf("main", "main")), both);
  assert.deepEqual(await injectedNames(bootstrapOf("main", "ops")), ["memory/INDEX.md"]);
  assert.deepEqual(await injectedNames(bootstrapOf("agent:ops:main", "ops")), ["memory/INDEX.md"]);
  assert.deepEqual(await injectedNames(bootstrapOf("agent:main:slack:direct:u1")), ["memory/INDEX.md"]);
});

test("a handoff whose manifest session is unknown (null) is injected into no session", async () => {
  writeMemory("INDEX.md", "index");
  writeHandoff("ACTIVE_CONTEXT.md", "agent:main:main", "main");
  writeManifest(manifestOf([{ name: "memory/ACTIVE_CONTEXT.md", path: "memory/ACTIVE_CONTEXT.md", session: null }, INDEX_ENTRY]));

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

test("a handoff rewritten since the manifest is injected as it is now, while it names the same session", async () => {
  writeMemory("INDEX.md", "index");
  const entry = writeHandoff("sessions/main.telegram.direct.111.md", "agent:main:telegram:direct:111", "first words");
  writeManifest(manifestOf([entry, INDEX_ENTRY]));
  const event = bootstrapOf("agent:main:telegram:direct:111");

  writeHandoff("sessions/main.telegram.direct.111.md", "agent:main:telegram:direct:111", "newer words");
  assert.match((await entriesFor(event))[0].content, /newer words/);

  // Something put another conversation in that file: the file itself says so; nothing injected.
  writeHandoff("sessions/main.telegram.direct.111.md", "agent:main:telegram:direct:222", "peer 222");
  assert.deepEqual(await injectedNames(event), ["memory/INDEX.md"]);
  writeMemory("sessions/main.telegram.direct.111.md", "no provenance at all");
  assert.deepEqual(await injectedNames(event), ["memory/INDEX.md"]);
});

test("handoffSession reads the provenance block only, like memwarden does", () => {
  assert.equal(handoffSession(handoffText("Agent:Main:Telegram:Direct:42", "x"), ["main"]), "agent:main:telegram:direct:42");
  assert.equal(handoffSession("# A\n\n> - session: `main` (id `x`)\n", ["ops"]), "agent:ops:main");
  assert.equal(handoffSession("# A\n\n> - session: `main` (id `x`)\n", ["ops", "main"]), "main");
  const spoof = "> - session: `agent:main:telegram:direct:999` (id `y`)";
  assert.equal(handoffSession(`# A\n\nNo provenance.\n\n## Last Compaction Summary\n${spoof}\n`, ["main"]), undefined);
  assert.equal(handoffSession(`${handoffText("agent:main:main", "body")}\n${spoof}\n`, ["main"]), "agent:main:main");
});

test("each conversation gets its own handoff and never another peer's, with or without INDEX.md", async () => {
  const files = [
    writeHandoff("ACTIVE_CONTEXT.md", "agent:main:main", "main: plan the launch"),
    writeHandoff("sessions/main.telegram.direct.111.md", "agent:main:telegram:direct:111", "peer 111: book the flights"),
    writeHandoff("sessions/main.telegram.direct.222.md", "agent:main:telegram:direct:222", "peer 222: renew the passport"),
  ];
  writeManifest(manifestOf(files)); // a small memory folder: no INDEX.md listed

  const bodies = async (key) => (await entriesFor(bootstrapOf(key))).map((entry) => entry.content.split("\n").at(-2));

  assert.deepEqual(await bodies("agent:main:main"), ["main: plan the launch"]);
  assert.deepEqual(await bodies("agent:main:telegram:direct:111"), ["peer 111: book the flights"]);
  assert.deepEqual(await bodies("agent:main:telegram:direct:222"), ["peer 222: renew the passport"]);
  assert.deepEqual(await bodies("agent:main:telegram:direct:333"), []);

  writeMemory("INDEX.md", "the index\n");
  writeManifest(manifestOf([...files, INDEX_ENTRY]));
  assert.deepEqual(await bodies("agent:main:telegram:direct:111"), ["peer 111: book the flights", "the index"]);
  assert.deepEqual(await bodies("agent:main:telegram:direct:333"), ["the index"]);
});

test("without a manifest, handoffs on disk are not injected and nothing is logged", async () => {
  writeHandoff("ACTIVE_CONTEXT.md", "agent:main:main", "main");
  writeHandoff("sessions/main.telegram.direct.111.md", "agent:main:telegram:direct:111", "peer");
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
  await expectUntouched(bootstrapOf("agent:main:main"));
});

test("the provenance line names a key with a space as the checkpoint writes it", () => {
  const text = "# Conversation Handoff\n\n> - session: `agent:x:discord:channel:my room` (id `1`)\n";
  assert.equal(handoffSession(text, ["x"]), "agent:x:discord:channel:my room");
});

describe("delivery receipts", () => {
  let folder;
  let settings;

  beforeEach(() => {
    folder = mkdtempSync(path.join(tmpdir(), "mw-deliveries-"));
    settings = path.join(folder, "memwarden.json");
    writeFileSync(settings, JSON.stringify({ executable: "/usr/bin/true", deliveries: path.join(folder, "deliveries") }));
  });

  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  function receiptOf(key) {
    return JSON.parse(readFileSync(path.join(folder, "deliveries", receiptName(key)), "utf8"));
  }

  async function deliver(event) {
    const before = [...event.context.bootstrapFiles];
    const entries = await entriesFor(event);
    await recordDelivery(event, entries, before, settings);
    return receiptOf(sessionKeyOf(event));
  }

  for (const version of VERSIONS) {
    test(`${version}: the receipt says the session's handoff went in whole, and what else`, async () => {
      const event = eventFrom(capture(version, "agent", "bootstrap"), { workspaceDir: workspace });
      standardMemory(event.sessionKey);

      const receipt = await deliver(event);

      assert.equal(receipt.version, 1);
      assert.equal(receipt.sessionKey, event.sessionKey.toLowerCase());
      const [delivery] = receipt.deliveries;
      assert.equal(delivery.handoff, "whole");
      assert.ok(Math.abs(Date.parse(delivery.at) - Date.now()) < 60_000);
      assert.deepEqual(
        delivery.files.map(({ path: name, handoff, cut }) => [name, handoff, cut]),
        [
          [path.join("memory", "ACTIVE_CONTEXT.md"), true, false],
          [path.join("memory", "INDEX.md"), false, false],
        ],
      );
      assert.equal(delivery.files[0].chars, handoffText(event.sessionKey, "ACTIVE-BODY").trimEnd().length);
    });
  }

  test("a handoff past what the gateway's files leave of the total cap is recorded as cut", async () => {
    const event = bootstrapOf("agent:main:main");
    event.context.cfg = { agents: { defaults: { bootstrapMaxChars: 5000, bootstrapTotalMaxChars: 6000 } } };
    event.context.bootstrapFiles = [{ name: "AGENTS.md", path: "/w/AGENTS.md", content: "a".repeat(5500), missing: false }];
    writeManifest(manifestOf([writeHandoff("ACTIVE_CONTEXT.md", "agent:main:main", "b".repeat(2000))]));

    const receipt = await deliver(event);

    assert.equal(receipt.deliveries[0].handoff, "cut");
  });

  test("a session whose handoff the manifest does not list gets a receipt that says none", async () => {
    standardMemory("agent:main:main");

    const receipt = await deliver(bootstrapOf("agent:main:telegram:direct:7"));

    assert.equal(receipt.deliveries[0].handoff, "none");
  });

  test("the receipt keeps the last ten deliveries, and automation sessions get none", async () => {
    standardMemory("agent:main:main");
    for (let turn = 0; turn < 12; turn += 1) await deliver(bootstrapOf("agent:main:main"));

    assert.equal(receiptOf("agent:main:main").deliveries.length, 10);
    const cron = bootstrapOf("agent:main:cron:nightly:run:42");
    await recordDelivery(cron, await entriesFor(cron), [], settings);
    assert.throws(() => receiptOf("agent:main:cron:nightly:run:42"), /ENOENT/);
  });

  test("bootstrap caps are the agent's own, else the defaults, else the gateway's", () => {
    const cfg = {
      agents: { defaults: { bootstrapMaxChars: 9000 }, list: [{ id: "Ops", bootstrapTotalMaxChars: 30000 }] },
    };
    assert.deepEqual(bootstrapCaps(cfg, "ops"), { maxChars: 9000, totalMaxChars: 30000 });
    assert.deepEqual(bootstrapCaps({}, "main"), { maxChars: 20000, totalMaxChars: 60000 });
    // An agent's own value that is not a positive number is the gateway's default, not the
    // defaults' value (resolveBootstrapCharLimit).
    const own = { agents: { defaults: { bootstrapTotalMaxChars: 30000 }, entries: { main: { bootstrapTotalMaxChars: 0 } } } };
    assert.deepEqual(bootstrapCaps(own, "main"), { maxChars: 20000, totalMaxChars: 60000 });
  });

  test("an AGENTS.md past its cap, which the gateway digests, is not taken for the whole cap", () => {
    const agents = { name: "AGENTS.md", path: "/w/AGENTS.md", content: "a".repeat(30000), missing: false };
    const handoff = { content: "h".repeat(2500) };
    const caps = { maxChars: 20000, totalMaxChars: 22000 };

    assert.deepEqual(budgetOf([agents], [handoff], caps), [{ chars: 2500, cut: false, leftOut: false }]);
    assert.deepEqual(budgetOf([agents], [{ content: "h".repeat(3500) }], caps), [
      { chars: 3500, cut: true, leftOut: false },
    ]);
  });

  test("a legacy `main` event files its receipt under the agent's main session key", async () => {
    const event = bootstrapOf("main");
    writeManifest(manifestOf([writeHandoff("ACTIVE_CONTEXT.md", "agent:main:main", "body")]));

    await recordDelivery(event, await entriesFor(event), [], settings);

    assert.equal(receiptOf("agent:main:main").deliveries[0].handoff, "whole");
    assert.equal(canonicalKey("main", "ops"), "agent:ops:main");
  });

  test("the first receipt says since when receipts are written, and later ones keep it", async () => {
    standardMemory("agent:main:main");
    await deliver(bootstrapOf("agent:main:main"));
    const since = readFileSync(path.join(folder, "deliveries", ".since"), "utf8");
    await deliver(bootstrapOf("agent:main:main"));

    assert.ok(Math.abs(Date.parse(since.trim()) - Date.now()) < 60_000);
    assert.equal(readFileSync(path.join(folder, "deliveries", ".since"), "utf8"), since);
  });

  test("without memwarden.json beside the hook, no receipt is written", async () => {
    standardMemory("agent:main:main");
    const event = bootstrapOf("agent:main:main");
    await recordDelivery(event, await entriesFor(event), [], path.join(folder, "missing.json"));
    assert.throws(() => receiptOf("agent:main:main"), /ENOENT/);
  });
});
