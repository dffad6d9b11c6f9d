import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describeRefusal, planClean } from '../../core/whole-batch/clean.js';
import type { LaneFacts } from '../../core/whole-batch/clean.js';
import { LanesError } from '../../core/basics/errors.js';
import type { BatchRecord } from '../../core/records/record.js';
import { dropRef, isAncestor, keepRef, resolveCommit } from '../../git/runner/commits.js';
import { git } from '../../git/runner/git.js';
import { isClean, listWorktrees, realpathOrNull } from '../../git/worktree/worktrees.js';
import { BatchStore } from '../../store/batch-store.js';
import { acquireBatchLock } from '../../store/lock.js';
import { batchPaths } from '../../store/state-dir.js';
import type { RepoPaths } from '../../store/state-dir.js';

// `lanes clean <batch> [--force]`: the lanes, lane branches, lanes' own refs and the
// state of a batch go; the batch branch stays. Git first, the state last, so a clean cut
// short by a crash is finished by the next one; a second clean finds nothing to do.

interface Lane extends LaneFacts {
  branch: string | null;
}

async function laneFacts(repo: RepoPaths, record: BatchRecord): Promise<Lane[]> {
  const prefix = `lane/${record.batch_id}/`;
  const batchTip = await resolveCommit(repo.root, `refs/heads/${record.branch}`);
  const byPath = new Map(
    record.children.flatMap((c) => (c.lane ? [[realpathOrNull(c.lane.path) ?? c.lane.path, c.task_id]] : [])),
  );
  const lanes = new Map<string, Lane>();
  for (const w of await listWorktrees(repo.root)) {
    const real = realpathOrNull(w.path) ?? w.path;
    const taskId = w.branch?.startsWith(prefix) ? w.branch.slice(prefix.length) : byPath.get(real);
    if (taskId === undefined || real === (realpathOrNull(repo.root) ?? repo.root)) continue;
    const present = existsSync(w.path);
    lanes.set(taskId, {
      taskId,
      worktree: present ? w.path : null,
      branch: w.branch,
      dirty: present && !(await isClean(w.path)),
      unmergedCommits: false,
    });
  }
  const refs = await git(repo.root, [
    'for-each-ref',
    '--format=%(refname:short)%00%(objectname)',
    `refs/heads/${prefix}`,
  ]);
  for (const line of refs.stdout.split('\n').filter(Boolean)) {
    const [branch = '', tip = ''] = line.split('\0');
    const taskId = branch.slice(prefix.length);
    const unmerged = batchTip === null || !(await isAncestor(repo.root, tip, batchTip));
    const lane = lanes.get(taskId);
    if (lane) lanes.set(taskId, { ...lane, branch, unmergedCommits: unmerged });
    else lanes.set(taskId, { taskId, worktree: null, branch, dirty: false, unmergedCommits: unmerged });
  }
  const evicted = await git(repo.root, [
    'for-each-ref',
    '--format=%(refname)',
    `refs/lanes/${record.batch_id}/evicted/`,
  ]);
  for (const ref of evicted.stdout.split('\n').filter(Boolean)) {
    const taskId = ref.slice(`refs/lanes/${record.batch_id}/evicted/`.length);
    const lane = lanes.get(taskId) ?? {
      taskId,
      worktree: null,
      branch: null,
      dirty: false,
      unmergedCommits: false,
    };
    lanes.set(taskId, { ...lane, evictedCommit: true });
  }
  return [...lanes.values()];
}

export async function cleanBatch(repo: RepoPaths, batchId: string, force: boolean): Promise<string> {
  const store = new BatchStore(repo.stateDir);
  const record = store.read(batchId);
  if (record === null) return `nothing to clean: no batch named "${batchId}" (cleaned already?)`;
  const lock = await acquireBatchLock(repo.stateDir, batchId, `lanes clean ${batchId}`);
  const paths = batchPaths(repo.stateDir, batchId);
  const removed: string[] = [];
  const kept: string[] = [];
  try {
    const lanes = await laneFacts(repo, record);
    const plan = planClean(record, lanes);
    if (plan.atRisk.length > 0 && !force)
      throw new LanesError('clean_refused', describeRefusal(batchId, plan), 2);
    const risky = new Set([...plan.atRisk, ...plan.kept].map((r) => r.taskId));
    const trash = join(repo.stateDir, 'trash', `${batchId}-${Date.now()}`);
    for (const lane of lanes) {
      if (risky.has(lane.taskId)) {
        // What would be lost is kept: the branch tip under a ref, the folder in the trash.
        const keep = `refs/lanes-trash/${batchId}/${lane.taskId}`;
        if (lane.branch) await keepRef(repo.root, keep, `refs/heads/${lane.branch}`);
        else if (lane.evictedCommit)
          await keepRef(repo.root, keep, `refs/lanes/${batchId}/evicted/${lane.taskId}`);
        let where = lane.branch || lane.evictedCommit ? keep : '';
        if (lane.worktree) {
          mkdirSync(trash, { recursive: true });
          renameSync(lane.worktree, join(trash, lane.taskId));
          where += `${where ? ', ' : ''}${join(trash, lane.taskId)}`;
        }
        kept.push(`${lane.taskId} at ${where}`);
      } else if (lane.worktree) {
        await git(repo.root, ['worktree', 'remove', '--force', lane.worktree]);
      }
      removed.push(lane.taskId);
    }
    await git(repo.root, ['worktree', 'prune']);
    const refs = await git(repo.root, [
      'for-each-ref',
      '--format=%(refname)',
      `refs/heads/lane/${batchId}/`,
      `refs/lanes/${batchId}/`,
    ]);
    for (const ref of refs.stdout.split('\n').filter(Boolean)) await dropRef(repo.root, ref);
    rmSync(join(repo.stateDir, 'scratch', batchId), { recursive: true, force: true });
    rmSync(paths.batchDir, { recursive: true, force: true });
    rmSync(paths.report, { force: true });
    rmSync(paths.journal, { force: true });
    rmSync(paths.record, { force: true }); // last: until it goes, a second clean finishes the job
  } finally {
    await lock.release();
  }
  const trashed = removed.length ? ` (${removed.length} lane${removed.length === 1 ? '' : 's'})` : '';
  const keeping = kept.length ? `\nkept (not integrated): ${kept.join('; ')}` : '';
  return `cleaned batch ${batchId}${trashed}; ${record.branch} stays${keeping}`;
}
