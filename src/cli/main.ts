#!/usr/bin/env node

// The bin entry: runs one command; its errors become messages and exit codes (runCommand).
// A reader that stops early (`lanes log | head -1`) is no error: a command that only reads
// ends there, quietly, with 0; one that runs or changes a batch goes on to its end (a batch
// is not left half done because a pager closed), writing nowhere.

import { useCodeCache } from '../process/code-cache.js';

const argv = process.argv.slice(2);
const READERS = new Set(['log', 'status', 'plan', 'wait', 'help', '--help', '-h', '--version', '-V']);
let i = 0;
while (argv[i] === '-C') i += 2;
const onlyReads = READERS.has(argv[i] ?? 'help') || argv.includes('--help') || argv.includes('-h');

// Before any other chunk of the bundle loads: each compiles through V8's code cache, the one
// kept for this command run as this one is (drawing or not).
useCodeCache(import.meta.url, `${argv[i] ?? 'help'}${process.stdout.isTTY ? '.tty' : ''}`);

// A command that runs a batch starts the process helper (src/git/runner/git-helper.ts)
// before the rest of lanes loads: its node start-up then overlaps all of lanes' own, and
// more of the git before the first tick finds it ready (a fork of the small process this
// still is costs less, too). run.ts warms it again for commands run in-process.
if (!onlyReads && (argv[i] === 'start' || argv[i] === 'resume'))
  void import('../git/runner/git-helper.js').then(({ processHelper }) => processHelper()?.warm());
const closed = new Set<NodeJS.WriteStream>();

for (const stream of [process.stdout, process.stderr])
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    if (onlyReads) process.exit(0);
    closed.add(stream);
  });

const write = (stream: NodeJS.WriteStream) => (text: string) => {
  if (!closed.has(stream)) stream.write(text);
};

// (no top-level await: the bundle is CommonJS, docs/DECISIONS.md "First frame: the bundle is
// CommonJS, with a code cache")
void import('./run.js').then(async ({ runCommand }) => {
  process.exitCode = await runCommand(argv, { stdout: write(process.stdout), stderr: write(process.stderr) });
});
