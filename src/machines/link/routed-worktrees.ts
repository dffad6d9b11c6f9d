import type { WorktreeInfo, WorktreePort } from '../../core/ports/worktree-port.js';
import type { MachineRouter } from './router.js';

// The WorktreePort over the coordinator's repository and the machines' caches: a lane path
// a machine holds goes to that machine's op of the same name, anything else to the local
// port unchanged. `list` is the local worktrees and those of every machine that answers.

export class RoutedWorktrees implements WorktreePort {
  constructor(
    private readonly local: WorktreePort,
    private readonly router: MachineRouter,
  ) {}

  async list(): Promise<WorktreeInfo[]> {
    const local = await this.local.list();
    const remote = await Promise.all(
      [...this.router.machines.values()].map((m) =>
        m.link.connection.state === 'connected'
          ? m.op<WorktreeInfo[]>('wt.list', {}).catch(() => [])
          : Promise.resolve([]),
      ),
    );
    return [...local, ...remote.flat()];
  }

  realpath(path: string): Promise<string | null> {
    const m = this.router.byPath(path);
    return m ? m.op<string | null>('wt.realpath', { path }) : this.local.realpath(path);
  }

  async at(path: string, listed?: readonly WorktreeInfo[]): Promise<WorktreeInfo | undefined> {
    const m = this.router.byPath(path);
    if (!m) return this.local.at(path, listed);
    if (listed) return listed.find((w) => w.path === path);
    return (await m.op<WorktreeInfo | null>('wt.at', { path })) ?? undefined;
  }

  exists(path: string): Promise<boolean> {
    const m = this.router.byPath(path);
    return m ? m.op<boolean>('wt.exists', { path }) : this.local.exists(path);
  }

  isClean(path: string): Promise<boolean> {
    const m = this.router.byPath(path);
    return m ? m.op('wt.isClean', { path }) : this.local.isClean(path);
  }

  isUnpopulated(path: string): Promise<boolean> {
    const m = this.router.byPath(path);
    return m ? m.op<boolean>('wt.isUnpopulated', { path }) : this.local.isUnpopulated(path);
  }

  branchTip(branch: string): Promise<string | null> {
    const m = this.router.byBranch(branch);
    return m ? m.op('wt.branchTip', { branch }, branch) : this.local.branchTip(branch);
  }

  // (both commits are here: what a machine made is fetched before anyone is handed it)
  onBranch(commit: string, tip: string): Promise<boolean> {
    return this.local.onBranch(commit, tip);
  }

  headOf(path: string): Promise<string | null> {
    const m = this.router.byPath(path);
    return m ? m.op('wt.headOf', { path }, path) : this.local.headOf(path);
  }

  async add(path: string, branch: string, base: string, branchExists: boolean, checkout?: boolean) {
    const m = this.router.byPath(path);
    this.router.noteBranch(branch, m);
    if (!m) return this.local.add(path, branch, base, branchExists, checkout);
    return m.op<string | null>('wt.add', {
      path,
      branch,
      base,
      branchExists,
      ...(checkout === undefined ? {} : { checkout }),
    });
  }

  resetKeep(path: string, base: string): Promise<boolean> {
    const m = this.router.byPath(path);
    return m ? m.op('wt.resetKeep', { path, base }) : this.local.resetKeep(path, base);
  }

  async deleteBranch(path: string, branch: string): Promise<void> {
    const m = this.router.byPath(path) ?? this.router.byBranch(branch);
    if (m) await m.op('wt.deleteBranch', { path, branch });
    else await this.local.deleteBranch(path, branch);
  }

  branchAt(path: string): Promise<string | null> {
    const m = this.router.byPath(path);
    return m ? m.op<string | null>('wt.branchAt', { path }) : this.local.branchAt(path);
  }

  restoreBranch(path: string, branch: string, tip: string): Promise<boolean> {
    const m = this.router.byPath(path);
    return m ? m.op('wt.restoreBranch', { path, branch, tip }) : this.local.restoreBranch(path, branch, tip);
  }

  remove(path: string): Promise<string | null> {
    const m = this.router.byPath(path);
    return m ? m.op('wt.remove', { path }) : this.local.remove(path);
  }

  lookAtFiles(path: string, base: string): Promise<{ fingerprint: string; changed: string[] }> {
    const m = this.router.byPath(path);
    return m ? m.op('wt.lookAtFiles', { path, base }) : this.local.lookAtFiles(path, base);
  }

  changedAtExit(path: string, base: string): Promise<string[]> {
    const m = this.router.byPath(path);
    return m ? m.op('wt.changedAtExit', { path, base }) : this.local.changedAtExit(path, base);
  }

  keepWork(path: string, branch: string, base: string): Promise<string> {
    const m = this.router.byPath(path);
    return m ? m.op('wt.keepWork', { path, branch, base }, path) : this.local.keepWork(path, branch, base);
  }

  async move(path: string, to: string): Promise<void> {
    const m = this.router.byPath(path);
    if (m) await m.op('wt.move', { path, to });
    else await this.local.move(path, to);
  }
}
