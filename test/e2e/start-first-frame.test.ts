import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { partsOf } from '../helpers/module-parts.js';
import { CLI, makeRepo, tempDir } from '../helpers/repo.js';
import { Tmux, terminalEnv } from '../helpers/tmux.js';
import { until } from '../helpers/until.js';

// `lanes start`'s confirmation in a real terminal waits only for what it draws (docs/
// PERFORMANCE.md "first frame, session 12"): the coordinator, the pty host (xterm's parser,
// node-pty), the batch store of a repository without batches and React's development build
// load after it, if at all. And every copy of
// string-width in the bundle measures behind the narrow fast path (src/tui/width/).

const HOOK = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'module-log.mjs');
const BUNDLE = dirname(CLI);

/** What a module's text shows it holds, by a mark of each part kept off the first frame. */
const PARTS: [string, RegExp][] = [
  ['the coordinator', /\bvar Coordinator = class\b|\bclass Coordinator\b/],
  ["xterm's parser", /"xterm\.js: "/],
  ["React's development build", /react(-reconciler)?\.development\.js/],
  ['the batch store (where no batch was made yet)', /\bvar BatchStore = class\b|\bclass BatchStore\b/],
];

let tmux: Tmux | null = null;
afterEach(async () => {
  await tmux?.kill();
  tmux = null;
});

describe('lanes start, first frame', () => {
  it('shows the confirmation before loading the coordinator, the pty host or React’s development build', async () => {
    const dir = tempDir();
    const repo = await makeRepo();
    const plan = join(dir, 'plan.json');
    writeFileSync(
      plan,
      JSON.stringify({
        batch: 'first',
        executor: 'script',
        children: [
          { id: 'a', goal: 'a', scope: ['a.txt'], acceptance: [{ id: 'ok', run: ['true'] }], run: 'true' },
        ],
      }),
    );
    const log = join(dir, 'modules.log');
    tmux = new Tmux(terminalEnv({ LANES_MODULE_LOG: log }));
    await tmux.start([process.execPath, '--import', HOOK, CLI, 'start', plan], {
      cwd: repo,
      cols: 160,
      rows: 48,
    });
    await tmux.waitFor(/Start this batch\?/, 20_000);
    const lines = await until(
      async () => {
        const text = existsSync(log) ? readFileSync(log, 'utf8') : '';
        return text.includes('FRAME\n') ? text.split('\n') : null;
      },
      'the frame in the module log',
      { timeoutMs: 5_000, everyMs: 50 },
    );
    const before = lines.slice(0, lines.indexOf('FRAME'));
    expect(before.some((url) => url.endsWith('/lanes/main.js'))).toBe(true);
    // (the log sees the bundle's chunks: Ink's is among them, the frame is drawn with it)
    expect(before.flatMap((url) => partsOf(url, [['Ink', /\bvar Ink = class\b|\bclass Ink\b/]]))).toContain(
      'Ink',
    );
    const loaded = before.flatMap((url) =>
      partsOf(url, PARTS).map((part) => `${part} (${url.split('/').pop()})`),
    );
    expect(loaded).toEqual([]);
    await tmux.keys('n');
    await tmux.waitFor(/not confirmed; nothing was written[\s\S]*EXIT=2/, 20_000);
  });

  it('measures widths behind the narrow fast path in every copy of string-width it bundles', () => {
    // (the CLI's chunks: the side script and the pty worker are bundles of their own, without Ink)
    const chunks = readdirSync(BUNDLE).filter(
      (f) => f.endsWith('.js') && f !== 'machine.js' && f !== 'pty-worker.js',
    );
    const text = chunks.map((f) => readFileSync(join(BUNDLE, f), 'utf8')).join('\n');
    // (each copy is one function named stringWidth, renamed apart by the bundler, reached
    // only through its module's exports, which the bundle requires on the first width the
    // fast path leaves to it: that exports object is used once, in the function passed to
    // withNarrowPath)
    const word = (name: string) => `(?<![\\w$])${name.replaceAll('$', '\\$')}(?![\\w$])`;
    const uses = (name: string) => text.split(new RegExp(word(name))).length - 1;
    const copies = [...text.matchAll(/^function (stringWidth(\$\d+)?)\(/gm)].map((m) => m[1]!);
    expect(copies.length).toBeGreaterThanOrEqual(2);
    for (const name of copies) {
      const exportsOf = new RegExp(
        `^var (\\S+) = .*__exportAll\\(\\{ default: \\(\\) => ${word(name)} \\}\\);$`,
        'm',
      ).exec(text)?.[1];
      const measure = exportsOf
        ? new RegExp(`^const (\\S+) = .*${word(exportsOf)}.*$`, 'm').exec(text)?.[1]
        : undefined;
      expect({
        name,
        uses: uses(name),
        exportsUses: exportsOf ? uses(exportsOf) : 0,
        wrapped: measure !== undefined && text.includes(`withNarrowPath(${measure}, `),
      }).toEqual({ name, uses: 2, exportsUses: 2, wrapped: true });
    }
  });
});
