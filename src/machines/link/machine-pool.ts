import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MachineView } from '../../core/machines/machines.js';
import { repoId } from '../protocol.js';
import { MachineLink } from './machine-link.js';
import { MachineObjects } from './objects.js';
import { keepRemoteWork, type RemoteLane } from './keep-remote-work.js';
import { preflightMachine } from './preflight.js';
import { RemoteMachine } from './remote-machine.js';
import { MachineRouter } from './router.js';
import { SshConnection } from './ssh-connection.js';
import { shellLine } from './shell-quote.js';

// The machines of a batch as the coordinator holds them: one shared connection and op
// client each, checked at the start (a machine that fails is left out, with its reason),
// their states for the tick (reconnecting, lost after machine_timeout), and closed at the end.

export interface PoolMachine {
  name: string;
  ssh?: string | undefined;
  slots: number;
  root?: string | undefined;
  env?: Record<string, string> | undefined;
}

export interface PoolOptions {
  machines: readonly PoolMachine[];
  sshCommand: readonly string[];
  /** machine_timeout, in ms. */
  machineTimeoutMs: number;
  stateDir: string;
  repoRoot: string;
  /** The side script here (dist/lanes/machine.js). */
  sideScript: string;
  /** Agents run there: their hook socket must be forwardable (checked at the start). */
  needsHook?: boolean;
}

export type { MachineView };

export const DEFAULT_ROOT = '~/.cache/lanes';
/** How long the check at the start waits for a machine that does not answer. */
const PREFLIGHT_WAIT_MS = 4_000;
/**
 * How long one op tries a machine that does not answer before it says machine_unreachable:
 * seconds, so that the tick goes on with the lanes elsewhere (the machine is reconnecting
 * meanwhile, and lost once machine_timeout passes).
 */
export const OP_RETRY_MS = 5_000;

/** The control socket of a machine: under the state dir, unless that path is too long for a socket. */
export function controlPath(stateDir: string, machine: string): string {
  const path = join(stateDir, 'ssh', machine);
  if (path.length <= 90) return path;
  const hash = createHash('sha256').update(stateDir).digest('hex').slice(0, 12);
  return join(tmpdir(), `lanes-ssh-${hash}`, machine);
}

export class MachinePool {
  readonly remotes = new Map<string, RemoteMachine>();
  readonly views: MachineView[] = [];
  private readonly forwarded = new Map<string, string>();
  readonly router: MachineRouter;

  private constructor(
    private readonly options: PoolOptions,
    recordMachineOf: (branch: string) => string | undefined,
  ) {
    this.router = new MachineRouter(this.remotes, recordMachineOf);
  }

  /** Connects to and checks every machine of the config but local; `programs`: the executors' programs. */
  static async open(
    options: PoolOptions,
    programs: readonly string[],
    recordMachineOf: (branch: string) => string | undefined = () => undefined,
  ): Promise<MachinePool> {
    const pool = new MachinePool(options, recordMachineOf);
    const repo = repoId(realpathSync(options.repoRoot));
    await Promise.all(
      options.machines.map(async (m) => {
        if (m.ssh === undefined) {
          pool.views.push({ name: m.name, slots: m.slots, state: 'ready' });
          return;
        }
        const connection = new SshConnection(
          {
            name: m.name,
            destination: m.ssh,
            sshCommand: options.sshCommand,
            controlPath: controlPath(options.stateDir, m.name),
          },
          PREFLIGHT_WAIT_MS,
        );
        const link = new MachineLink(m.name, connection, {
          sideScript: options.sideScript,
          root: m.root ?? DEFAULT_ROOT,
          repo,
          env: m.env,
        });
        const checked = await preflightMachine(link, programs, options.needsHook ?? false);
        if (!checked.ok) {
          await link.close();
          pool.views.push({ name: m.name, slots: m.slots, state: 'left out', reason: checked.reason ?? '' });
          return;
        }
        connection.retryForMs = Math.min(OP_RETRY_MS, options.machineTimeoutMs);
        pool.remotes.set(m.name, new RemoteMachine(link, new MachineObjects(options.repoRoot, link)));
        pool.views.push({ name: m.name, slots: m.slots, state: 'ready' });
      }),
    );
    const order = options.machines.map((m) => m.name);
    pool.views.sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
    return pool;
  }

