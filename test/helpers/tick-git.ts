import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { expect } from 'vitest';
import type { Report } from '../../src/core/records/report.js';
import type { BatchRecord } from '../../src/core/records/record.js';
import { batchPaths } from '../../src/store/state-dir.js';
import { writeFiles } from './batch.js';
import type { Driver } from './batch.js';
import { git, tempDir } from './repo.js';

// Helpers of the batch-level tick tests (test/core/tick/: integration, reverification, lineage, cli).
/** git with an environment and stdin (the shared helper has neither); stdout trimmed. */
export async function gitIo(
  cwd: string,
  args: string[],
  options: { env?: Record<string, string>; input?: string } = {},
) {
  const result = await execa('git', args, {
    cwd,
    env: { GIT_CONFIG_NOSYSTEM: '1', ...options.env },
    ...(options.input !== undefined ? { input: options.input } : {}),
  });
  return String(result.stdout).trim();
}

/**
 * A commit made "by hand" on `branch` with plumbing only (a private index, commit-tree,
 * a compare-and-swap update-ref): the user's main worktree and index are never touched.
 */
export async function handCommit(
  root: string,
  branch: string,
  files: Record<string, string>,
  message: string,
): Promise<string> {
  const env = { GIT_INDEX_FILE: join(tempDir('lanes-index-'), 'index') };
  const parent = await gitIo(root, ['rev-parse', '--verify', `refs/heads/${branch}^{commit}`]);
  await gitIo(root, ['read-tree', parent], { env });
  for (const [path, text] of Object.entries(files)) {
    const blob = await gitIo(root, ['hash-object', '-w', '--stdin'], { input: text });
    await gitIo(root, ['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`], { env });
  }
  const tree = await gitIo(root, ['write-tree'], { env });
  const commit = await gitIo(root, ['commit-tree', tree, '-p', parent, '-F', '-'], { input: message });
  await gitIo(root, ['update-ref', `refs/heads/${branch}`, commit, parent]);
  return commit;
}

export async function rev(root: string, ref: string): Promise<string> {
  return (await git(root, 'rev-parse', '--verify', `${ref}^{commit}`)).trim();
}

export async function parentsOf(root: string, sha: string): Promise<string[]> {
  return (await git(root, 'rev-list', '--parents', '-n', '1', sha)).trim().split(' ').slice(1);
}

export async function trailersOf(root: string, sha: string): Promise<Record<string, string>> {
  const out = await git(root, 'log', '-1', '--format=%(trailers:only,unfold)', sha);
  const trailers: Record<string, string> = {};
  for (const line of out.split('\n')) {
    const m = /^([A-Za-z0-9-]+):\s*(.*)$/.exec(line);
    if (m) trailers[m[1]!] = m[2]!.trim();
  }
  return trailers;
}

export async function changedIn(root: string, sha: string): Promise<string[]> {
  return (await git(root, 'diff-tree', '--no-commit-id', '--name-only', '-r', sha))
    .split('\n')
    .filter(Boolean)
    .sort();
}

export async function worktreePaths(root: string): Promise<string[]> {
  return (await git(root, 'worktree', 'list', '--porcelain'))
    .split('\n')
    .filter((l) => l.startsWith('worktree '))
    .map((l) => l.slice('worktree '.length));
}

export type Entry = Record<string, unknown> & { event: string; task?: string };

export function journalOf(d: Driver): Entry[] {
  const text = readFileSync(batchPaths(d.repo.stateDir, d.plan.batch).journal, 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Entry);
}

export function recordOf(d: Driver): BatchRecord {
  return d.ports().store.readRecord();
}

export function childOf(r: { children: BatchRecord['children'] }, id: string) {
  const c = r.children.find((x) => x.task_id === id);
  if (!c) throw new Error(`no child ${id}`);
  return c;
}

export function handoffs(r: Report, action: 'provision' | 'executor' | 'release') {
  return r.handoffs.filter((h) => h.action === action);
}

/** Plays the executor: writes the child's files in its lane and returns the exit notice. */
export function work(lanePath: string, taskId: string, files: Record<string, string>) {
  writeFiles(lanePath, files);
  return { task_id: taskId, code: 0, signal: null };
}

/** Offers every provision handoff of `r` (worktree add) and returns the next report. */
export async function provision(d: Driver, r: Report): Promise<Report> {
  expect(handoffs(r, 'provision').length).toBeGreaterThan(0);
  const next = await d.provisionAll(r);
  expect(next.lane_refusals).toEqual([]);
  return next;
}

/**
 * Steward + executor loop until the batch leaves `running`: release integrated lanes,
 * do the work of every lane waiting for its implementation, provision startable children.
 * Records, for each tick, which children were integrated by it.
 */
export async function playUntilStopped(
  d: Driver,
  first: Report,
  files: Record<string, Record<string, string>>,
): Promise<{ report: Report; waves: string[][] }> {
  let r = first;
  const waves: string[][] = [];
  for (let turn = 0; turn < 30 && r.batch_state === 'running'; turn++) {
    for (const h of handoffs(r, 'release')) await d.release(h.task_id);
    const exited = [];
    for (const h of r.handoffs)
      if (h.action === 'executor' && h.next_obligation === 'implement')
        exited.push(work(h.lane_path, h.task_id, files[h.task_id]!));
    const before = new Set(r.children.filter((c) => c.commit).map((c) => c.task_id));
    if (exited.length > 0) r = await d.tick({ exited });
    else if (handoffs(r, 'provision').length > 0) r = await provision(d, r);
    else r = await d.tick();
    const now = r.children.filter((c) => c.commit && !before.has(c.task_id)).map((c) => c.task_id);
    if (now.length) waves.push(now);
  }
  return { report: r, waves };
}

export function grep(line: string, path: string): string {
  return `grep -qx '${line}' ${path}`;
}

// ---------------------------------------------------------------- 1. a full batch

let approvals = 0;
/** A fresh approval (`lanes resume --approve`): later than any confirmation recorded before. */
export function freshApproval(): { confirmationTime: string } {
  return { confirmationTime: new Date(Date.now() + 1000 + ++approvals).toISOString() };
}

/**
 * The tick after a hand commit on the batch branch holds the batch for a human (the
 * commits lanes did not make named); the approval's tick adopts them and goes on.
 */
export async function holdThenApprove(d: Driver, input: Parameters<Driver['tick']>[0] = {}) {
  const held = await d.tick(input);
  if (held.batch_state !== 'needs_human' || !recordOf(d).foreign_head)
    throw new Error(`expected the batch held for its hand commit, got ${held.batch_state}`);
  return d.tick({ approval: freshApproval() });
}
