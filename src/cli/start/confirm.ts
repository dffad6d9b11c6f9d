import { createInterface } from 'node:readline/promises';
import { resolveSettings } from '../../core/settings/batch-settings.js';
import type { BatchSettings, SettingsOverrides } from '../../core/settings/batch-settings.js';
import { loadConfig } from '../../store/config-file.js';
import type { Config } from '../../core/settings/config.js';
import { badInput, LanesError } from '../../core/basics/errors.js';
import { batchBranch } from '../../core/basics/ids.js';
import type { Plan } from '../../core/plan/plan.js';
import type { BatchRecord } from '../../core/records/record.js';
import { planWithPreferences } from '../../core/settings/preferences.js';
import { computeWaves } from '../../core/plan/waves.js';
import { gitVersion, resolveCommit, updateRef } from '../../git/runner/commits.js';
import { listWorktrees } from '../../git/worktree/worktrees.js';
import { worktreesFromFiles } from '../../git/worktree/worktree-files.js';
import { git, splitNul } from '../../git/runner/git.js';
import { RepoSessions } from '../../git/runner/repo-sessions.js';
import { refuseOverlaps } from './overlap.js';
import { noBatchesHere } from '../../store/no-batches.js';
import { readStateFlush } from '../../store/durability.js';
import { readLaneDirectives } from '../../store/lane-directives-file.js';
import type { RepoPaths } from '../../store/state-dir.js';
import { checkExecutorPrograms } from './executor-preflight.js';
import { count } from '../plural.js';
import { describePreferences } from './describe-preferences.js';
import type { MachineView } from '../../core/machines/machines.js';

// Confirming a plan: preflight, the user's yes, then the batch branch, the confirmed plan
// and the prepared record — in that order, so a crash in between can be started again.

export const MIN_GIT: [number, number] = [2, 38];

export async function checkGitVersion(cwd: string): Promise<void> {
  const [major, minor] = await gitVersion(cwd);
  if (major < MIN_GIT[0] || (major === MIN_GIT[0] && minor < MIN_GIT[1]))
    throw new LanesError(
      'git_too_old',
      `lanes needs git ${MIN_GIT.join('.')} or newer (merge-tree --write-tree); this is git ${major}.${minor}`,
      2,
    );
}

export interface Preflight {
  baseHead: string;
  settings: BatchSettings;
  config: Config;
  /** Paths with uncommitted changes in the checkout: the batch starts from a commit, without them. */
  uncommitted: string[];
  /**
   * Each machine of the config as its check at confirmation found it (filled by the machines'
   * preflight); absent: the config's machines are shown without a state.
   */
  machines?: readonly MachineView[];
}

