import { relayHook } from '../../agents/hook-relay.js';
import { isLanesError } from '../../core/basics/errors.js';
import { RepoSessions } from '../../git/runner/repo-sessions.js';
import { BAD_REQUEST_EXIT } from '../protocol.js';
import { answer } from './op.js';

// The side script: what lanes runs on a machine (`dist/lanes/machine.js`, copied into the
// machine's root by the coordinator, the one file lanes puts there).
// - `node machine.js op`: one JSON request on stdin (src/machines/protocol.ts), one JSON
//   answer line on stdout.
// - `node machine.js hook <kind>`: exactly `lanes hook <kind>` (the same code,
//   src/agents/hook-relay.ts), to the coordinator's socket forwarded over ssh.
// A short-lived process: git runs in it (no process helper to start first).

process.env.LANES_PROCESS_HELPER ??= '0';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const write = (stream: NodeJS.WriteStream) => (text: string) => void stream.write(text);

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'op' && rest.length === 0) {
    const { answer: line, exitCode } = await answer(await readStdin());
    await new Promise<void>((resolve) => process.stdout.write(`${JSON.stringify(line)}\n`, () => resolve()));
    return exitCode;
  }
  if (command === 'hook') {
    try {
      return await relayHook(
        { cwd: process.cwd(), stdout: write(process.stdout), stderr: write(process.stderr) },
        rest,
      );
    } catch (error) {
      if (!isLanesError(error)) throw error;
      process.stderr.write(`lanes: ${error.message}\n`);
      return error.exitCode;
    }
  }
  process.stderr.write(
    'usage: node machine.js op  (one JSON request on stdin) | node machine.js hook <kind>\n',
  );
  return BAD_REQUEST_EXIT;
}

const code = await main(process.argv.slice(2));
RepoSessions.closeAll();
process.exit(code);
