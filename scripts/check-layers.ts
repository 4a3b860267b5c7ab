/**
 * The architecture's global rules, run by `npm run lint` (docs/ARCHITECTURE.md states them):
 * - layering: every folder under src/ (and each top-level file such as settings.ts) belongs to a
 *   layer in scripts/layers.json, listed bottom first; a module may import its own layer and the
 *   layers below it;
 * - no import cycle between folders, type-only imports counted: a type two layers share (an
 *   event, an approval request, a snapshot entry) lives in the layer below both (src/contracts/);
 * - no import cycle between files at run time (a type-only import is erased when compiled);
 * - only the files a rule names may read `process.env`, write to the terminal or start child
 *   processes (scripts/layers.json `rules`), each other file that must is listed with its reason.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** One import that breaks the layering, a cycle of folders or files, or a use a rule forbids. */
export interface LayerFinding {
  kind: "upward" | "unlisted" | "cycle" | "rule";
  message: string;
}

/**
 * A rule of what only some files may do: `pattern` (a regular expression, matched against the
 * code without comments) may occur only in `only` (paths under src/; a trailing "/" means a whole
 * folder) and in the files of `exceptions`, each with the reason it must.
 */
export interface UseRule {
  what: string;
  pattern: string;
  only: string[];
  exceptions?: Record<string, string>;
  /**
   * For a file of `only`: the functions the pattern may occur in, and why. The environment is
   * read in one function that runs at start, so no other (nor a default parameter) reads it
   * in the middle of a run.
   */
  within?: Record<string, { functions: string[]; why: string }>;
}

/** Layers bottom first; each is a list of folder names (or top-level module names without .ts). */
export type Layers = string[][];

/** scripts/layers.json: the layers, and single imports allowed across them, each with its reason. */
export interface LayerConfig {
  layers: Layers;
  /** `"from.ts -> to.ts"` (paths under src/) -> why this import may cross the layers. */
  allow?: Record<string, string>;
  /** name -> rule (see UseRule). */
  rules?: Record<string, UseRule>;
}

const IMPORT = /(?:^|[\s;])(?:import|export)\s+(type\s+)?(?:([\w*{}\s,$]*?)\s+from\s+)?["'](\.{1,2}\/[^"']+)["']/g;
const DYNAMIC_IMPORT = /\bimport\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) files.push(...sourceFiles(full));
    else if (/\.(ts|mts)$/.test(name) && !name.endsWith(".d.ts")) files.push(full);
  }
  return files;
}

/** The unit a file belongs to: its first folder under src/, or its own name for a top-level file. */
export function unitOf(srcDir: string, file: string): string | undefined {
  const rel = path.relative(srcDir, file);
  if (rel.startsWith("..") || path.isAbsolute(rel)) return undefined;
  const parts = rel.split(path.sep);
  return parts.length === 1 ? parts[0]!.replace(/\.m?[jt]s$/, "") : parts[0];
}

/** A relative import of a source file; type-only ones are erased when compiled. */
export interface SourceImport {
  specifier: string;
  line: number;
  typeOnly: boolean;
}

/** `{ type A, type B }`: every name imported as a type, so the import is erased. */
function onlyTypes(names: string | undefined): boolean {
  const inner = names?.trim().match(/^\{([\s\S]*)\}$/)?.[1];
  if (inner === undefined) return false;
  const parts = inner
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  return parts.length > 0 && parts.every((p) => p.startsWith("type "));
}

