import { loadProjectRules, RulesError } from "../security/rules.js";
import { trustFile } from "../security/trust.js";
import type { Settings } from "../settings.js";
import type { Renderer } from "../ui/render.js";
import { sanitizeForTerminal } from "../ui/sanitize.js";
import { askOnTerminal } from "../ui/terminal.js";

/** Asks a yes/no question on the terminal (replaced in tests). */
export type AskLine = (question: string) => Promise<string>;

/** The trace stopped, then `question` asked: whether the answer is y or yes. */
export async function askedYes(ask: AskLine, renderer: Pick<Renderer, "pause">, question: string): Promise<boolean> {
  renderer.pause();
  return /^y(es)?$/i.test((await ask(question)).trim());
}

/**
 * Before a run: for each rules file that loosens approvals (allow rules, passEnv, MCP servers) and whose
 * current content the user has not trusted (a cloned repository's), ask once on a terminal and
 * remember the answer in the trust store; off a terminal, say that those rules are ignored.
 * Returns true when a file was trusted now.
 */
export async function confirmConfigTrust(
  settings: Settings,
  interactive: boolean,
  renderer: Renderer,
  ask: AskLine = askOnTerminal,
): Promise<boolean> {
  let untrusted;
  try {
    untrusted = loadProjectRules(settings.workspace, { trustStore: settings.trustStore }).untrusted;
  } catch (err) {
    if (err instanceof RulesError) return false; // reported by the CLI before it gets here
    throw err;
  }
  let trustedNow = false;
  for (const file of untrusted ?? []) {
    const parts = [
      file.allow.length > 0
        ? `allow rules (${file.allow.map((r) => `\`${r}\``).join(", ")}) that run those commands without asking`
        : "",
      file.passEnv.length > 0 ? `passEnv (${file.passEnv.join(", ")}) that hands those variables to every command` : "",
      file.mcpServers?.length
        ? `MCP servers (${file.mcpServers.join(", ")}) that start programs or reach URLs it names`
        : "",
      file.hooks?.length
        ? `hooks (${file.hooks.join(", ")}) that run commands before or after tool calls${file.scripts?.length ? ` (its scripts ${file.scripts.join(", ")} are trusted with it: a change to one asks again)` : ""}`
        : "",
    ].filter(Boolean);
    if (parts.length === 0) parts.push("MCP approval rules (an `mcp` block) that let MCP tools run without asking");
    const what = sanitizeForTerminal(`${file.file} in this repository has ${parts.join(", and ")}.`);
    if (!interactive) {
      renderer.note(
        `${what} They are ignored until you trust this file: run mini-cursor on a terminal in this workspace to be asked. Its deny and ask rules apply.`,
      );
      continue;
    }
    const question = `\n${what}\n  Trust this file's current content? (remembered outside the repository; asked again if it changes) [y/N] `;
    if (await askedYes(ask, renderer, question)) {
      trustFile(settings.trustStore, file.path, file.hash);
      renderer.note(`Trusted ${file.file} (saved in ${settings.trustStore}).`);
      trustedNow = true;
    } else {
      renderer.note(
        `Not trusted: its allow rules${file.mcpServers?.length ? ", passEnv and MCP servers" : " and passEnv"}${file.hooks?.length ? " and hooks" : ""} are ignored; its deny and ask rules apply.`,
      );
    }
  }
  return trustedNow;
}
