#!/usr/bin/env node
import { ExitCode, isLanesError } from '../core/errors.js';
import { run } from './run.js';

// The bin entry: runs one command and turns errors into messages and exit codes.

async function main(): Promise<void> {
  const ctx = {
    stdout: (text: string) => void process.stdout.write(text),
    stderr: (text: string) => void process.stderr.write(text),
  };
  let code: number;
  try {
    code = await run(process.argv.slice(2), ctx);
  } catch (error) {
    if (isLanesError(error)) {
      ctx.stderr(`lanes: ${error.message}\n`);
      code = error.exitCode;
    } else {
      ctx.stderr(
        `lanes: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      code = ExitCode.unexpected;
    }
  }
  process.exitCode = code;
}

await main();