/** The text with comments blanked (newlines kept, so line numbers hold). */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\/|(?<![:"'`])\/\/[^\n]*/g, (c) => c.replace(/[^\n]/g, " "));
}

/** Relative import specifiers of a source text, with their 1-based line numbers. */
export function importsOf(text: string): SourceImport[] {
  const found: SourceImport[] = [];
  // Comments may quote imports.
  const code = withoutComments(text);
  const lineAt = (at: number): number => code.slice(0, at).split("\n").length;
  for (const match of code.matchAll(IMPORT)) {
    const specifier = match[3]!;
    const typeOnly = match[1] !== undefined || onlyTypes(match[2]);
    found.push({ specifier, line: lineAt(match.index + match[0].lastIndexOf(specifier)), typeOnly });
  }
  for (const match of code.matchAll(DYNAMIC_IMPORT)) {
    found.push({ specifier: match[1]!, line: lineAt(match.index), typeOnly: false });
  }
  return found.sort((a, b) => a.line - b.line);
}

/** Cycles of a graph (strongly connected components with more than one node, or a node importing itself). */
function cycles(edges: Map<string, Set<string>>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string): void => {
    indices.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!indices.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indices.get(w)!));
    }
    if (low.get(v) === indices.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || edges.get(v)?.has(v)) components.push(component.sort());
    }
  };
  for (const v of [...edges.keys()].sort()) if (!indices.has(v)) visit(v);
  return components;
}

/** Whether a path under src/ is one a rule names (a trailing "/" names a folder). */
function named(rel: string, paths: readonly string[]): boolean {
  return paths.some((p) => (p.endsWith("/") ? rel.startsWith(p) : rel === p));
}

/** The [start, end) offsets of the body of each named function declaration of code. */
function functionBodies(code: string, names: readonly string[]): [number, number][] {
  const bodies: [number, number][] = [];
  for (const name of names) {
    for (const match of code.matchAll(new RegExp(`\\bfunction\\s+${name}\\s*\\(`, "g"))) {
      let at = match.index + match[0].length;
      for (let depth = 1; depth > 0 && at < code.length; at++)
        depth += code[at] === "(" ? 1 : code[at] === ")" ? -1 : 0;
      const start = code.indexOf("{", at);
      let end = start + 1;
      for (let depth = 1; depth > 0 && end < code.length; end++)
        depth += code[end] === "{" ? 1 : code[end] === "}" ? -1 : 0;
      bodies.push([start, end]);
    }
  }
  return bodies;
}

/** Uses of a rule's pattern in a file of its `only` that lie outside the functions `within` names. */
function usesOutside(rel: string, code: string, name: string, rule: UseRule): LayerFinding[] {
  const within = rule.within?.[rel];
  if (!within) return [];
  const bodies = functionBodies(code, within.functions);
  const findings: LayerFinding[] = [];
  for (const match of code.matchAll(new RegExp(rule.pattern, "gm"))) {
    if (bodies.some(([start, end]) => match.index > start && match.index < end)) continue;
    const line = code.slice(0, match.index).split("\n").length;
    findings.push({
      kind: "rule",
      message: `${rel}:${line} ${rule.what} (\`${match[0].trim()}\`) outside ${within.functions.join(", ")} (rule "${name}"): ${within.why}`,
    });
  }
  return findings;
}

