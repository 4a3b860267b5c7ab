import {
  helpText,
  runSlashCommand,
  SLASH_COMMANDS,
  type SlashCommand,
  type SlashContext,
} from "../../src/app/slash-commands.js";
import type { Session } from "../../src/app/session.js";
import type { Renderer } from "../../src/ui/render.js";

function context(): { ctx: SlashContext; notes: string[] } {
  const notes: string[] = [];
  const renderer = { note: (text: string) => notes.push(text) } as unknown as Renderer;
  const session = { approval: "auto-edit" } as unknown as Session;
  return { ctx: { session, renderer }, notes };
}

test("/help lists the table, in its order, with the usage column aligned", () => {
  expect(helpText(SLASH_COMMANDS)).toBe(`Commands:
  /help                this list
  /new                 start a fresh thread (also /clear)
  /compact [focus]     summarise the conversation so far into one note now, to save context (focus: what the summary must keep)
  /model               the model this session uses, and how to choose another
  /threads             saved threads: id, first request, last update, steps
  /resume <id>         continue a saved thread
  /approval <mode>     suggest | auto-edit | full-auto | plan
  /plan [request]      plan mode: only read-only tools run and the model ends with a plan (and runs the request)
  /plan accept [mode]  carry out the plan on this thread (mode: the one before plan mode, else auto-edit)
  /plan off            leave plan mode without carrying anything out
  /ps                  background processes (dev servers) with their URLs
  /kill <id>           stop a background process
  /mcp                 MCP servers: state and tools
  /undo [--force]      put back the files the last turn changed and drop it from the thread
  /rewind [<n>]        list the turns; with n, go back to before turn n (--force as for /undo)
  /exit                stop background processes and leave (also Ctrl-D, or Ctrl-C twice at an empty prompt)
Anything else is a request for the agent. Ctrl-C during a turn cancels that turn; at the prompt it clears the line.`);
});

test("a command added to a table runs with the rest of the line as typed, and /help shows it", async () => {
  const seen: string[] = [];
  const echo: SlashCommand = {
    name: "/echo",
    usage: "/echo <text>",
    summary: "say it back",
    run: (arg) => (seen.push(arg), "continue"),
  };
  const table = [...SLASH_COMMANDS, echo];
  const { ctx, notes } = context();
  expect(await runSlashCommand("  /echo  a  b ", ctx, table)).toBe("continue");
  // Trimmed, inner spacing kept: a custom command's $ARGUMENTS is what was typed.
  expect(seen).toEqual(["a  b"]);
  expect(helpText(table)).toContain("\n  /echo <text>         say it back\n");
  expect(notes).toEqual([]);
});

test("aliases, unknown commands and a usage note", async () => {
  const { ctx, notes } = context();
  expect(await runSlashCommand("/quit", ctx)).toBe("exit");
  expect(await runSlashCommand("/exit", ctx)).toBe("exit");
  expect(await runSlashCommand("/foo bar", ctx)).toBe("continue");
  expect(await runSlashCommand("/approval nonsense", ctx)).toBe("continue");
  expect(notes).toEqual([
    "Unknown command /foo. /help lists the commands.",
    "Approval mode is auto-edit. Usage: /approval suggest | auto-edit | full-auto | plan",
  ]);
});
