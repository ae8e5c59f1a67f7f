/**
 * The repository's import graph, read from the TypeScript sources themselves (every `import`, `export … from`
 * and `import()` with a relative specifier, type-only imports included: a type import is still a dependency
 * a reader must follow). Used by the structure test and by `npm run check:imports`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';

/** Folders of product code whose imports are checked (tests may reach into a folder to test its parts). */
export const PRODUCT_ROOTS = ['shared', 'functions', 'infra', 'cli', 'local'];

/**
 * Folders whose internal cycles are a grammar's own mutual recursion (an expression holds a subquery, a
 * subquery holds expressions); the only cycles allowed, and only while every file of the cycle is inside.
 */
export const GRAMMAR_FOLDERS = ['local/emulators/spanner/sql'];

/**
 * The folders entered from outside only through their `index.ts`: the use-case folders of `shared/app/`, and
 * each grammar folder (its index says why its files may import each other).
 */
export function doorFolders(root: string): string[] {
  const app = join(root, 'shared/app');
  const out: string[] = [];
  const visit = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      const sub = join(dir, e.name);
      if (existsSync(join(sub, 'index.ts'))) out.push(relative(root, sub).split(sep).join('/'));
      else visit(sub);
    }
  };
  visit(app);
  for (const g of GRAMMAR_FOLDERS) if (existsSync(join(root, g, 'index.ts'))) out.push(g);
  return out;
}

function sourceFiles(root: string, dir: string, out: string[]): void {
  for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory()) {
      if (e.name !== 'node_modules') sourceFiles(root, p, out);
    } else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') && !e.name.endsWith('.test.ts'))
      out.push(p);
  }
}

const SPECIFIER = /(?:^|[^\w.])(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

function resolve(root: string, from: string, spec: string): string | null {
  const base = normalize(join(dirname(from), spec))
    .split(sep)
    .join('/');
  for (const c of [`${base}.ts`, `${base}/index.ts`, base.replace(/\.js$/, '.ts')]) {
    const p = join(root, c);
    if (existsSync(p) && statSync(p).isFile()) return c;
  }
  return null;
}

/** Every product file and the product files it imports. */
export function importGraph(root: string): Map<string, Set<string>> {
  const files: string[] = [];
  for (const r of PRODUCT_ROOTS) if (existsSync(join(root, r))) sourceFiles(root, r, files);
  const graph = new Map<string, Set<string>>();
  for (const f of files) {
    const text = readFileSync(join(root, f), 'utf8');
    const deps = new Set<string>();
    for (const m of text.matchAll(SPECIFIER)) {
      const target = resolve(root, f, m[1] as string);
      if (target && PRODUCT_ROOTS.some((r) => target.startsWith(`${r}/`))) deps.add(target);
    }
    graph.set(f, deps);
  }
  return graph;
}

/** The strongly connected components of more than one file (Tarjan), i.e. the import cycles. */
export function cycles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const strong = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v) as number, idx.get(w) as number));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1 || graph.get(v)?.has(v)) out.push(comp.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) strong(v);
  return out;
}

/** Cycles that are not a grammar's recursion inside its own folder. */
export function forbiddenCycles(graph: Map<string, Set<string>>): string[][] {
  return cycles(graph).filter((c) => !GRAMMAR_FOLDERS.some((g) => c.every((f) => f.startsWith(`${g}/`))));
}

/** Imports from outside a use-case folder into one of its files other than its `index.ts`. */
export function doorViolations(root: string, graph: Map<string, Set<string>>): string[] {
  const doors = doorFolders(root).sort((a, b) => b.length - a.length);
  const out: string[] = [];
  for (const [from, deps] of graph) {
    for (const to of deps) {
      const door = doors.find((d) => to.startsWith(`${d}/`));
      if (!door || from.startsWith(`${door}/`) || to === `${door}/index.ts`) continue;
      out.push(`${from} imports ${to}: enter ${door}/ through its index.ts`);
    }
  }
  return out.sort();
}

/** Prints the checks; exits non-zero on a forbidden cycle or a door violation. */
if (require.main === module) {
  const root = join(__dirname, '..', '..');
  const graph = importGraph(root);
  const bad = forbiddenCycles(graph);
  const doors = doorViolations(root, graph);
  const edges = [...graph.values()].reduce((n, s) => n + s.size, 0);
  console.log(
    `${graph.size} product files, ${edges} imports, ${cycles(graph).length} cycles (${bad.length} forbidden)`,
  );
  for (const c of bad) console.log(`cycle: ${c.join(' -> ')}`);
  for (const d of doors) console.log(d);
  process.exitCode = bad.length || doors.length ? 1 : 0;
}
