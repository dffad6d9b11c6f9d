import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Facts about the source tree that anyone can check from it (docs/ARCHITECTURE.md): no
// import circle, small rooms and files, no agent named where agents are not, no host told
// apart by its name, and no comment that cites a file outside the repository.

const ROOT = join(import.meta.dirname, '..', '..');

function walk(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) walk(path, out);
    else if (/\.tsx?$/.test(entry.name)) out.push(path);
  }
  return out;
}
const SOURCES = [...walk('src'), ...walk('components')];
const text = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

const IMPORT = /(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

/** The files each source file imports (type imports too: a circle of types is a circle). */
function importGraph(): Map<string, string[]> {
  const known = new Set(SOURCES);
  const graph = new Map<string, string[]>();
  for (const file of SOURCES) {
    const targets: string[] = [];
    for (const m of text(file).matchAll(IMPORT)) {
      const spec = (m[1] ?? m[2])!;
      const base = relative(ROOT, resolve(ROOT, dirname(file), spec)).replace(/\.js$/, '');
      const target = [`${base}.ts`, `${base}.tsx`].find((t) => known.has(t));
      if (target) targets.push(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** Every import circle, each as the files along it (Tarjan's strongly connected components). */
export function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('the source tree', () => {
  it('has no import circle', () => {
    expect(circles(importGraph())).toEqual([]);
  });

  it('finds a circle when there is one (the check can fail)', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(circles(graph)).toEqual([['a', 'b', 'c']]);
  });

  it('has no folder of src/ with more than 15 files', () => {
    const crowded: string[] = [];
    const look = (dir: string): void => {
      const entries = readdirSync(join(ROOT, dir), { withFileTypes: true });
      const files = entries.filter((e) => e.isFile()).length;
      if (files > 15) crowded.push(`${dir} (${files} files)`);
      for (const e of entries) if (e.isDirectory()) look(`${dir}/${e.name}`);
    };
    look('src');
    expect(crowded).toEqual([]);
  });

  it('has no source file over 300 lines', () => {
    const long = SOURCES.map((f) => [f, text(f).split('\n').length - 1] as const).filter(([, n]) => n > 300);
    expect(long).toEqual([]);
  });

  it('names no agent in the hook command (it asks the agent registry)', () => {
    for (const file of ['src/cli/commands/hook.ts', 'src/agents/hook-relay.ts'])
      expect(text(file)).not.toMatch(/claude|codex/i);
  });

  it('tells agents apart by what they can do, not by their name, outside src/agents', () => {
    const byName = SOURCES.filter((f) => !f.startsWith('src/agents/')).filter((f) =>
      /\.name\s*[!=]==\s*['"](command|claude|codex)['"]/.test(text(f)),
    );
    expect(byName).toEqual([]);
  });

  it('tells hosts apart by what they can do, not by their name, outside src/hosts', () => {
    const byName = SOURCES.filter((f) => !f.startsWith('src/hosts/')).filter((f) =>
      /\bhost\.name\s*[!=]==|\.host\s*[!=]==\s*['"]/.test(text(f)),
    );
    expect(byName).toEqual([]);
  });

  it('cites no file outside the repository', () => {
    const cites = SOURCES.filter((f) => /SPEC §|reference\/[a-z-]+\.md/.test(text(f)));
    expect(cites).toEqual([]);
  });

  it('reads the files it checks', () => {
    expect(SOURCES.length).toBeGreaterThan(150);
    expect(statSync(join(ROOT, 'src/cli/commands/hook.ts')).isFile()).toBe(true);
  });
});
