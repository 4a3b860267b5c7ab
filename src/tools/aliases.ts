import { z } from "zod";

/**
 * Argument names models trained on other agents send (Claude Code's `file_path`, `old_string`;
 * Anthropic's text editor's `path`, `old_str`; OpenAI samples' `path`). Renaming them before
 * validation saves the model a wasted turn, while the JSON schema it is shown keeps one
 * spelling per field: zod's preprocess is transparent to the schema LangChain sends.
 */
export type AliasTable = Readonly<Record<string, readonly string[]>>;

export const FILE_PATH_ALIASES: AliasTable = { filePath: ["file_path", "filepath", "path", "file", "filename"] };
export const EDIT_ALIASES: AliasTable = {
  oldString: ["old_string", "old_str", "oldText", "old_text"],
  newString: ["new_string", "new_str", "newText", "new_text"],
  replaceAll: ["replace_all"],
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A copy of `value` with aliased keys renamed; the canonical name wins when both are given. */
export function renameAliases(value: unknown, table: AliasTable): unknown {
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = { ...value };
  for (const [canonical, aliases] of Object.entries(table)) {
    for (const alias of aliases) {
      if (!(alias in out)) continue;
      if (out[canonical] === undefined) out[canonical] = out[alias];
      delete out[alias];
    }
  }
  return out;
}

/** `schema`, accepting the aliases in `table` (and, for `nested`, in each element of that array field). */
export function withAliases<T extends z.ZodTypeAny>(
  schema: T,
  table: AliasTable,
  nested?: { field: string; table: AliasTable; aliases?: readonly string[] },
) {
  return z.preprocess((value) => {
    const renamed = renameAliases(value, nested ? { ...table, [nested.field]: nested.aliases ?? [] } : table);
    if (!nested || !isRecord(renamed) || !Array.isArray(renamed[nested.field])) return renamed;
    return {
      ...renamed,
      [nested.field]: (renamed[nested.field] as unknown[]).map((e) => renameAliases(e, nested.table)),
    };
  }, schema);
}