/** Every problem of the source tree at srcDir, in a stable order. */
export function checkLayers(srcDir: string, config: LayerConfig, log?: (edge: string) => void): LayerFinding[] {
  const { layers, allow = {}, rules = {} } = config;
  const rank = new Map<string, number>();
  for (const [i, units] of layers.entries()) for (const unit of units) rank.set(unit, i);
  const findings: LayerFinding[] = [];
  const edges = new Map<string, Set<string>>();
  const fileEdges = new Map<string, Set<string>>();
  const unlisted = new Set<string>();
  const ruleFindings: LayerFinding[] = [];
  for (const file of sourceFiles(srcDir).sort()) {
    const from = unitOf(srcDir, file)!;
    const rel = path.relative(srcDir, file);
    if (!rank.has(from)) unlisted.add(from);
    const text = readFileSync(file, "utf8");
    for (const [name, rule] of Object.entries(rules)) {
      if (named(rel, rule.only)) ruleFindings.push(...usesOutside(rel, withoutComments(text), name, rule));
      if (named(rel, rule.only) || (rule.exceptions && rel in rule.exceptions)) continue;
      const code = withoutComments(text);
      const match = new RegExp(rule.pattern, "m").exec(code);
      if (match) {
        const line = code.slice(0, match.index).split("\n").length;
        ruleFindings.push({
          kind: "rule",
          message: `${rel}:${line} ${rule.what} (\`${match[0].trim()}\`): only ${rule.only.join(", ")} may (rule "${name}"); move it there, or list the file under rules.${name}.exceptions with its reason`,
        });
      }
    }
    fileEdges.set(rel, fileEdges.get(rel) ?? new Set());
    for (const { specifier, line, typeOnly } of importsOf(text)) {
      const to = unitOf(srcDir, path.resolve(path.dirname(file), specifier));
      const target = path.relative(srcDir, path.resolve(path.dirname(file), specifier)).replace(/\.js$/, ".ts");
      if (to !== undefined && !typeOnly) fileEdges.get(rel)!.add(target);
      if (to === undefined || to === from) continue;
      // Every import between folders counts for cycles, a type-only or an allowed one too.
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)!.add(to);
      log?.(`${from} -> ${to}  ${rel}:${line} ${specifier}`);
      if (`${rel} -> ${target}` in allow) continue;
      const [a, b] = [rank.get(from), rank.get(to)];
      if (a !== undefined && b !== undefined && b > a) {
        findings.push({
          kind: "upward",
          message: `${rel}:${line} imports ${specifier}: ${from}/ may not import ${to}/, a layer above it`,
        });
      }
    }
  }
  for (const unit of [...unlisted].sort()) {
    findings.push({ kind: "unlisted", message: `src/${unit} is in no layer: add it to scripts/layers.json` });
  }
  for (const component of cycles(edges)) {
    findings.push({ kind: "cycle", message: `folders import each other: ${component.join(" <-> ")}` });
  }
  for (const component of cycles(fileEdges)) {
    findings.push({ kind: "cycle", message: `files import each other at run time: ${component.join(" <-> ")}` });
  }
  return [...findings, ...ruleFindings];
}

/** Each source file under srcDir (relative path) with the source files it imports at run time. */
export function runtimeImports(srcDir: string): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(srcDir)) {
    const rel = path.relative(srcDir, file);
    const targets = new Set<string>();
    for (const { specifier, typeOnly } of importsOf(readFileSync(file, "utf8"))) {
      if (typeOnly) continue;
      const target = path.relative(srcDir, path.resolve(path.dirname(file), specifier)).replace(/\.js$/, ".ts");
      if (!target.startsWith("..")) targets.add(target);
    }
    graph.set(rel, targets);
  }
  return graph;
}

/**
 * What a module reaches at run time (itself excluded), and which of those are not leaves (they
 * import another source file at run time): how much a reader may have to open to follow it.
 */
export function runtimeReach(srcDir: string, file: string): { reached: string[]; nonLeaves: string[] } {
  const graph = runtimeImports(srcDir);
  const seen = new Set<string>();
  const stack = [...(graph.get(file) ?? [])];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (seen.has(next) || next === file) continue;
    seen.add(next);
    stack.push(...(graph.get(next) ?? []));
  }
  const reached = [...seen].sort();
  return { reached, nonLeaves: reached.filter((f) => (graph.get(f)?.size ?? 0) > 0) };
}

function main(): void {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  const config = JSON.parse(readFileSync(path.join(root, "scripts", "layers.json"), "utf8")) as LayerConfig;
  // --edges prints every import between folders, for redesigning the layers.
  const log = process.argv.includes("--edges") ? (edge: string) => console.log(edge) : undefined;
  const findings = checkLayers(path.join(root, "src"), config, log);
  for (const finding of findings) console.error(`check-layers: ${finding.message}`);
  if (findings.length > 0) {
    console.error(`check-layers: ${findings.length} problem(s); the layers are listed in scripts/layers.json.`);
    process.exitCode = 1;
  } else
    console.log(
      `check-layers: ${config.layers.flat().length} folders, no upward import, no cycle, rules held: ${Object.keys(config.rules ?? {}).join(", ")}`,
    );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
