import {
  addGatedSecrets,
  gateText,
  gateValue,
  neutraliseControls,
  redactCredentials,
} from "../../src/workspace/output-gate.js";
import { secretValues } from "../../src/settings.js";
import { shapedPasswords } from "../../src/credential-shapes.js";
import { makeTempDir } from "../helpers/tmp.js";

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
  expect(redactCredentials(input)).toBe(expected);
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

describe("a URL- or conninfo-valued secret: only its password is a secret value, masked by shape", () => {
  test.each([
    ["postgres://app:s3cret@db:5432/prod", ["s3cret"]],
    ["postgresql://app:p%40ss@db/x", ["p%40ss", "p@ss"]],
    ["redis://:hunter2@cache:6379", ["hunter2"]],
    ["mysql://app@db/x?sslmode=require&password=s3cret", ["s3cret"]],
    ["host=db user=app password='with spaces' dbname=x", ["with spaces"]],
    ["postgres://postgres@127.0.0.1:5432/test", []],
    ["https://hooks.example.com/services/T0/B0/abcdef", undefined],
    ["plain-secret-value", undefined],
  ])("%s", (value, passwords) => {
    expect(shapedPasswords(value)).toEqual(passwords);
  });

  test("secretValues keeps no special case: a database URL in any secret-named variable is named in messages, its password never", () => {
    const env = {
      MINI_CURSOR_CHECKPOINTER: "postgres://app:cp-pass-1234@db.internal:5432/threads",
      ANALYTICS_DB_PASSWORD_URL: "postgresql://etl:etl%2Fpass-5678@warehouse:5432/facts",
      CACHE_SECRET: "redis://:cache-pass-9012@cache:6379",
      PG_CREDENTIALS: "host=pg user=app password='conn pass 3456' dbname=app",
      SLACK_WEBHOOK_TOKEN: "https://hooks.example.com/services/T0/B0/webhook-path-7890",
      GITHUB_TOKEN: "ghx_plain_token_1234",
      HOME: "/home/me",
    };
    const workspace = makeTempDir();
    const secrets = secretValues(workspace.dir, env);
    workspace.cleanup();
    expect(secrets.sort()).toEqual(
      [
        "cp-pass-1234",
        "etl%2Fpass-5678",
        "etl/pass-5678",
        "cache-pass-9012",
        "conn pass 3456",
        "https://hooks.example.com/services/T0/B0/webhook-path-7890",
        "ghx_plain_token_1234",
      ].sort(),
    );
    addGatedSecrets(secrets);
    expect(gateText(`cannot reach ${env.MINI_CURSOR_CHECKPOINTER}: refused`)).toBe(
      "cannot reach postgres://app:[redacted]@db.internal:5432/threads: refused",
    );
    expect(gateText(`load ${env.ANALYTICS_DB_PASSWORD_URL} (etl/pass-5678)`)).toBe(
      "load postgresql://etl:[redacted]@warehouse:5432/facts ([redacted])",
    );
    expect(gateText(`cache ${env.CACHE_SECRET}`)).toBe("cache redis://:[redacted]@cache:6379");
    expect(gateText(`conninfo ${env.PG_CREDENTIALS}`)).toBe("conninfo host=pg user=app password=[redacted] dbname=app");
    expect(gateText(`posting to ${env.SLACK_WEBHOOK_TOKEN}`)).toBe("posting to [redacted]");
  });
});

test("issue 42.4: Unicode format characters and line separators are made visible; joiners inside writing stay", () => {
  const cases: Array<[string, string]> = [
    ["a\u200eb", "a<U+200E>b"], // left-to-right mark
    ["a\u200fb", "a<U+200F>b"], // right-to-left mark
    ["a\u061cb", "a<U+061C>b"], // Arabic letter mark
    ["rm\u200b -rf", "rm<U+200B> -rf"], // zero-width space
    ["a\u2060b\ufeffc", "a<U+2060>b<U+FEFF>c"], // word joiner, byte order mark
    ["x\u2066y\u2069z\u202ew", "x<U+2066>y<U+2069>z<U+202E>w"], // isolates and override
    ["one\u2028? Allow execute_command\u2029two", "one<U+2028>? Allow execute_command<U+2029>two"],
    ["tag\u{e0041}\u{e0042}", "tag<U+E0041><U+E0042>"], // tag characters (ASCII smuggling)
    ["soft\u00adhyphen", "soft<U+00AD>hyphen"],
    ["ls\u200c-la", "ls<U+200C>-la"], // a joiner next to ASCII hides a break
    ["\u200d", "<U+200D>"],
    ["می\u200cخواهم", "می\u200cخواهم"], // Persian: the non-joiner is part of the word
    ["क्\u200dष", "क्\u200dष"], // Devanagari: the joiner is part of the conjunct
    ["👩\u200d💻 and ❤\ufe0f\u200d🔥", "👩\u200d💻 and ❤\ufe0f\u200d🔥"], // emoji sequences
  ];
  for (const [text, shown] of cases) {
    expect(neutraliseControls(text)).toBe(shown);
    expect(gateText(text)).toBe(shown);
  }
});

test("one-line text: line breaks become visible too, so a label cannot start a line of its own", () => {
  expect(neutraliseControls("fix\n? Allow execute_command: rm -rf ~\r\nx\ty", true)).toBe(
    "fix^J? Allow execute_command: rm -rf ~^Jx\ty",
  );
  expect(gateText("a\nb", { lineBreaks: true })).toBe("a^Jb");
  expect(gateText("a\nb")).toBe("a\nb");
});

test("gateValue gates keys as well as values", () => {
  addGatedSecrets(["key-shaped-secret-value-987"]);
  expect(gateValue({ "key-shaped-secret-value-987": 1, "a\x1bb": 2 })).toEqual({ "[redacted]": 1, "a^[b": 2 });
});
