#!/usr/bin/env node
import { runCommand } from './run.js';

// The bin entry: runs one command; its errors become messages and exit codes (runCommand).

process.exitCode = await runCommand(process.argv.slice(2), {
  stdout: (text: string) => void process.stdout.write(text),
  stderr: (text: string) => void process.stderr.write(text),
});
