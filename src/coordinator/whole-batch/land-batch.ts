import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { badInput, LanesError } from '../../core/basics/errors.js';
import { decideLand, decidePush, defaultInto } from '../../core/whole-batch/land.js';
import { gitLine } from '../../git/runner/git.js';
import {
  branchTip,
  checkedOutIn,
  containsCommit,
  followBranch,
  mergeCommit,
  moveBranch,
  pushWithLease,
  remoteTip,
} from '../../git/batch/land.js';
import { isAncestor } from '../../git/runner/commits.js';
import { BatchFiles } from '../../store/batch-files.js';
import { readStateFile, writeStateFileAtomic } from '../../store/safe-fs.js';
import { batchPaths } from '../../store/state-dir.js';
import type { RepoPaths } from '../../store/state-dir.js';

// `lanes land` (and the TUI's key on the completed screen): the batch result onto its
// base branch. The decision is core/land.ts's; this reads the facts and carries it out.

export interface LandOptions {
  into?: string;
  merge?: boolean;
  push?: string;
}

const refused = (reason: string) => new LanesError('land_refused', `lanes land: ${reason}`, 2);

// A landing in a checked-out worktree moves the branch, then the worktree's files. A kill
// between the two leaves the branch landed and the worktree on the old tree; the intent
// file, written before the branch moves and removed once the worktree followed, lets the
// next `lanes land` finish it.
interface Landing {
  into: string;
  worktree: string;
  from: string;
  to: string;
}

const landingFile = (repo: RepoPaths, batchId: string) =>
  join(batchPaths(repo.stateDir, batchId).batchDir, 'landing.json');

/** Finishes a landing cut short: a note of what was done, or null when none was pending. */
async function finishLanding(repo: RepoPaths, batchId: string): Promise<string | null> {
  const file = landingFile(repo, batchId);
  const text = readStateFile(repo.stateDir, file);
  if (text === null) return null;
  const landing = JSON.parse(text) as Landing;
  let note: string | null = null;
  if ((await branchTip(repo.root, landing.into)) === landing.to && existsSync(landing.worktree)) {
    const why = await followBranch(landing.worktree, landing.from, landing.to);
    if (why !== null)
      throw refused(
        `a landing on ${landing.into} was cut short before ${landing.worktree} followed it, and ${why}; make its files match ${landing.from.slice(0, 12)} and run lanes land again`,
      );
    note = `finished the landing cut short: ${landing.worktree} follows ${landing.into} (${landing.to.slice(0, 12)})`;
  }
  rmSync(file, { force: true });
  return note;
}

export async function landBatch(repo: RepoPaths, batchId: string, options: LandOptions): Promise<string> {
  const store = new BatchFiles(repo.stateDir, batchId);
  const record = store.readRecord();
  const finished = await finishLanding(repo, batchId);
  if (finished !== null) store.journal('landed', { finished });
  const plan = store.readPlan();
  const current = await gitLine(repo.root, ['symbolic-ref', '--quiet', '--short', 'HEAD']).catch(() => null);
  const into = options.into ?? defaultInto(plan.base, current);
  if (!into)
    throw badInput(
      'usage',
      `lanes land: the plan's base "${plan.base}" names no branch; say which with --into`,
    );
  const batchTip = await branchTip(repo.root, record.branch);
  if (batchTip === null) throw refused(`${record.branch} does not exist`);
  const intoTip = await branchTip(repo.root, into);
  const checkedOut = intoTip === null ? null : await checkedOutIn(repo.root, into);
  const decision = decideLand({
    batchId,
    batchState: record.batch_state,
    batchBranch: record.branch,
    batchTip,
    into,
    intoTip,
    canFastForward: intoTip !== null && (await isAncestor(repo.root, intoTip, batchTip)),
    alreadyLanded: intoTip !== null && (await isAncestor(repo.root, batchTip, intoTip)),
    merge: options.merge ?? false,
    checkedOut,
  });
  if (decision.kind === 'refuse') throw refused(decision.reason);
  // The remote is read before anything moves: one that cannot be reached changes nothing.
  let old: string | null = null;
  if (options.push) {
    try {
      old = await remoteTip(repo.root, options.push, into);
    } catch (error) {
      throw refused(`cannot read ${options.push}: ${(error as Error).message} (nothing was changed)`);
    }
  }
  let summary: string;
  let landed = intoTip!;
  if (decision.kind === 'already')
    summary = `${finished ? `${finished}; ` : ''}${record.branch} is already on ${into}`;
  else {
    let next = batchTip;
    if (decision.kind === 'merge') {
      const merged = await mergeCommit(
        repo.root,
        intoTip!,
        batchTip,
        `Merge ${record.branch} into ${into}\n`,
      );
      if ('conflicts' in merged)
        throw refused(
          `${record.branch} does not merge into ${into}: ${merged.conflicts.join(', ')} (nothing was changed)`,
        );
      next = merged.commit;
    }
    const landing = landingFile(repo, batchId);
    if (checkedOut) {
      const intent: Landing = { into, worktree: checkedOut.path, from: intoTip!, to: next };
      writeStateFileAtomic(repo.stateDir, landing, `${JSON.stringify(intent)}\n`);
    }
    const moved = await moveBranch(repo.root, into, intoTip!, next, checkedOut?.path ?? null);
    rmSync(landing, { force: true });
    if (moved.kind === 'refused') throw refused(moved.reason);
    landed = next;
    const how = decision.kind === 'merge' ? 'merge commit' : 'fast-forward';
    summary = `landed ${record.branch} on ${into} (${how} ${intoTip!.slice(0, 12)}..${next.slice(0, 12)})`;
    store.journal('landed', { into, how: decision.kind, from: intoTip, to: next });
  }
  if (options.push) {
    const remote = options.push;
    const push = decidePush({
      remote,
      into,
      remoteTip: old,
      remoteContained: old === null || (await containsCommit(repo.root, old, landed)),
    });
    if (push.kind === 'refuse') throw refused(`${summary}, but not pushed: ${push.reason}`);
    try {
      await pushWithLease(repo.root, remote, into, old);
    } catch (error) {
      // The branch here is landed; only the push is left to do (lanes land … --push again).
      throw new LanesError(
        'land_refused',
        `lanes land: ${summary}, but the push failed: ${(error as Error).message}`,
        1,
      );
    }
    store.journal('landed', { into, pushed: remote, to: landed, lease: old });
    summary += `; pushed ${into} to ${remote}`;
  }
  return summary;
}
