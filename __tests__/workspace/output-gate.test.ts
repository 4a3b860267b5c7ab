import {
  addGatedSecrets,
  gateText,
  gateValue,
  neutraliseControls,
  redactCredentials,
} from "../../src/workspace/output-gate.js";
import { redactUrlPassword } from "../../src/settings.js";

/** Issue 25, item 7: the one output gate. */

test.each([
  ["postgres://app:s3cret@db.example:5432/prod", "postgres://app:[redacted]@db.example:5432/prod"],
  ["postgresql://app:p@ss@word@db:5432/x", "postgresql://app:[redacted]@db:5432/x"],
  ["postgres://:onlypass@localhost/db", "postgres://:[redacted]@localhost/db"],
  ["postgres://app@db/x?sslmode=require&password=s3cret", "postgres://app@db/x?sslmode=require&password=[redacted]"],
  ["postgres://db/x?password=s3cret&user=app", "postgres://db/x?password=[redacted]&user=app"],
  ["host=db port=5432 user=app password=s3cret dbname=x", "host=db port=5432 user=app password=[redacted] dbname=x"],
  ["host=db password='with spaces and \\' quote' dbname=x", "host=db password=[redacted] dbname=x"],
  ["host=db password = s3cret", "host=db password = [redacted]"],
  ["redis://:hunter2@cache:6379", "redis://:[redacted]@cache:6379"],
  ["at postgres://a@h/x?password=s3cret: refused", "at postgres://a@h/x?password=[redacted]: refused"],
  ["conninfo password=s3cret.", "conninfo password=[redacted]."],
])("libpq and URL forms: %s", (input, expected) => {
  expect(redactCredentials(input)).toBe(expected);
  expect(redactUrlPassword(input)).toBe(expected);
});

test("command lines: secret-named flags and variables, and key shapes, are masked; the rest stays", () => {
  expect(redactCredentials("npx server --api-key abc123def --port 3000 --token=xyz789")).toBe(
    "npx server --api-key [redacted] --port 3000 --token=[redacted]",
  );
  expect(redactCredentials("sh -c 'node' 's.js' '--token' 'plainvalue'")).toBe(
    "sh -c 'node' 's.js' '--token' '[redacted]'",
  );
  expect(redactCredentials("env GITHUB_TOKEN=ghx_notashape node s.js")).toBe("env GITHUB_TOKEN=[redacted] node s.js");
  expect(redactCredentials("key sk-proj-abcdefghijklmnop1234 and ghp_abcdefghijklmnopqrstuvwxyz")).toBe(
    "key [redacted] and [redacted]",
  );
  expect(redactCredentials("Authorization: Bearer abcdefghijklmnopqrstu")).toBe("Authorization: Bearer [redacted]");
  expect(redactCredentials("node server.js --port 8080 https://example.com/a?b=c")).toBe(
    "node server.js --port 8080 https://example.com/a?b=c",
  );
});

test("control characters become visible, newlines and tabs stay", () => {
  expect(neutraliseControls("a\x1b[2Jb\x07c\r\nd\te\u202ef\x9bg")).toBe("a^[[2Jb^Gc\nd\te<U+202E>f<U+009B>g");
});

test("known secrets are redacted everywhere the gate is used; JSON keeps its own escaping", () => {
  addGatedSecrets(["value-of-a-secret-1234"]);
  expect(gateText("x value-of-a-secret-1234 \x1b]52;c;aGk=\x07")).toBe("x [redacted] ^[]52;c;aGk=^G");
  expect(gateValue({ a: ["value-of-a-secret-1234", 3], b: { c: "\x1b" } }, { controls: false })).toEqual({
    a: ["[redacted]", 3],
    b: { c: "\x1b" },
  });
});
