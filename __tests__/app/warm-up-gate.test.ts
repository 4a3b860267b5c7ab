import diagnostics from "node:diagnostics_channel";
import { expect, test } from "@jest/globals";
import { enableWarmUps, warmUpWhileModelThinks } from "../../src/app/warm-up.js";
import { waitFor } from "../helpers/tmp.js";

/**
 * Warm-ups run only in the CLI's own process. Anywhere else (a test file, a library user, an
 * in-process eval) a queued warm-up outlived its caller: under Jest, the shell parser's `require`
 * ran after apply-patch.test.ts's environment was torn down, and Jest failed the run for it.
 */
test("a warm-up asked for before the CLI enables them is dropped; one asked for after runs", async () => {
  const ran: string[] = [];
  warmUpWhileModelThinks(async () => {
    ran.push("before enabling");
  });
  enableWarmUps();
  warmUpWhileModelThinks(async () => {
    ran.push("after enabling");
  });
  // What Node's fetch publishes once a request's body is in the socket: the warm-ups start.
  diagnostics.channel("undici:request:bodySent").publish({});
  // Jobs run in the order given, so had the first been kept it would have run before this one.
  await waitFor(() => ran.length > 0, 10_000);
  expect(ran).toEqual(["after enabling"]);
});
