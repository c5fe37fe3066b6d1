// A client of sn serve in TypeScript: its types are generated from the
// service's OpenAPI document by openapi-typescript (schema.d.ts, made by
// the test), its requests sent by openapi-fetch. It issues, validates,
// parses and takes a block, checking each answer's shape with the types
// the document gives, and prints what it got as JSON for the Go test.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

type ErrorCode = components["schemas"]["Error"]["code"];

const base = process.env.SN_URL;
const token = process.env.SN_TOKEN;
if (!base || !token) throw new Error("SN_URL and SN_TOKEN must be set");

const sn = createClient<paths>({ baseUrl: base, headers: { Authorization: `Bearer ${token}` } });
const name = { params: { path: { name: "orders" } } };

function fail(what: string, error: unknown): never {
  throw new Error(`${what}: ${JSON.stringify(error)}`);
}

async function main(): Promise<void> {
  const next = await sn.POST("/v1/templates/{name}/next", { ...name, body: { n: 5 } });
  if (next.error || !next.data) fail("next", next.error);
  const numbers: string[] = next.data.numbers;

  const first = numbers[0] ?? fail("next", "no numbers");
  const valid = await sn.POST("/v1/templates/{name}/validate", { ...name, body: { number: first } });
  if (valid.error || !valid.data) fail("validate", valid.error);
  const invalid = await sn.POST("/v1/templates/{name}/validate", { ...name, body: { number: "SN-nonsense" } });
  if (invalid.error || !invalid.data) fail("validate", invalid.error);
  const invalidCode: ErrorCode | undefined = invalid.data.error?.code;

  const parsed = await sn.POST("/v1/templates/{name}/parse", { ...name, body: { number: first } });
  if (parsed.error || !parsed.data) fail("parse", parsed.error);

  // A block of the counter the first number was drawn from: its key read
  // back by the service, the template's text and engine from its answer.
  const info = await sn.GET("/v1/templates/{name}", name);
  if (info.error || !info.data) fail("template", info.error);
  const block = await sn.POST("/v1/templates/{name}/blocks", {
    ...name,
    body: {
      key: parsed.data.key,
      n: 100,
      template: info.data.template,
      engine: info.data.engine ?? "",
      now: new Date().toISOString(),
      client: "typescript test",
    },
  });
  if (block.error || !block.data) fail("blocks", block.error);

  // An error, with its code as the document types it.
  const wrong = await sn.POST("/v1/templates/{name}/next", { ...name, body: { n: 1, vars: { nope: "1" } } });
  const wrongCode: ErrorCode | undefined = wrong.error?.error.code;
  const missing = await sn.POST("/v1/templates/{name}/next", { params: { path: { name: "nope" } }, body: {} });

  console.log(JSON.stringify({
    numbers,
    valid: valid.data.valid,
    invalid: invalid.data.valid,
    invalidCode,
    key: parsed.data.key,
    seq: parsed.data.seq,
    maxBlock: info.data.max_block,
    block: block.data,
    wrongStatus: wrong.response.status,
    wrongCode,
    missingStatus: missing.response.status,
    missingCode: missing.error?.error.code,
  }));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
