import { createInterface } from "node:readline/promises";
import { loadProjectRules, RulesError } from "../security/rules.js";
import { trustFile } from "../security/trust.js";
import type { Settings } from "../settings.js";
import type { Renderer } from "../ui/render.js";
import { sanitizeForTerminal } from "../ui/sanitize.js";

/** Asks a yes/no question on the terminal (replaced in tests). */
export type AskLine = (question: string) => Promise<string>;

const askOnTerminal: AskLine = async (question) => {
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
  try {
    return await rl.question(question);
  } catch {
    return "";
  } finally {
    rl.close();
  }
};

/**
 * Before a run: when the repository's committed rules file loosens approvals (allow rules,
 * passEnv) and the user has not trusted its current content, ask once on a terminal and
 * remember the answer in the trust store; off a terminal, say that those rules are ignored.
 * Returns true when the file is trusted now.
 */
export async function confirmConfigTrust(settings: Settings, interactive: boolean, renderer: Renderer, ask: AskLine = askOnTerminal): Promise<boolean> {
  let untrusted;
  try {
    untrusted = loadProjectRules(settings.workspace, { trustStore: settings.trustStore }).untrusted;
  } catch (err) {
    if (err instanceof RulesError) return false; // reported by the CLI before it gets here
    throw err;
  }
  if (!untrusted) return false;
  const parts = [
    untrusted.allow.length > 0 ? `allow rules (${untrusted.allow.map((r) => `\`${r}\``).join(", ")}) that run those commands without asking` : "",
    untrusted.passEnv.length > 0 ? `passEnv (${untrusted.passEnv.join(", ")}) that hands those variables to every command` : "",
  ].filter(Boolean);
  const what = sanitizeForTerminal(`${untrusted.file} in this repository has ${parts.join(", and ")}.`);
  if (!interactive) {
    renderer.note(`${what} They are ignored until you trust this file: run mini-cursor on a terminal in this workspace to be asked. Its deny and ask rules apply.`);
    return false;
  }
  renderer.pause();
  const answer = (await ask(`\n${what}\n  Trust this file's current content? (remembered outside the repository; asked again if it changes) [y/N] `)).trim().toLowerCase();
  if (answer === "y" || answer === "yes") {
    trustFile(settings.trustStore, untrusted.path, untrusted.hash);
    renderer.note(`Trusted ${untrusted.file} (saved in ${settings.trustStore}).`);
    return true;
  }
  renderer.note(`Not trusted: its allow rules and passEnv are ignored; its deny and ask rules apply.`);
  return false;
}
