import { type Cond, COMMANDS, GIT, NAME_PATTERNS, WRAPPERS } from "../../src/security/classify-tables.js";

/**
 * The classifier's tables are data that nothing type-checks beyond their shape: a program named
 * in two rows, or a condition atom mistyped (`--hard-4`), would silently change what asks.
 */

const names = (table: Readonly<Record<string, unknown>>) => Object.keys(table).flatMap((key) => key.split(" "));

test.each([
  ["WRAPPERS", WRAPPERS],
  ["COMMANDS", COMMANDS],
  ["GIT", GIT],
])("no program is named by two rows of %s", (_name, table) => {
  const all = names(table);
  expect(all.filter((n, i) => all.indexOf(n) !== i)).toEqual([]);
  expect(all.filter((n) => n === "")).toEqual([]);
});

test("a program is a wrapper or a command, not both", () => {
  const commands = new Set(names(COMMANDS));
  // env alone prints the environment: the command row says when that is read-only.
  expect(names(WRAPPERS).filter((n) => commands.has(n) && n !== "env")).toEqual([]);
});

test("every name pattern leads to a row", () => {
  const commands = new Set(names(COMMANDS));
  expect(NAME_PATTERNS.filter(([, to]) => !to.startsWith("$") && !commands.has(to))).toEqual([]);
  for (const name of ["mkfs.ext4", "python3.12", "pypy3", "nodejs", "perl5.36", "ruby3.2", "php8", "lua5.4"]) {
    const hit = NAME_PATTERNS.find(([pattern]) => pattern.test(name));
    expect([name, hit && commands.has(name.replace(hit[0], hit[1]))]).toEqual([name, true]);
  }
});

/** The atom forms classify-tables.ts documents. */
const ATOM = /^(-[A-Za-z0-9]|--[\w-]+(~\d+)?|=.+|@[\w.-]*|#\d+|\/.+\/)$/;

function atoms(cond: Cond): string[] {
  if (typeof cond === "string") return cond.startsWith("/") ? [cond] : cond.split(" ");
  if (Array.isArray(cond)) return (cond as readonly Cond[]).flatMap(atoms);
  if ("all" in cond) return cond.all.flatMap(atoms);
  return atoms((cond as { not: Cond }).not);
}

test("every condition in the tables is written in the documented atoms", () => {
  const conds: Cond[] = [];
  for (const row of [...Object.values(COMMANDS), ...Object.values(GIT)]) {
    if (row.if !== undefined) conds.push(row.if);
    if (typeof row.readOnly === "object" && row.readOnly.if !== undefined) conds.push(row.readOnly.if);
    for (const spec of row.writes === undefined ? [] : "verb" in row.writes ? [row.writes] : row.writes)
      if (typeof spec.recursive !== "boolean" && spec.recursive !== undefined) conds.push(spec.recursive);
  }
  expect(conds.length).toBeGreaterThan(30);
  expect(conds.flatMap(atoms).filter((a) => !ATOM.test(a))).toEqual([]);
});
