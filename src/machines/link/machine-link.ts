import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { LanesError } from '../../core/basics/errors.js';
import { answerSchema, type HelloValue, machineRepoPath } from '../protocol.js';
import type { MachineClient } from './machine-client.js';
import { OpServer } from './op-server.js';
import type { SshConnection } from './ssh-connection.js';
import { SSH_FAILED, type SshResult } from './ssh-process.js';
import { rootWord, shellLine, shellQuote } from './shell-quote.js';

// The op client of one machine: lanes' side script copied into `<root>` (when missing or
// different), then every op one `node <root>/machine.js op` through the shared connection,
// the request on stdin (nothing of it on the command line), one JSON answer line back.

export interface MachineLinkOptions {
  /** The side script here (dist/lanes/machine.js). */
  sideScript: string;
  /** The root as configured (`~/.cache/lanes` by default). */
  root: string;
  /** The repository cache's id there (repoId of the coordinator's repository). */
  repo: string;
  /** The machine's `env` of the config: set for every op there (and what it starts). */
  env?: Record<string, string> | undefined;
}

export class MachineLink implements MachineClient {
  private resolvedRoot: string | null = null;
  hello: HelloValue | null = null;
  /** The long-lived side script there that answers ops (one a machine, started on the first op). */
  private readonly ops = new OpServer(async () => {
    await this.connection.ensureMaster();
    return this.connection.argvForLine(
      shellLine([...this.envWords(), 'node', `${this.root}/machine.js`, 'serve']),
    );
  });

  constructor(
    readonly name: string,
    readonly connection: SshConnection,
    private readonly options: MachineLinkOptions,
  ) {}

  get root(): string {
    if (this.resolvedRoot === null) throw new Error(`machine ${this.name}: not connected yet`);
    return this.resolvedRoot;
  }

  get repo(): string {
    return this.options.repo;
  }

  /** The bare repository cache of this repository on the machine. */
  get cachePath(): string {
    return machineRepoPath(this.root, this.options.repo);
  }

  /**
   * Makes the root, the cache and the side script there, and says hello: the resolved root,
   * the user, the versions of git, node and tmux.
   */
  async connect(): Promise<HelloValue> {
    await this.prepare();
    this.hello = await this.call<HelloValue>('hello', {});
    return this.hello;
  }

  /** The root, the cache and the side script there (copied only when missing or different). */
  async prepare(): Promise<void> {
    const script = readFileSync(this.options.sideScript);
    const hash = createHash('sha256').update(script).digest('hex');
    const cache = `repos/${this.options.repo}.git`;
    const probe = [
      'umask 077',
      `R=${rootWord(this.options.root)}`,
      'mkdir -p "$R" && cd "$R" && pwd -P || exit 3',
      `if [ ! -d ${shellQuote(cache)} ]; then git init -q --bare ${shellQuote(cache)} || exit 4; fi`,
      // The link fetches a lane's commits by id: the cache lets it.
      `git --git-dir=${shellQuote(cache)} config uploadpack.allowAnySHA1InWant true || exit 4`,
      '{ sha256sum machine.js 2>/dev/null || echo none; } | cut -d" " -f1',
    ].join('\n');
    const r = await this.connection.run(probe);
    if (r.exitCode !== 0)
      throw new LanesError(
        'machine_unusable',
        `machine ${this.name}: cannot make its root ${this.options.root}: ${r.stderr.trim() || `exit ${r.exitCode}`}`,
        1,
      );
    const [root, remoteHash] = r.stdout.trim().split('\n');
    if (!root?.startsWith('/')) throw new LanesError('machine_unusable', `machine ${this.name}: no root`, 1);
    this.resolvedRoot = root;
    if (remoteHash !== hash) {
      const target = `${root}/machine.js`;
      const tmp = `${target}.${process.pid}.tmp`;
      const copy = await this.connection.run(
        `cat > ${shellQuote(tmp)} && mv -f ${shellQuote(tmp)} ${shellQuote(target)}`,
        script,
      );
      if (copy.exitCode !== 0)
        throw new LanesError(
          'machine_unusable',
          `machine ${this.name}: cannot copy machine.js: ${copy.stderr.trim()}`,
          1,
        );
    }
  }

  async call<T>(op: string, args: unknown): Promise<T> {
    const served = await this.ops.send({ op, root: this.root, repo: this.options.repo, args });
    if (served !== null) return this.answer<T>(op, { exitCode: 0, stdout: served, stderr: '' });
    // (no server to ask: the op a process of its own, retried while the connection is down)
    const request = JSON.stringify({ op, root: this.root, repo: this.options.repo, args });
    const r = await this.connection.run(
      shellLine([...this.envWords(), 'node', `${this.root}/machine.js`, 'op']),
      request,
    );
    return this.answer<T>(op, r);
  }

  private answer<T>(op: string, r: SshResult): T {
    if (r.exitCode === SSH_FAILED && !r.stdout.trim())
      throw new LanesError('machine_unreachable', `machine ${this.name}: ${op}: ${r.stderr.trim()}`, 1);
    const line = r.stdout.trim().split('\n').pop() ?? '';
    let answer;
    try {
      answer = answerSchema.parse(JSON.parse(line));
    } catch {
      throw new LanesError(
        'machine_op_failed',
        `machine ${this.name}: ${op} gave no answer (exit ${r.exitCode}): ${r.stderr.trim().slice(0, 2000)}`,
        1,
      );
    }
    if (!answer.ok) throw new LanesError(answer.code, `machine ${this.name}: ${op}: ${answer.message}`, 1);
    return answer.value as T;
  }

  /** `env K=V …` before a command there (each word quoted with the rest). */
  private envWords(): string[] {
    const env = Object.entries(this.options.env ?? {});
    return env.length ? ['env', ...env.map(([k, v]) => `${k}=${v}`)] : [];
  }

  /** Ends the op server there, then the shared connection. */
  async close(): Promise<void> {
    await this.ops.close();
    await this.connection.close();
  }

  sshArgv(remote: readonly string[], options: { tty?: boolean } = {}): string[] {
    return this.connection.argv(remote, options);
  }
}
