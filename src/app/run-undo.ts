import type { Settings } from "../settings.js";
import { isInteractiveTerminal } from "../ui/terminal.js";
import { createPrettyRenderer } from "../ui/render.js";
import { askOnTerminal } from "../ui/terminal.js";
import { EXIT } from "./exit-codes.js";
import { createSession } from "./session.js";
import { sessionUndoContext, undoLastTurn } from "./undo.js";

/** `--undo` with `--thread`/`--continue`: undoes the thread's last turn and exits (0 done, 1 refused or nothing to undo). */
export async function runUndo(settings: Settings, force: boolean): Promise<number> {
  const renderer = createPrettyRenderer({
    color: settings.color && Boolean(process.stdout.isTTY),
    spinner: false,
    verbose: settings.verbose,
    echoRequest: false,
  });
  const session = await createSession(settings, { renderer });
  try {
    if (!session.resumed) {
      renderer.note(`No saved thread ${session.threadId} in ${settings.workspace}; nothing to undo.`);
      return EXIT.failure;
    }
    const confirm = isInteractiveTerminal()
      ? async (paths: string[]) =>
          /^y(es)?$/i.test((await askOnTerminal(`Overwrite ${paths.length} file(s) changed by hand? [y/N] `)).trim())
      : undefined;
    const result = await undoLastTurn(sessionUndoContext(session), {
      overwrite: force,
      confirm,
      forceHint: "the same command with --force",
    });
    renderer.note(result.text);
    return result.ok ? EXIT.ok : EXIT.failure;
  } finally {
    await session.close();
  }
}