export async function preflight(
  repo: RepoPaths,
  plan: Plan,
  overrides: SettingsOverrides,
  /** Whether executors will start (not with `--no-run`): then their programs must exist. */
  options: { checkPrograms?: boolean; allowOverlap?: boolean } = {},
): Promise<Preflight> {
  const branch = batchBranch(plan.batch);
  // The git reads side by side (the version is checked first, before any answer is used).
  // The two commits through the repository's object reader (`cat-file --batch-command`, the
  // batch's own from its first tick on): one process where two `rev-parse` were.
  const objects = RepoSessions.of(repo.root).objects;
  const reads = [
    checkGitVersion(repo.root),
    objects.resolve(`${plan.base}^{commit}`),
    objects.resolve(`refs/heads/${branch}^{commit}`),
    // (from git's files where they are the plain layout: a process less before the first frame)
    Promise.resolve().then(() => worktreesFromFiles(repo.commonDir) ?? listWorktrees(repo.root)),
    uncommittedPaths(repo.root),
  ] as const;
  for (const read of reads) read.catch(() => {}); // (each is awaited below, in turn)
  await reads[0];
  const [baseHead, tip] = await Promise.all([reads[1], reads[2]]);
  const config = loadConfig(repo.root);
  const settings = resolveSettings(plan, config, overrides, readLaneDirectives(repo.root));
  if (options.checkPrograms) checkExecutorPrograms(plan, settings.preferences, config, repo.root);
  // (where no batch was ever made there is nothing to read: the store loads after the first frame)
  if (!noBatchesHere(repo.stateDir)) {
    const { BatchFiles } = await import('../../store/batch-files.js');
    if (new BatchFiles(repo.stateDir, plan.batch).store.read(plan.batch) !== null)
      throw new LanesError(
        'batch_exists',
        `batch "${plan.batch}" already exists here; use lanes resume ${plan.batch}`,
        2,
      );
  }
  if (!options.allowOverlap) await refuseOverlaps(repo, plan);
  if (!baseHead)
    throw badInput('preflight_failed', `base "${plan.base}" does not name a commit in ${repo.root}`);
  // A branch at the base with no record is what a start interrupted after creating it leaves.
  if (tip !== null && tip !== baseHead)
    throw new LanesError(
      'batch_exists',
      `branch ${branch} already exists (at ${tip.slice(0, 12)}); pick another batch id`,
      2,
    );
  const checkedOut = (await reads[3]).filter((w) => w.branch === branch);
  if (checkedOut.length)
    throw new LanesError(
      'batch_branch_checked_out',
      `batch_branch_checked_out: ${branch} is checked out in ${checkedOut[0]!.path}`,
      2,
    );
  return { baseHead, settings, config, uncommitted: await reads[4] };
}

/** `git status` of the checkout, one path a change (untracked files too, ignored ones not). */
async function uncommittedPaths(root: string): Promise<string[]> {
  const out = await git(root, ['status', '--porcelain=v1', '-z', '--untracked-files=all']);
  const paths: string[] = [];
  const entries = splitNul(out.stdout);
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    paths.push(entry.slice(3));
    if (entry[0] === 'R' || entry[0] === 'C') i++; // (a rename's source path follows)
  }
  return paths;
}

const LISTED = 5;

