import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseHookMessage } from '../../core/turns/hook-message.js';
import type { HookMessage, HookReply } from '../../core/turns/hook-message.js';

// The channel agents' hooks reach the running coordinator on: a unix socket in a 0700
// directory of its own under the OS temp dir (a socket path must stay under ~108 bytes,
// and the state dir under .git can be longer; the journal names it). One JSON line in, one JSON line out; every line is checked (zod) before use.

/** A hook message larger than this is not a hook message. */
const MAX_MESSAGE_BYTES = 1024 * 1024;

export type HookHandler = (message: HookMessage) => Promise<HookReply>;

export class HookChannel {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  socketPath: string | null = null;

  constructor(
    private readonly handle: HookHandler,
    private readonly onBadMessage: (problem: string) => void,
  ) {}

  /** Listens at the batch's socket (`key` names the batch); a stale socket file is replaced (the batch lock is held). */
  async open(key: string): Promise<string> {
    const path = socketPathFor(key);
    rmSync(path, { force: true });
    const server = createServer((socket) => this.serve(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
    server.unref();
    this.server = server;
    this.socketPath = path;
    return path;
  }

  private serve(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      if (buffer.length > MAX_MESSAGE_BYTES)
        return this.reply(socket, { verdict: 'refused', reason: 'message too large' });
      const end = buffer.indexOf('\n');
      if (end < 0) return;
      socket.off('data', onData);
      const parsed = parseHookMessage(buffer.slice(0, end));
      if (!parsed.ok) {
        this.onBadMessage(parsed.problem);
        return this.reply(socket, { verdict: 'refused', reason: parsed.problem });
      }
      this.handle(parsed.message).then(
        (reply) => this.reply(socket, reply),
        (error: unknown) =>
          this.reply(socket, { verdict: 'refused', reason: `lanes failed: ${String(error)}` }),
      );
    };
    socket.on('data', onData);
  }

  private reply(socket: Socket, reply: HookReply): void {
    if (!socket.destroyed) socket.end(`${JSON.stringify(reply)}\n`);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    if (this.socketPath) rmSync(this.socketPath, { force: true });
    this.socketPath = null;
  }
}

/** A 0700 directory of this user's under the temp dir, or a fresh private one if that one is not safe. */
function privateDir(): string {
  const uid = process.getuid?.() ?? 0;
  const dir = join(tmpdir(), `lanes-hooks-${uid}`);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch {
    // exists: checked below
  }
  const st = lstatSync(dir);
  if (st.isDirectory() && !st.isSymbolicLink() && st.uid === uid && (st.mode & 0o077) === 0) return dir;
  return mkdtempSync(join(tmpdir(), 'lanes-hooks-')); // someone else's, or open to others: not used
}

export function socketPathFor(key: string): string {
  return join(privateDir(), `${createHash('sha256').update(key).digest('hex').slice(0, 16)}.sock`);
}
