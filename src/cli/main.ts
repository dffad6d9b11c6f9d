#!/usr/bin/env node
import { runCommand } from './run.js';

// The bin entry: runs one command; its errors become messages and exit codes (runCommand).
// A reader that stops early (`lanes log | head -1`) is no error: lanes ends quietly, 0.

for (const stream of [process.stdout, process.stderr])
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(0);
  });

process.exitCode = await runCommand(process.argv.slice(2), {
  stdout: (text: string) => void process.stdout.write(text),
  stderr: (text: string) => void process.stderr.write(text),
});
