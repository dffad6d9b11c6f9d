import { createInterface } from 'node:readline';
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
// - `node machine.js serve`: the same ops, one a line (`{"id":n,"request":{…}}` in,
//   `{"id":n,"answer":{…}}` out, answered as they end, several at once), for as long as
//   stdin is open: the link keeps one a machine, so an op costs neither a node start nor
//   an ssh session (the figure: docs/BENCH.md "Remote lanes").
// Git runs in it (no process helper to start first).

process.env.LANES_PROCESS_HELPER ??= '0';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Answers each request line until stdin ends and every answer is written. */
async function serve(): Promise<number> {
  const pending = new Set<Promise<void>>();
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  // The link went (nobody reads the answers): no new op, but those begun end first, so none
  // stops halfway (a session made and never signalled ready, a commit without its ref).
  let linkGone = false;
  process.stdout.on('error', () => {
    linkGone = true;
    lines.close();
  });
  for await (const text of lines) {
    if (!text.trim()) continue;
    let id: unknown = null;
    let request: unknown = null;
    try {
      ({ id, request } = JSON.parse(text) as { id: unknown; request: unknown });
    } catch {
      // (answered below as a bad request, its id unknown)
    }
    const one = answer(JSON.stringify(request ?? null)).then(({ answer: line }) => {
      if (!linkGone) process.stdout.write(`${JSON.stringify({ id, answer: line })}\n`);
    });
    pending.add(one);
    void one.finally(() => pending.delete(one));
  }
  await Promise.all(pending);
  return 0;
}

const write = (stream: NodeJS.WriteStream) => (text: string) => void stream.write(text);

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'op' && rest.length === 0) {
    const { answer: line, exitCode } = await answer(await readStdin());
    await new Promise<void>((resolve) => process.stdout.write(`${JSON.stringify(line)}\n`, () => resolve()));
    return exitCode;
  }
  if (command === 'serve' && rest.length === 0) return serve();
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
    'usage: node machine.js op  (one JSON request on stdin) | node machine.js serve | node machine.js hook <kind>\n',
  );
  return BAD_REQUEST_EXIT;
}

// (no top-level await: the bundle is CommonJS, docs/DECISIONS.md "First frame: the bundle is
// CommonJS, with a code cache")
void main(process.argv.slice(2)).then((code) => {
  RepoSessions.closeAll();
  process.exit(code);
});
