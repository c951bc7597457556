import assert from "node:assert/strict";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, mock, test } from "node:test";

import { agentIdOf, checkpointFor, commandFor, environmentFor } from "../session-summary/handler.js";
import { VERSIONS, capture, eventFrom } from "./fixtures.mjs";

const SOURCE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "session-summary");
const SETTINGS = { executable: "/opt/memwarden/bin/memwarden", config: "/etc/mw.toml", stateDir: "/srv/state" };
let folder;

beforeEach(() => {
  folder = mkdtempSync(path.join(tmpdir(), "mw-summary-"));
});

afterEach(() => {
  rmSync(folder, { recursive: true, force: true });
  mock.restoreAll();
});

/** Install the hook into a temp folder as `memwarden install hooks` does; return its handler. */
async function installedHandler(settings) {
  const hookDir = path.join(folder, "hooks", "session-summary");
  mkdirSync(hookDir, { recursive: true });
  for (const name of ["HOOK.md", "handler.js"]) copyFileSync(path.join(SOURCE, name), path.join(hookDir, name));
  if (settings) writeFileSync(path.join(hookDir, "memwarden.json"), JSON.stringify(settings));
  const module = await import(pathToFileURL(path.join(hookDir, "handler.js")).href);
  return module.default;
}

async function waitFor(file, lines = 1) {
  const read = () => (existsSync(file) ? readFileSync(file, "utf8").trim().split("\n") : []);
  for (let attempt = 0; attempt < 200 && read().length < lines; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return read();
}

for (const version of VERSIONS) {
  describe(`command:reset as captured from ${version}`, () => {
    test("summarize is given the agent, the key, both ids and the event time", () => {
      const event = eventFrom(capture(version, "command", "reset"), {
        workspaceDir: "/w",
        sessionEntryId: "new-id",
        previousSessionEntryId: "old-id",
      });

      const args = commandFor(event, SETTINGS);

      assert.deepEqual(args, [
        "--config=/etc/mw.toml",
        "--state-dir=/srv/state",
        "-q",
        "summarize",
        `--session-key=${event.sessionKey}`,
        "--event=command:reset",
        "--agent=main",
        "--session-id=new-id",
        "--previous-session-id=old-id",
        `--event-time=${event.timestamp.toISOString()}`,
      ]);
    });

    test("no argument carries the gateway config or its token", () => {
      const event = eventFrom(capture(version, "command", "reset"), { workspaceDir: "/w" });

      const joined = commandFor(event, SETTINGS).join(" ");

      assert.doesNotMatch(joined, /secret-gateway-token|cfg/);
    });
  });
}

test("command:new from 2026.9.6 runs summarize with --event=command:new", () => {
  const event = eventFrom(capture("openclaw-2026.9.6", "command", "new"), { workspaceDir: "/w" });

  assert.ok(commandFor(event, SETTINGS).includes("--event=command:new"));
});

test("session:compact:before runs a checkpoint of the session, and no summary", () => {
  const event = eventFrom(capture("openclaw-2026.9.6", "session", "compact:before"));

  assert.deepEqual(checkpointFor(event, { executable: "/x/memwarden" }), [
    "-q",
    "checkpoint",
    "--session=agent:main:main",
  ]);
  assert.equal(commandFor(event, SETTINGS), null);
});

for (const version of VERSIONS) {
  test(`command:reset from ${version} runs a checkpoint of the session first`, () => {
    const event = eventFrom(capture(version, "command", "reset"), { workspaceDir: "/w" });

    assert.deepEqual(checkpointFor(event, SETTINGS), [
      "--config=/etc/mw.toml",
      "--state-dir=/srv/state",
      "-q",
      "checkpoint",
      `--session=${event.sessionKey}`,
    ]);
  });
}

test("events the hook does not handle give no command", () => {
  const event = eventFrom(capture("openclaw-2026.9.6", "agent", "bootstrap"), { workspaceDir: "/w" });

  assert.equal(commandFor(event, SETTINGS), null);
  assert.equal(checkpointFor(event, SETTINGS), null);
});

test("the agent id comes from the context, else from the session key", () => {
  assert.equal(agentIdOf({ sessionKey: "agent:ops:main", context: { agentId: "main" } }), "main");
  assert.equal(agentIdOf({ sessionKey: "agent:Ops:main", context: {} }), "ops");
  assert.equal(agentIdOf({ sessionKey: "global", context: {} }), undefined);
});

/** A fake memwarden that appends its command to `<log>`; a checkpoint takes `seconds` first. */
function loggingExecutable(log, seconds) {
  const script = path.join(folder, "fake-memwarden-log");
  writeFileSync(
    script,
    `#!/bin/sh\ncase "$*" in *checkpoint*) sleep ${seconds};; esac\necho "$*" >> '${log}'\n`,
  );
  chmodSync(script, 0o755);
  return script;
}

test("a reset waits for the session's checkpoint, then starts its summary detached", async () => {
  const log = path.join(folder, "runs.txt");
  const handler = await installedHandler({ executable: loggingExecutable(log, 0.3), stateDir: "/srv/state" });
  const event = eventFrom(capture("openclaw-2026.7.35", "command", "reset"), {
    workspaceDir: "/w",
    previousSessionEntryId: "101fbd0d-c6e3-4b83-94f5-65435a94d00e",
  });

  await handler(event);
  // The checkpoint had ended when the handler returned: the gateway resets after it.
  const [checkpoint] = readFileSync(log, "utf8").trim().split("\n");
  assert.equal(checkpoint, `--state-dir=/srv/state -q checkpoint --session=${event.sessionKey}`);
  const runs = await waitFor(log, 2);

  assert.match(runs[1], /^--state-dir=\/srv\/state -q summarize /);
  assert.ok(runs[1].includes("--previous-session-id=101fbd0d-c6e3-4b83-94f5-65435a94d00e"));
});

test("a checkpoint that outlasts the wait is stopped and said once", async () => {
  const log = path.join(folder, "runs.txt");
  const handler = await installedHandler({ executable: loggingExecutable(log, 1) });
  const warn = mock.method(console, "warn", () => {});
  const started = Date.now();

  await handler(eventFrom(capture("openclaw-2026.9.6", "session", "compact:before")), 300);
  const waited = Date.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 1500));

  assert.ok(waited < 1000, `waited ${waited} ms`);
  assert.equal(warn.mock.callCount(), 1);
  assert.match(String(warn.mock.calls[0].arguments[0]), /checkpoint still running after 300 ms: stopped/);
  assert.equal(existsSync(log), false); // it never got to write
});

