import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { FromWorker, ToWorker } from './pty-messages.js';

// The main thread's end of the pty worker (src/hosts/pty/pty-worker.ts): one worker for
// every pty pane of the process, started with the first one, holding the process open
// only while a pane is open. Messages for a pane go to the handler its opener registered.

type Handler = (message: FromWorker) => void;

/**
 * Where the worker's script is: beside this module, in the bundle (dist/lanes/pty-worker.js,
 * its own entry) and in tsc's output alike. Run from the TypeScript sources (the tests), the
 * worker loads pty-worker.ts through a hook that strips the types (typescript's
 * transpileModule), as nothing else in node 20 runs TypeScript.
 */
function startWorker(): Worker {
  const here = fileURLToPath(import.meta.url);
  if (!here.endsWith('.ts')) return new Worker(join(dirname(here), 'pty-worker.js'));
  const require = createRequire(import.meta.url);
  return new Worker(SOURCE_BOOT, {
    eval: true,
    workerData: {
      hooks: `data:text/javascript,${encodeURIComponent(TYPE_STRIPPING_HOOKS)}`,
      typescript: pathToFileURL(require.resolve('typescript')).href,
      entry: pathToFileURL(join(dirname(here), 'pty-worker.ts')).href,
    },
  });
}

const SOURCE_BOOT = `
const { register } = require('node:module');
const { workerData } = require('node:worker_threads');
register(workerData.hooks, { data: { typescript: workerData.typescript } });
import(workerData.entry);
`;

const TYPE_STRIPPING_HOOKS = `
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
let ts;
export async function initialize(data) { ts = (await import(data.typescript)).default; }
export async function resolve(specifier, context, next) {
  if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.endsWith('.ts')) {
    const url = new URL(specifier.replace(/\\.js$/, '.ts'), context.parentURL);
    if (existsSync(fileURLToPath(url))) return { url: url.href, shortCircuit: true };
  }
  return next(specifier, context);
}
export async function load(url, context, next) {
  if (!url.endsWith('.ts')) return next(url, context);
  const source = readFileSync(fileURLToPath(url), 'utf8');
  const options = { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, esModuleInterop: true };
  const { outputText } = ts.transpileModule(source, { compilerOptions: options, fileName: fileURLToPath(url) });
  return { format: 'module', source: outputText, shortCircuit: true };
}
`;

class PtyThread {
  private worker: Worker | null = null;
  private readonly handlers = new Map<number, Handler>();
  private lastId = 0;

  /** Registers a pane's handler; returns its id (for `post`) and the function that ends it. */
  add(handler: Handler): { id: number; remove: () => void } {
    const id = ++this.lastId;
    this.handlers.set(id, handler);
    const worker = this.start();
    worker.ref();
    return {
      id,
      remove: () => {
        if (!this.handlers.delete(id)) return;
        if (this.handlers.size === 0) worker.unref();
      },
    };
  }

  post(message: ToWorker): void {
    this.start().postMessage(message);
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker();
    worker.on('message', (message: FromWorker) => this.handlers.get(message.id)?.(message));
    // A worker that fails ends every pane it held (their sessions report an unknown exit).
    worker.on('error', (error) => {
      process.stderr.write(`lanes: the pty worker failed: ${error.message}\n`);
    });
    worker.on('exit', () => {
      this.worker = null;
      for (const [id, handler] of [...this.handlers]) {
        handler({ t: 'ended', id, exitCode: -1, signal: 0 });
        handler({ t: 'exit', id });
      }
    });
    worker.unref();
    this.worker = worker;
    return worker;
  }
}

/** The process's one pty worker. */
export const ptyThread = new PtyThread();
