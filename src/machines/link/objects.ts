import { LanesError } from '../../core/basics/errors.js';
import { git } from '../../git/runner/git.js';
import type { MachineLink } from './machine-link.js';

// Objects between the coordinator's repository and a machine's cache, with git over the
// machine's shared connection (GIT_SSH_COMMAND): commits the machine needs pushed to
// `refs/lanes/in/<sha>` (git sends only what the cache lacks), commits made there fetched
// back to `refs/lanes/machines/<machine>/<batch>/<child>`.

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

export class MachineObjects {
  private readonly pushed = new Set<string>();

  constructor(
    private readonly repoRoot: string,
    private readonly link: MachineLink,
  ) {}

  /** The cache's address as git takes it (scp-like, or the ssh:// URL with the path). */
  private url(): string {
    const destination = this.link.connection.target.destination;
    const path = this.link.cachePath;
    return destination.startsWith('ssh://')
      ? `${destination.replace(/\/+$/, '')}${path}`
      : `${destination}:${path}`;
  }

  private env(): Record<string, string> {
    return { GIT_SSH_COMMAND: this.link.connection.gitSshCommand(), GIT_SSH_VARIANT: 'ssh' };
  }

  private async moved(attempt: () => Promise<{ exitCode: number; stdout: string; stderr: string }>) {
    const r = await this.link.connection.retrying(attempt);
    if (r.exitCode !== 0)
      throw new LanesError('machine_unreachable', `machine ${this.link.name}: ${r.stderr.trim()}`, 1);
  }

  /** Pushes each commit the machine was not sent yet (a dropped connection: tried again). */
  async push(commits: readonly string[]): Promise<void> {
    const todo: string[] = [];
    for (const c of new Set(commits)) {
      if (!SHA.test(c) || this.pushed.has(c)) continue;
      // (a commit the coordinator does not have was made there: nothing to send)
      const here = await git(this.repoRoot, ['cat-file', '-e', `${c}^{commit}`], { okCodes: [1, 128] });
      if (here.exitCode === 0) todo.push(c);
    }
    if (todo.length === 0) return;
    const specs = todo.map((c) => `${c}:refs/lanes/in/${c}`);
    await this.moved(() =>
      gitResult(this.repoRoot, ['push', '-q', '--no-verify', this.url(), ...specs], this.env()),
    );
    for (const c of todo) this.pushed.add(c);
  }

  /** Fetches `commit` (made on the machine) into `refs/lanes/machines/<machine>/<batch>/<child>`. */
  async fetch(commit: string, batch: string, child: string): Promise<void> {
    if (!SHA.test(commit)) return;
    const have = await git(this.repoRoot, ['cat-file', '-e', `${commit}^{commit}`], { okCodes: [1, 128] });
    const ref = `refs/lanes/machines/${this.link.name}/${batch}/${child}`;
    if (have.exitCode === 0) {
      await git(this.repoRoot, ['update-ref', ref, commit]);
      return;
    }
    await this.moved(() =>
      gitResult(
        this.repoRoot,
        ['fetch', '-q', '--no-tags', '--no-write-fetch-head', this.url(), `+${commit}:${ref}`],
        this.env(),
      ),
    );
    this.pushed.add(commit);
  }
}

/** git's exit as ssh's: 255 never (git ends 128 on a connection it lost), so map that. */
async function gitResult(cwd: string, args: string[], env: Record<string, string>) {
  const r = await git(cwd, args, { env, okCodes: [1, 128] });
  const lost =
    r.exitCode !== 0 &&
    /Connection|closed by remote|Broken pipe|kex_exchange|Could not read from remote/i.test(r.stderr);
  if (r.exitCode !== 0 && !lost) throw new Error(`git ${args[0]} to the machine failed: ${r.stderr.trim()}`);
  return { exitCode: lost ? 255 : 0, stdout: r.stdout, stderr: r.stderr };
}
