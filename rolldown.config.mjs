import { resolve } from 'node:path';
import { defineConfig } from 'rolldown';

// The three bundles of `npm run build` (tsc writes dist/src first): the CLI (one entry, its
// commands chunks loaded when used), the side script run on other machines, and the pty
// worker. docs/PERFORMANCE.md "first frame, session 12" says why the CLI is built as it is;
// all three are CommonJS, so that node 20 can keep their compiled code (src/process/code-cache.ts,
// docs/DECISIONS.md "First frame: the bundle is CommonJS, with a code cache").

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
    // (the copy itself is required on the first width the fast path leaves to it: its
    // segmenter and Unicode regexes cost ~20 ms to make, and a frame of narrow text needs none)
    return [
      `import stripAnsi from ${JSON.stringify(strip.id)};`,
      `import { withNarrowPath } from ${JSON.stringify(resolve(import.meta.dirname, 'dist/src/tui/width/narrow-width.js'))};`,
      'let real;',
      `const measure = (text, options) => (real ??= require(${JSON.stringify(real)}).default)(text, options);`,
      'export default withNarrowPath(measure, stripAnsi);',
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

/**
 * yoga (Ink's layout) starts its WebAssembly with a top-level await, which CommonJS cannot
 * have. Node compiles and instantiates a module of yoga's size synchronously, and yoga's
 * loader takes an `instantiateWasm` hook that it calls before anything else: its index starts
 * yoga with that hook and the wasm bytes its loader held inline (taken out of the loader, so
 * they are in the bundle once). A yoga whose loader no longer fits fails the build, not a start.
 */
const yogaSync = {
  name: 'yoga-sync',
  transform: {
    filter: { id: /[\\/]yoga-layout[\\/]dist[\\/](src[\\/]index|binaries[\\/]yoga-wasm-base64-esm)\.js$/ },
    handler(code, id) {
      if (/[\\/]index\.js$/.test(id)) return startYogaSynchronously(code, id);
      const inline = /data:application\/octet-stream;base64,([A-Za-z0-9+/=]+)/.exec(code);
      if (!inline) throw new Error(`yoga-sync: no inline wasm in ${id}`);
      return `${code.replace(inline[0], 'data:application/octet-stream;base64,')}\nexport const YOGA_WASM_BASE64 = ${JSON.stringify(inline[1])};\n`;
    },
  },
};

function startYogaSynchronously(code, id) {
  const loaderImport = "import loadYoga from '../binaries/yoga-wasm-base64-esm.js';";
  const start = 'const Yoga = wrapAssembly(await loadYoga());';
  if (!code.includes(loaderImport) || !code.includes(start))
    throw new Error(`yoga-sync: ${id} is not the index it was written for`);
  return code
    .replace(
      loaderImport,
      "import loadYoga, { YOGA_WASM_BASE64 } from '../binaries/yoga-wasm-base64-esm.js';",
    )
    .replace(
      start,
      [
        "const yogaWasm = new WebAssembly.Module(Buffer.from(YOGA_WASM_BASE64, 'base64'));",
        'const yogaModule = {',
        '  instantiateWasm(imports, started) {',
        '    const instance = new WebAssembly.Instance(yogaWasm, imports);',
        '    started(instance);',
        '    return instance.exports;',
        '  },',
        '};',
        'loadYoga(yogaModule);',
        "if (!yogaModule.calledRun) throw new Error('yoga did not start synchronously');",
        'const Yoga = wrapAssembly(yogaModule);',
      ].join('\n'),
    );
}

/**
 * src/tui/frames/ink-output-class.ts reaches Ink's Output class by its file beside Ink's entry
 * (Ink does not export it). In the bundle, Ink is no file of node_modules: the module is
 * replaced by one that imports Ink's output.js itself, which the bundle links to the same
 * module Ink's renderer draws with.
 */
const inkOutput = {
  name: 'ink-output',
  async load(id) {
    if (!/[\\/]dist[\\/]src[\\/]tui[\\/]frames[\\/]ink-output-class\.js$/.test(id)) return null;
    const ink = await this.resolve('ink', id);
    if (!ink) throw new Error(`ink-output: no ink beside ${id}`);
    const output = resolve(ink.id, '..', 'output.js');
    return [
      `import Output from ${JSON.stringify(output)};`,
      'export async function inkOutputClass() {',
      '  return Output;',
      '}',
    ].join('\n');
  },
};

/**
 * Ink's reconciler awaits, at its top level, React's devtools and its own package.json when
 * the DEV variable is set: lanes never draws with devtools (DECISIONS "TUI"), and CommonJS
 * cannot await there. Both branches become the ones taken without DEV.
 */
const inkWithoutDevtools = {
  name: 'ink-without-devtools',
  transform: {
    filter: { id: /[\\/]ink[\\/]build[\\/]reconciler\.js$/ },
    handler(code, id) {
      const devtools = "if (isDev()) {\n    try {\n        await import('./devtools.js');";
      const packageJson = 'isDev()\n    ? await loadPackageJson()';
      if (!code.includes(devtools) || !code.includes(packageJson))
        throw new Error(`ink-without-devtools: ${id} is not the reconciler it was written for`);
      return code.replace(devtools, 'if (false) {\n    try {').replace(packageJson, 'false\n    ? {}');
    },
  },
};

/** dist/lanes/package.json: the bundle's .js files are CommonJS (the package's own are ES modules). */
const commonjsFolder = {
  name: 'commonjs-folder',
  generateBundle() {
    this.emitFile({ type: 'asset', fileName: 'package.json', source: '{ "type": "commonjs" }\n' });
  },
};

const quiet = { logLevel: 'warn' };
const commonjs = { format: 'cjs', strict: true };

export default defineConfig([
  {
    ...quiet,
    input: 'dist/src/cli/main.js',
    platform: 'node',
    // (the entry exports nothing; the batch group's captured modules leave their dependencies
    // where they were, which needs entries whose exports may grow)
    preserveEntrySignatures: 'allow-extension',
    external: ['node-pty', 'react-devtools-core'],
    plugins: [reactProductionOnly, narrowWidth, yogaSync, inkWithoutDevtools, inkOutput, commonjsFolder],
    output: {
      dir: 'dist/lanes',
      cleanDir: true,
      ...commonjs,
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
    output: { file: 'dist/lanes/machine.js', ...commonjs, codeSplitting: false, minify: true },
  },
  {
    ...quiet,
    input: 'dist/src/hosts/pty/pty-worker.js',
    platform: 'node',
    external: ['node-pty'],
    output: { file: 'dist/lanes/pty-worker.js', ...commonjs, codeSplitting: false },
  },
]);