  /** Machines that do not answer now but have not been away longer than machine_timeout. */
  unreachableMachines(now = Date.now()): string[] {
    return [...this.remotes.values()]
      .filter((m) => {
        const since = m.link.connection.unreachableSince;
        return since !== null && now - since < this.options.machineTimeoutMs;
      })
      .map((m) => m.name);
  }

  /** Machines away longer than machine_timeout: their lanes park `machine_lost: <name>`. */
  lostMachines(now = Date.now()): string[] {
    return [...this.remotes.values()]
      .filter((m) => {
        const since = m.link.connection.unreachableSince;
        return since !== null && now - since >= this.options.machineTimeoutMs;
      })
      .map((m) => m.name);
  }

  /** Calls `wake` when the unreachable or lost machines change (polled each second); the stop. */
  watch(wake: () => void, everyMs = 1000): () => void {
    const state = () => `${this.unreachableMachines().join(',')}|${this.lostMachines().join(',')}`;
    let last = state();
    const timer = setInterval(() => {
      const now = state();
      if (now !== last) wake();
      last = now;
    }, everyMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Each machine as it is now (the left out ones as the start found them). */
  currentViews(now = Date.now()): MachineView[] {
    const unreachable = new Set(this.unreachableMachines(now));
    const lost = new Set(this.lostMachines(now));
    return this.views.map((v) =>
      lost.has(v.name)
        ? { ...v, state: 'lost' }
        : unreachable.has(v.name)
          ? { ...v, state: 'reconnecting' }
          : v,
    );
  }

  /**
   * The coordinator's hook socket of `machine` forwarded there at `<root>/sock/<batch>.sock`
   * (`ssh -R` on the shared connection, made again with it), in a 0700 folder; once a machine.
   */
  async forwardHook(machine: string, batch: string, local: string): Promise<void> {
    const m = this.remotes.get(machine);
    if (!m) throw new Error(`machine ${machine} is not in the pool`);
    const remote = `${m.link.root}/sock/${batch}.sock`;
    const spec = `${remote}:${local}`;
    if (this.forwarded.get(machine) === spec) return;
    // (a socket left from before is replaced: not every sshd has StreamLocalBindUnlink)
    const r = await m.link.connection.run(
      shellLine([
        'sh',
        '-c',
        'umask 077 && mkdir -p "$1" && chmod 700 "$1" && rm -f "$2"',
        'sh',
        `${m.link.root}/sock`,
        remote,
      ]),
    );
    if (r.exitCode !== 0)
      throw new Error(`machine ${machine}: cannot make its hook socket folder: ${r.stderr.trim()}`);
    await m.link.connection.forward(spec);
    this.forwarded.set(machine, spec);
  }

  /** The hook an agent on `machine` runs: lanes' side script there. */
  hookArgv(machine: string): string[] {
    const m = this.remotes.get(machine);
    return ['node', `${m?.link.root ?? '~/.cache/lanes'}/machine.js`, 'hook'];
  }

  /**
   * Every worktree, branch, session and run folder of `batch` on every machine that answers,
   * the work of its lanes that were not integrated brought home first (keep-remote-work.ts).
   */
  async cleanBatch(batch: string, children: readonly RemoteLane[] = []): Promise<void> {
    await keepRemoteWork(this.options.repoRoot, this.remotes, children);
    await Promise.all(
      [...this.remotes.values()].map((m) => m.link.call('batch.clean', { batch }).catch(() => undefined)),
    );
  }

  async close(): Promise<void> {
    await Promise.all([...this.remotes.values()].map((m) => m.link.close()));
  }
}
