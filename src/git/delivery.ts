import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commitInfo, commitTree, identityEnv, resolveCommit, updateRef } from './commits.js';
import { git, gitLine } from './git.js';

// The delivery commit on a lane branch (DESIGN §6): one commit whose only parent is the lane
// base, holding the lane's in-scope changes (commits the executor made are squashed into
// it), with the lanes trailers. Built in a private index so the lane's own index is only
// touched at the end, to match the new HEAD.

export interface DeliveryTrailers {
  batch: string;
  task: string;
  run: string;
  base: string;
}

export function trailerLines(t: DeliveryTrailers): string {
  return `Lanes-Batch: ${t.batch}\nLanes-Task: ${t.task}\nLanes-Run: ${t.run}\nLanes-Base: ${t.base}\n`;
}

export function deliveryMessage(goal: string, t: DeliveryTrailers): string {
  const subject = goal.split('\n')[0]?.trim().slice(0, 120) || t.task;
  return `lanes(${t.task}): ${subject}\n\n${trailerLines(t)}`;
}

function matches(trailers: Record<string, string>, t: DeliveryTrailers): boolean {
  return (
    trailers['Lanes-Batch'] === t.batch &&
    trailers['Lanes-Task'] === t.task &&
    trailers['Lanes-Run'] === t.run &&
    trailers['Lanes-Base'] === t.base
  );
}

/** The delivery commit already at the lane branch tip (a crash after committing), or null. */
export async function findDelivery(
  lanePath: string,
  branch: string,
  t: DeliveryTrailers,
): Promise<string | null> {
  const tip = await resolveCommit(lanePath, `refs/heads/${branch}`);
  if (!tip || tip === t.base) return null;
  const info = await commitInfo(lanePath, tip);
  if (info.parents.length !== 1 || info.parents[0] !== t.base || !matches(info.trailers, t)) return null;
  return tip;
}

/** Makes the lane's index match its HEAD (files untouched), so a delivered lane reads clean. */
export async function syncLaneIndex(lanePath: string): Promise<void> {
  await git(lanePath, ['reset', '--quiet']);
}

/** Commits `paths` (as they are in the lane's work tree) on top of the base; moves the branch. */
export async function commitDelivery(
  lanePath: string,
  branch: string,
  paths: readonly string[],
  goal: string,
  t: DeliveryTrailers,
  /** Where the commit identity is read (the repository root: every lane shares it). */
  identityFrom: string = lanePath,
): Promise<string> {
  const scratch = mkdtempSync(join(tmpdir(), 'lanes-index-'));
  const env = { ...(await identityEnv(identityFrom)), GIT_INDEX_FILE: join(scratch, 'index') };
  try {
    await git(lanePath, ['read-tree', t.base], { env });
    if (paths.length > 0) await git(lanePath, ['--literal-pathspecs', 'add', '-A', '--', ...paths], { env });
    const tree = await gitLine(lanePath, ['write-tree'], { env });
    const commit = await commitTree(lanePath, tree, t.base, deliveryMessage(goal, t), env);
    const tip = await resolveCommit(lanePath, `refs/heads/${branch}`);
    if (!tip || !(await updateRef(lanePath, `refs/heads/${branch}`, commit, tip)))
      throw new Error(`lane branch ${branch} moved while lanes committed the delivery`);
    return commit;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
