import { git } from '../../git/runner/git.js';
import type { RemoteMachine } from './remote-machine.js';

// Before a batch's things on a machine go (batch.clean), the work of every lane there that
// was not integrated is brought home: committed on its lane branch there (nothing of it
// lost), fetched, and its branch `lane/<batch>/<child>` made in the coordinator's repository
// when it has none — as a local lane's work stays on its branch. A lane a child left on a
// machine when it was moved elsewhere (`resume --move`) comes home as
// `lane/<batch>/<child>@<machine>`: its own branch name is the new lane's.

interface LaneOnMachine {
  path: string;
  branch: string;
  base_head: string;
}

export interface RemoteLane {
  task_id: string;
  machine?: string | undefined;
  state: string;
  lane: LaneOnMachine | null;
  left_lanes?: readonly (LaneOnMachine & { machine: string })[] | undefined;
}

/** The lanes kept (their branches here), by child. */
export async function keepRemoteWork(
  repoRoot: string,
  machines: ReadonlyMap<string, RemoteMachine>,
  children: readonly RemoteLane[],
): Promise<string[]> {
  const kept: string[] = [];
  for (const child of children) {
    for (const left of child.left_lanes ?? []) {
      const m = machines.get(left.machine);
      if (m && (await keepOne(repoRoot, m, left, `${left.branch}@${left.machine}`)))
        kept.push(`${child.task_id}@${left.machine}`);
    }
    const m = child.machine ? machines.get(child.machine) : undefined;
    if (!m || !child.lane || child.state === 'integrated') continue;
    if (await keepOne(repoRoot, m, child.lane, child.lane.branch)) kept.push(child.task_id);
  }
  return kept;
}

/** The lane's work as branch `here` of the coordinator's repository (made only when it has none). */
async function keepOne(
  repoRoot: string,
  m: RemoteMachine,
  lane: LaneOnMachine,
  here: string,
): Promise<boolean> {
  const { path, branch, base_head } = lane;
  let tip: string | null;
  try {
    tip = await m.op<string>('wt.keepWork', { path, branch, base: base_head }, branch);
  } catch {
    // (the lane is gone there: what its branch holds, if it still has one)
    tip = await m.op<string | null>('wt.branchTip', { branch }, branch).catch(() => null);
  }
  if (tip === null) return false;
  // (created only when there is none: a branch of the user's is never moved)
  const made = await git(repoRoot, ['update-ref', `refs/heads/${here}`, tip, ''], { okCodes: [1, 128] });
  return made.exitCode === 0;
}
