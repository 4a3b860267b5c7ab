import { loadAgentCatalog } from "../context/agent-files.js";
import { trustFile } from "../security/trust.js";
import type { Settings } from "../settings.js";
import type { Renderer } from "../ui/render.js";
import { sanitizeForTerminal } from "../ui/sanitize.js";
import { askOnTerminal } from "../ui/terminal.js";
import { askedYes, type AskLine } from "./config-trust.js";

/**
 * Before a run, as for the rules file (config-trust.ts): each agent file of the repository
 * (`.mini-cursor/agents/*.md`, `.claude/agents/*.md`) whose current content the person has not trusted is asked about
 * once on a terminal, and the answer kept in the trust store; off a terminal it is left out with a
 * note. Agent files that cannot be used are named. Trusted or not, an agent file never sets an
 * approval mode: a sub-agent runs in its parent's.
 */
export async function confirmAgentTrust(
  settings: Pick<Settings, "workspace" | "agentsDir" | "claudeHome" | "trustStore">,
  interactive: boolean,
  renderer: Renderer,
  ask: AskLine = askOnTerminal,
): Promise<void> {
  const catalog = loadAgentCatalog(settings);
  for (const { file, problem } of catalog.problems)
    renderer.note(sanitizeForTerminal(`Agent file ${file} is not used: ${problem}.`));
  // Said once per run, at load: what a used file asked for and does not get.
  for (const { file, problem } of catalog.warnings)
    renderer.note(sanitizeForTerminal(`Agent file ${file}: ${problem}.`));
  for (const file of catalog.untrusted) {
    const what = sanitizeForTerminal(
      `${file.file} in this repository defines a sub-agent (${file.name}) with instructions from the repository.${file.warnings.length > 0 ? ` Not honoured: ${file.warnings.join("; ")}.` : ""}`,
    );
    if (!interactive) {
      renderer.note(
        `${what} It is not offered until you trust this file: run mini-cursor on a terminal in this workspace to be asked.`,
      );
      continue;
    }
    const question = `\n${what}\n  Offer it to the model? Its calls ask you as the main agent's do. (remembered outside the repository; asked again if it changes) [y/N] `;
    if (await askedYes(ask, renderer, question)) {
      trustFile(settings.trustStore, file.file, file.hash);
      renderer.note(`Trusted ${file.file} (saved in ${settings.trustStore}).`);
    } else renderer.note(`Not trusted: the ${file.name} sub-agent is not offered.`);
  }
}