export function describePlan(plan: Plan, p: Preflight): string {
  const waves = computeWaves(plan.children, p.settings.maxParallel);
  const lines = [
    `batch ${plan.batch}: ${count(plan.children.length, 'child', 'children')} in ${count(waves.length, 'wave')} from ${plan.base} (${p.baseHead.slice(0, 12)})`,
    `max_parallel ${p.settings.maxParallel} (${p.settings.preferences.maxParallel.label}), budget ${count(p.settings.budget.max_children, 'child', 'children')} / ${count(p.settings.budget.qa_failure_limit, 'QA failure')}`,
    ...describeMachineViews(p.machines ?? p.config.machines ?? []),
    ...waves.map(
      (w, i) => `  wave ${i + 1}: ${w.map((c) => `${c.id} (${p.settings.executors[c.id]})`).join(', ')}`,
    ),
    ...describePreferences(plan, p.settings.preferences, p.config),
    ...(plan.final_checks ? [`final checks: ${plan.final_checks.map((c) => c.id).join(', ')}`] : []),
    ...(p.uncommitted.length
      ? [
          `note: ${count(p.uncommitted.length, 'uncommitted change')} in the checkout ${p.uncommitted.length === 1 ? 'is' : 'are'} not in the batch ` +
            `(it starts from ${p.baseHead.slice(0, 12)}): ${p.uncommitted.slice(0, LISTED).join(', ')}` +
            `${p.uncommitted.length > LISTED ? ', …' : ''}; commit ${p.uncommitted.length === 1 ? 'it' : 'them'} first to include ${p.uncommitted.length === 1 ? 'it' : 'them'}`,
        ]
      : []),
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * One line a machine, right below max_parallel (so that a long plan does not push them off
 * the confirmation screen): `machine box-a  4 slots  ready`, and for one left out, why.
 */
export function describeMachineViews(
  machines: readonly (Pick<MachineView, 'name' | 'slots'> & Partial<MachineView>)[],
): string[] {
  const width = Math.max(0, ...machines.map((m) => m.name.length));
  return machines.map((m) => {
    const state = m.state ? `  ${m.state}${m.reason ? `: ${m.reason}` : ''}` : '';
    return `machine ${m.name.padEnd(width)}  ${count(m.slots, 'slot')}${state}`;
  });
}

/** Asks y/N on the terminal; without one, --yes is required. */
export async function askConfirmation(question: string): Promise<boolean> {
  if (!process.stdin.isTTY)
    throw badInput('usage', 'no terminal to confirm on: pass --yes to confirm the plan');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

/** Writes the batch branch, the confirmed plan and the prepared record. */
export async function createBatch(
  repo: RepoPaths,
  plan: Plan,
  p: Preflight,
  now: Date,
): Promise<BatchRecord> {
  const branch = batchBranch(plan.batch);
  // (how state files are flushed, read now rather than in the preflight: a confirmation
  // waits for its user, and the process helper is up by then, so no git forks from here)
  await readStateFlush(repo.stateDir);
  const { BatchFiles } = await import('../../store/batch-files.js');
  const { newBatchRecord } = await import('../../core/records/new-batch-record.js');
  const files = new BatchFiles(repo.stateDir, plan.batch);
  // Preflight ran before the lock: another `lanes start` of the same plan may have
  // created the batch since. Under the lock, look again rather than overwrite it.
  if (files.store.read(plan.batch) !== null)
    throw new LanesError(
      'batch_exists',
      `batch "${plan.batch}" was created meanwhile; use lanes resume ${plan.batch}`,
      2,
    );
  // Made only where it does not exist (git checks that atomically): what is there otherwise
  // is looked at then. A branch at the base is what an interrupted start left.
  const zero = '0'.repeat(p.baseHead.length);
  if (!(await updateRef(repo.root, `refs/heads/${branch}`, p.baseHead, zero))) {
    const tip = await resolveCommit(repo.root, `refs/heads/${branch}`);
    if (tip === null)
      throw new LanesError('batch_exists', `could not create ${branch}: it appeared meanwhile`, 2);
    if (tip !== p.baseHead)
      throw new LanesError('batch_exists', `branch ${branch} moved meanwhile (to ${tip.slice(0, 12)})`, 2);
  }
  // The confirmed plan carries each child's resolved executor, model and effort: a resume
  // runs what this confirmation showed (not part of the digest).
  files.writePlan(planWithPreferences(plan, p.settings.preferences));
  const record = newBatchRecord({
    plan,
    baseHead: p.baseHead,
    budget: p.settings.budget,
    maxParallel: p.settings.maxParallel,
    now: now.toISOString(),
  });
  files.writeRecord(record);
  files.journal('batch-confirmed', {
    plan_digest: record.plan_digest,
    base_head: p.baseHead,
    children: plan.children.length,
  });
  return record;
}

/**
 * A plan given with --replan, as the batch will keep it: its executors must exist (exit 2),
 * and like a confirmed plan it carries each child's resolved executor, model and effort.
 */
export function confirmedReplan(repoRoot: string, replan: Plan): Plan {
  const settings = resolveSettings(replan, loadConfig(repoRoot), {}, readLaneDirectives(repoRoot));
  return planWithPreferences(replan, settings.preferences);
}

/** Before a resume runs executors: those of the children that may still start one must exist. */
export function checkResumePrograms(repoRoot: string, plan: Plan, record: BatchRecord): void {
  const config = loadConfig(repoRoot);
  const settings = resolveSettings(plan, config);
  const open = record.children
    .filter((c) => ['pending', 'lane_admitted', 'enrolled', 'needs_human'].includes(c.state))
    .map((c) => c.task_id);
  checkExecutorPrograms(plan, settings.preferences, config, repoRoot, open);
}