test("the environment memwarden.json pins overlays the gateway's, nothing of another form", () => {
  const settings = {
    environment: { MEMWARDEN_GENERAL_STORAGE_DIR: "/srv/mw", "bad name": "x", EVIL: "a\nb", N: 5 },
  };
  const environment = environmentFor(settings, { HOME: "/home/gw", MEMWARDEN_GENERAL_STORAGE_DIR: "/old" });
  assert.deepEqual(environment, { HOME: "/home/gw", MEMWARDEN_GENERAL_STORAGE_DIR: "/srv/mw" });
  assert.deepEqual(environmentFor({ environment: ["X=1"] }, { HOME: "/h" }), { HOME: "/h" });
});

test("the run the installed hook starts has the pinned environment", async () => {
  const out = path.join(folder, "env.txt");
  const script = path.join(folder, "fake-memwarden-env");
  writeFileSync(
    script,
    `#!/bin/sh\nprintf '%s\\n' "$MEMWARDEN_GENERAL_STORAGE_DIR" >> '${out}'\n`,
  );
  chmodSync(script, 0o755);
  const handler = await installedHandler({
    executable: script,
    environment: { MEMWARDEN_GENERAL_STORAGE_DIR: "/srv/memwarden" },
  });

  await handler(eventFrom(capture("openclaw-2026.9.6", "command", "reset"), { workspaceDir: "/w" }));

  // Both runs (the checkpoint it waits for, then the summary it leaves running) have it; and
  // the folder is removed only once neither writes any more.
  assert.deepEqual(await waitFor(out, 2), ["/srv/memwarden", "/srv/memwarden"]);
});

test("an executable that does not exist logs one line and never throws", async () => {
  const handler = await installedHandler({ executable: path.join(folder, "missing-memwarden") });
  const warn = mock.method(console, "warn", () => {});
  const event = eventFrom(capture("openclaw-2026.9.6", "command", "reset"), { workspaceDir: "/w" });

  await handler(event);
  await new Promise((resolve) => setTimeout(resolve, 200));

  assert.equal(warn.mock.callCount(), 1);
  assert.match(String(warn.mock.calls[0].arguments[0]), /^\[session-summary\] could not start/);
});

test("without memwarden.json the hook logs one line and starts nothing", async () => {
  const handler = await installedHandler(null);
  const warn = mock.method(console, "warn", () => {});
  const event = eventFrom(capture("openclaw-2026.9.6", "command", "reset"), { workspaceDir: "/w" });

  await handler(event);

  assert.equal(warn.mock.callCount(), 1);
  assert.match(String(warn.mock.calls[0].arguments[0]), /^\[session-summary\] skipped/);
});
