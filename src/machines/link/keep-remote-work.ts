import { git } from '../../git/runner/git.js';
import type { RemoteMachine } from './remote-machine.js';

// Before a batch's things on a machine go (batch.clean), the work of every lane there that
// was not integrated is brought home: committed on its lane branch there (nothing of it
// lost), fetched, and its branch `lane/<batch>/<child>` made in the coordinator's repository
// when it has none — as a local lane's work stays on its branch.

export interface RemoteLane {
  task_id: string;
  machine?: string | undefined;
  state: string;
  lane: { path: string; branch: string; base_head: string } | null;
}

/** The lanes kept (their branches here), by child. */
export async function keepRemoteWork(
  repoRoot: string,
  machines: ReadonlyMap<string, RemoteMachine>,
  children: readonly RemoteLane[],
): Promise<string[]> {
  const kept: string[] = [];
  for (const child of children) {
    const m = child.machine ? machines.get(child.machine) : undefined;
    if (!m || !child.lane || child.state === 'integrated') continue;
    const { path, branch, base_head } = child.lane;
    let tip: string | null;
    try {
      tip = await m.op<string>('wt.keepWork', { path, branch, base: base_head }, branch);
    } catch {
      // (the lane is gone there: what its branch holds, if it still has one)
      tip = await m.op<string | null>('wt.branchTip', { branch }, branch).catch(() => null);
    }
    if (tip === null) continue;
    // (created only when there is none: a branch of the user's is never moved)
    const made = await git(repoRoot, ['update-ref', `refs/heads/${branch}`, tip, ''], { okCodes: [1, 128] });
    if (made.exitCode === 0) kept.push(child.task_id);
  }
  return kept;
}
