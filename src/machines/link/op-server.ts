import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

// One long-lived `node <root>/machine.js serve` a machine, through the shared connection:
// every op a line to it and its answer a line back, several in flight at once. An op run
// as a process of its own costs an ssh session and a node start there (about 0.3 s on a
// loaded machine, some 35 ops a lane: docs/BENCH.md "Remote lanes"); this costs neither.
// When the server goes (the connection dropped, the machine rebooted) its ops in flight
// answer null and the caller runs them the old way, one process each, with its retries
// (every op is safe to run twice); the next op starts a server again.

/** After a server failed to start or went, ops run one process each for this long. */
const AFTER_FAILURE_MS = 2_000;

export class OpServer {
  private child: ChildProcess | null = null;
  private next = 0;
  private readonly pending = new Map<number, (answer: string | null) => void>();
  private downUntil = 0;
  private closed = false;

  /** `argv`: the ssh argv that runs the server there (made when one starts). */
  constructor(private readonly argv: () => Promise<string[]>) {}

  /** The answer line of `request`, or null when there is no server to ask (run it apart). */
  async send(request: object): Promise<string | null> {
    const child = await this.running();
    if (!child?.stdin?.writable) return null;
    const id = ++this.next;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.hold(true);
      child.stdin!.write(`${JSON.stringify({ id, request })}\n`);
    });
  }

  private async running(): Promise<ChildProcess | null> {
    if (this.child) return this.child;
    if (this.closed || Date.now() < this.downUntil) return null;
    let argv: string[];
    try {
      argv = await this.argv();
    } catch {
      this.downUntil = Date.now() + AFTER_FAILURE_MS;
      return null;
    }
    if (this.child) return this.child; // (another op started it meanwhile)
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['pipe', 'pipe', 'ignore'] });
    this.child = child;
    child.stdin.on('error', () => undefined);
    child.once('error', () => this.gone(child));
    child.once('exit', () => this.gone(child));
    createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => {
      let parsed: { id?: unknown; answer?: unknown };
      try {
        parsed = JSON.parse(line) as typeof parsed;
      } catch {
        return; // (not an answer: the side prints nothing else, a remote shell might)
      }
      const resolve = typeof parsed.id === 'number' ? this.pending.get(parsed.id) : undefined;
      if (!resolve) return;
      this.pending.delete(parsed.id as number);
      resolve(JSON.stringify(parsed.answer));
      this.hold(false);
    });
    this.hold(false);
    return child;
  }

  /** An idle server does not keep lanes running; one with ops in flight does. */
  private hold(busy: boolean): void {
    const child = this.child;
    if (!child) return;
    const ref = busy || this.pending.size > 0;
    for (const handle of [child, child.stdin, child.stdout] as { ref?(): void; unref?(): void }[])
      if (ref) handle?.ref?.();
      else handle?.unref?.();
  }

  private gone(child: ChildProcess): void {
    if (this.child !== child) return;
    this.child = null;
    this.downUntil = Date.now() + AFTER_FAILURE_MS;
    const left = [...this.pending.values()];
    this.pending.clear();
    for (const resolve of left) resolve(null);
  }

  /** Ends the server (its ops in flight are run apart); no new one starts. */
  async close(): Promise<void> {
    this.closed = true;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const ended = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.stdin?.end();
    child.kill('SIGTERM');
    await ended;
  }
}
