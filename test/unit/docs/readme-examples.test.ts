/**
 * The docs' examples, run: README's first policy as written and its quick start's curl request
 * against the bundled policies with the reply README shows, and docs/library.md's example.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { inspect } from "node:util";
import { startWebhook } from "../../../src/adapters/server/app.ts";
import { FAR, compileText, contextFor, deploymentRequest } from "../../helpers/engine.ts";
import { decide } from "../../../src/engine/decision.ts";
import { validate } from "../../../src/engine/validating.ts";

import { doc, readme, section as sectionOf } from "../../helpers/docs.ts";

const section = (title: string): string => sectionOf(readme, title);

function fenced(text: string, lang: string): string[] {
  return [...text.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, "g"))].map((m) => m[1] as string);
}

void test("README's first policy compiles and denies 7 replicas with its message", () => {
  const [yaml] = fenced(section("Writing your first policy"), "yaml");
  assert.ok(yaml);
  const set = compileText(yaml);
  const d = decide(validate(set, deploymentRequest(7), contextFor(set), { deadline: FAR() }));
  assert.equal(d.allowed, false);
  assert.equal(
    d.status?.message,
    "ValidatingAdmissionPolicy 'replica-limit.example.com' with binding 'replica-limit.example.com' denied request: at most 5 replicas, got 7",
  );
  assert.equal(
    decide(validate(set, deploymentRequest(5), contextFor(set), { deadline: FAR() })).allowed,
    true,
  );
});

void test("README's quick start request gets the reply README shows, from the bundled policies", async (t) => {
  const quick = section("Quick start");
  const [sh] = fenced(quick, "sh").filter((b) => b.includes("curl"));
  assert.ok(sh);
  const body = /-d '([\s\S]*?)'/.exec(sh)?.[1];
  assert.ok(body, "the curl line has a body");
  const [shown] = fenced(quick, "json");
  assert.ok(shown);
  const started = await startWebhook(
    {
      policies: [fileURLToPath(new URL("../../../policies", import.meta.url))],
      host: "127.0.0.1",
      port: 0,
      metricsPort: 0,
      logLevel: false,
      drainMs: 0,
    },
    () => {},
  );
  assert.ok(started.ok);
  if (!started.ok) return;
  t.after(() => started.webhook.stop());
  const url = new URL("/validate", started.webhook.url);
  const reply = await new Promise<string>((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        ca: started.webhook.generatedCert,
        servername: "localhost",
        timeout: 10_000,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          text += c;
        });
        res.on("end", () => resolve(text));
      },
    );
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end(body);
  });
  // README wraps the JSON over several lines for reading; compare the values.
  assert.deepEqual(JSON.parse(reply), JSON.parse(shown.replace(/\n /g, " ")));
});

void test("docs/library.md's example runs and prints what the page says", async (t) => {
  const [js] = fenced(doc("library.md"), "js");
  assert.ok(js);
  const expected = [...js.matchAll(/^\/\/ (.*)$/gm)].map((m) => m[1] as string);
  const index = fileURLToPath(new URL("../../../src/index.ts", import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), "celgate-readme-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "example.mjs");
  writeFileSync(file, js.replace('from "celgate"', `from ${JSON.stringify(index)}`));
  const printed: string[] = [];
  t.mock.method(console, "log", (...args: unknown[]) => {
    printed.push(args.map((a) => (typeof a === "string" ? a : inspect(a))).join(" "));
  });
  await import(pathToFileURL(file).href);
  t.mock.restoreAll();
  assert.deepEqual(printed, expected);
});
