import { resolve } from 'node:path';
import { defineConfig } from 'rolldown';

// The three bundles of `npm run build` (tsc writes dist/src first): the CLI (one entry, its
// commands chunks loaded when used), the side script run on other machines, and the pty
// worker. docs/PERFORMANCE.md "first frame, session 12" says why the CLI is built as it is.

/**
 * React, its reconciler, its scheduler and its JSX runtime ship a development and a
 * production build side by side and pick one by NODE_ENV when first loaded. lanes draws with
 * the production build (src/tui/production-mode.ts, DECISIONS "TUI"), so the bundle keeps
 * only that one: the development builds (~620 KB) were compiled by node at every start of a
 * TUI without ever running. Only packages' code: lanes' own NODE_ENV handling is left alone.
 */
const reactProductionOnly = {
  name: 'react-production-only',
  transform: {
    filter: { id: /[\\/]node_modules[\\/](react|react-reconciler|scheduler)[\\/]/, code: 'NODE_ENV' },
    handler(code) {
      return code.replaceAll('process.env.NODE_ENV', '"production"');
    },
  },
};

/**
 * Every `import 'string-width'` of a package (Ink's string-width 8, wrap-ansi's 7) gets that
 * copy behind src/tui/width/narrow-width.ts's fast path: the same widths, without
 * segmenting lines of box drawing into graphemes at every frame.
 */
const NARROW = '\0narrow-width:';
const narrowWidth = {
  name: 'narrow-width',
  async resolveId(source, importer, options) {
    if (source !== 'string-width' || !importer || importer.startsWith(NARROW)) return null;
    const real = await this.resolve(source, importer, { ...options, skipSelf: true });
    return real && !real.external ? `${NARROW}${real.id}` : null;
  },
  async load(id) {
    if (!id.startsWith(NARROW)) return null;
    const real = id.slice(NARROW.length);
    const strip = await this.resolve('strip-ansi', real);
    if (!strip) throw new Error(`narrow-width: no strip-ansi beside ${real}`);
    return [
      `import real from ${JSON.stringify(real)};`,
      `import stripAnsi from ${JSON.stringify(strip.id)};`,
      `import { withNarrowPath } from ${JSON.stringify(resolve(import.meta.dirname, 'dist/src/tui/width/narrow-width.js'))};`,
      'export default withNarrowPath(real, stripAnsi);',
    ].join('\n');
  },
};

/**
 * What `lanes plan check` loads (the plan, its settings and checks, zod, picomatch) in one
 * chunk: node's ESM loader costs about a millisecond a module, and left to itself the
 * bundler splits these into as many small chunks as there are commands sharing them
 * differently (19 for plan check). `lanes start` loads all of them too, before its first frame.
 */
const PLAN_CHECK =
  /[\\/]dist[\\/]src[\\/](cli[\\/](commands[\\/]plan-check|lanes-command|plural|args|batch-run[\\/]style)|core[\\/](basics[\\/](errors|ids|issues|canonical-json)|settings[\\/](batch-settings|preferences|config|lane-directives)|plan[\\/](plan|preference-values|waves|scope))|store[\\/](config-file|lane-directives-file|plan-file))\.js$|[\\/]node_modules[\\/](zod|picomatch)[\\/]/;

/**
 * What a batch runs with and its confirmation does not (the coordinator, the tick, the store,
 * the lock): one chunk, loaded after the first frame, or beside a headless start's
 * preflight. Left to itself the bundler splits these into ~25 chunks, each a module for node's
 * loader to resolve, read and link before the first tick.
 */
const BATCH =
  /[\\/]dist[\\/]src[\\/](cli[\\/](batch-run[\\/](stop-lines|progress|run-batch|ending|batch-ports|print-report)|exit-codes)|store[\\/](lock|requests|batch-files|batch-store|journal|task-store|safe-fs)|core[\\/](records[\\/]new-batch-record|(rules|steps|tick|whole-batch|turns|ways-out)[\\/][^\\/]+|machines[\\/]placement)|coordinator[\\/](?!executors[\\/]launch[\\/]executor-launch).+|process[\\/](system-clock|crash-points|change-times)|git[\\/]((batch|delivery|ports)[\\/][^\\/]+|worktree[\\/](clean-proof|worktree-admin|tree-diff|index-entries|index-tree|private-index))|qa[\\/][^\\/]+|agents[\\/][^\\/]+)\.js$|[\\/]node_modules[\\/](graceful-fs|retry|proper-lockfile)[\\/]/;

const quiet = { logLevel: 'warn' };

export default defineConfig([
  {
    ...quiet,
    input: 'dist/src/cli/main.js',
    platform: 'node',
    // (the entry exports nothing; the batch group's captured modules leave their dependencies
    // where they were, which needs entries whose exports may grow)
    preserveEntrySignatures: 'allow-extension',
    external: ['node-pty', 'react-devtools-core'],
    plugins: [reactProductionOnly, narrowWidth],
    output: {
      dir: 'dist/lanes',
      cleanDir: true,
      format: 'esm',
      minify: 'dce-only',
      codeSplitting: {
        groups: [
          { name: 'plan', test: PLAN_CHECK },
          { name: 'batch', test: BATCH, includeDependenciesRecursively: false },
        ],
      },
    },
  },
  {
    ...quiet,
    input: 'dist/src/machines/side/main.js',
    platform: 'node',
    output: { file: 'dist/lanes/machine.js', format: 'esm', codeSplitting: false, minify: true },
  },
  {
    ...quiet,
    input: 'dist/src/hosts/pty/pty-worker.js',
    platform: 'node',
    external: ['node-pty'],
    output: { file: 'dist/lanes/pty-worker.js', format: 'esm', codeSplitting: false },
  },
]);
