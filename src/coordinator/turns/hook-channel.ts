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
/**
 * A connection that has not sent its line by then is closed; no more than so many are open
 * at once (the rest are closed as they come). A hook sends one line at once: a flood of
 * idle or slow connections must not take the coordinator's descriptors (git needs them).
 */
const IDLE_MS = 10_000;
const MAX_CONNECTIONS = 256;

export interface HookChannelLimits {
  idleMs?: number;
  maxConnections?: number;
}

export type HookHandler = (message: HookMessage) => Promise<HookReply>;

/** Why a socket does not take a message that names this lane (null: it does). */
export type HookAccept = (message: HookMessage) => string | null;

export class HookChannel {
  private server: Server | null = null;
  /** One socket more for each machine (forwarded there): each takes only its machine's lanes. */
  private readonly more = new Map<string, { server: Server; path: string }>();
  private readonly sockets = new Set<Socket>();
  socketPath: string | null = null;
  /** The private dir made because the shared one could not be used: removed on close. */
  private ownDir: string | null = null;

  constructor(
    private readonly handle: HookHandler,
    private readonly onBadMessage: (problem: string) => void,
    private readonly limits: HookChannelLimits = {},
  ) {}

  /** Listens at the batch's socket (`key` names the batch); a stale socket file is replaced (the batch lock is held). */
  async open(key: string): Promise<string> {
    const dir = privateDir();
    if (dir.made) this.ownDir = dir.path;
    const path = join(dir.path, socketName(key));
    this.server = await this.listen(path, null);
    this.socketPath = path;
    return path;
  }

  /**
   * The socket of one machine beside the channel's own (in the same 0700 folder): the same
   * checks, and before them `accept`, so a lane on one machine cannot end a turn of another's.
   */
  async openFor(key: string, machine: string, accept: HookAccept): Promise<string> {
    const known = this.more.get(machine);
    if (known) return known.path;
    const dir = this.ownDir ?? privateDir().path;
    const path = join(dir, socketName(`${key}\0${machine}`));
    this.more.set(machine, { server: await this.listen(path, accept), path });
    return path;
  }

  private async listen(path: string, accept: HookAccept | null): Promise<Server> {
    rmSync(path, { force: true });
    const server = createServer((socket) => this.serve(socket, accept));
    server.maxConnections = this.limits.maxConnections ?? MAX_CONNECTIONS;
    server.on('error', () => {}); // (an accept failing, EMFILE: that connection only)
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
    server.unref();
    return server;
  }

  private serve(socket: Socket, accept: HookAccept | null): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.setTimeout(this.limits.idleMs ?? IDLE_MS, () => socket.destroy());
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      if (buffer.length > MAX_MESSAGE_BYTES) {
        socket.off('data', onData);
        this.onBadMessage('message too large');
        return this.reply(socket, { verdict: 'refused', reason: 'message too large' });
      }
      const end = buffer.indexOf('\n');
      if (end < 0) return;
      socket.off('data', onData);
      socket.setTimeout(0); // (the line is in: the verdict may take the turn's time)
      const parsed = parseHookMessage(buffer.slice(0, end));
      if (!parsed.ok) {
        this.onBadMessage(parsed.problem);
        return this.reply(socket, { verdict: 'refused', reason: parsed.problem });
      }
      const refused = accept?.(parsed.message) ?? null;
      if (refused !== null) {
        this.onBadMessage(refused);
        return this.reply(socket, { verdict: 'refused', reason: refused });
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
    for (const { server: s, path } of this.more.values()) {
      await new Promise<void>((resolve) => s.close(() => resolve()));
      rmSync(path, { force: true });
    }
    this.more.clear();
    if (this.socketPath) rmSync(this.socketPath, { force: true });
    this.socketPath = null;
    if (this.ownDir) rmSync(this.ownDir, { recursive: true, force: true });
    this.ownDir = null;
  }
}

/** A 0700 directory of this user's under the temp dir, or a fresh private one (made) if that one is not safe. */
function privateDir(): { path: string; made: boolean } {
  const uid = process.getuid?.() ?? 0;
  const dir = join(tmpdir(), `lanes-hooks-${uid}`);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch {
    // exists: checked below
  }
  const st = lstatSync(dir);
  if (st.isDirectory() && !st.isSymbolicLink() && st.uid === uid && (st.mode & 0o077) === 0)
    return { path: dir, made: false };
  // someone else's, or open to others: not used
  return { path: mkdtempSync(join(tmpdir(), 'lanes-hooks-')), made: true };
}

function socketName(key: string): string {
  return `${createHash('sha256').update(key).digest('hex').slice(0, 16)}.sock`;
}
