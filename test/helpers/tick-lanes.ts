import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { KernelRecord } from '../../src/core/records/kernel.js';
import type { BatchRecord, ChildRecord } from '../../src/core/records/record.js';
import type { Handoff, Report } from '../../src/core/records/report.js';
import { startBatch } from './batch.js';
import type { Driver } from './batch.js';
import { git, makeRepo, snapshotTree } from './repo.js';

// Helpers of the lane-level tick tests (test/core/tick/: admission, qa-rework, release, lost-lane).
export const FILES = { 'README.md': '# test\n', 'docs/guide.md': 'guide\n' };

export function stateDir(repoDir: string): string {
  return join(repoDir, '.git', 'lanes', 'batches');
}

export function recordBytes(repoDir: string, batch: string): string {
  return readFileSync(join(stateDir(repoDir), `${batch}.json`), 'utf8');
}

export function readRecord(repoDir: string, batch: string): BatchRecord {
  return JSON.parse(recordBytes(repoDir, batch)) as BatchRecord;
}

export function readKernel(repoDir: string, batch: string, task: string): KernelRecord {
  const path = join(stateDir(repoDir), batch, 'tasks', `${task}.json`);
  return JSON.parse(readFileSync(path, 'utf8')) as KernelRecord;
}

export function child(report: Report | BatchRecord, task: string): ChildRecord {
  const found = report.children.find((c) => c.task_id === task);
  if (!found) throw new Error(`no child ${task}`);
  return found;
}

export function handoffsOf(report: Report, action: Handoff['action']): Handoff[] {
  return report.handoffs.filter((h) => h.action === action);
}

export function handoff(report: Report, action: Handoff['action'], task: string): Handoff | undefined {
  return report.handoffs.find((h) => h.action === action && h.task_id === task);
}

export function provisionTasks(report: Report): string[] {
  return handoffsOf(report, 'provision').map((h) => h.task_id);
}

/** A batch of one child with one check, its lane provisioned and admitted. */
export async function oneChildLane(
  batch: string,
  id: string,
  scope: string,
  acceptance: string,
): Promise<{ repoDir: string; d: Driver }> {
  const repoDir = await makeRepo(FILES);
  const plan = `batch: ${batch}\nchildren:\n  - id: ${id}\n    goal: Write ${id}\n    scope: ["${scope}"]\n    acceptance:\n      - ${acceptance}\n`;
  const d = await startBatch(repoDir, plan);
  await d.provisionAll(await d.tick());
  return { repoDir, d };
}

export function exited(d: Driver, ...tasks: string[]): Promise<Report> {
  return d.tick({ exited: tasks.map((task_id) => ({ task_id, code: 0, signal: null })) });
}

export async function batchHead(d: Driver): Promise<string> {
  return (await git(d.repo.root, 'rev-parse', `refs/heads/batch/${d.plan.batch}`)).trim();
}

/** Releases every lane the report asks to release, then ticks so the releases are recorded. */
export async function releaseAll(d: Driver, report: Report): Promise<Report> {
  for (const h of handoffsOf(report, 'release')) await d.release(h.task_id);
  return d.tick();
}

/** A refusal-only tick: exactly this refusal, and the batch record not rewritten. */
export async function expectRefused(
  d: Driver,
  repoDir: string,
  offer: { task_id: string; path: string },
  reason: string,
) {
  const before = recordBytes(repoDir, d.plan.batch);
  const tasksBefore = snapshotTree(join(stateDir(repoDir), d.plan.batch, 'tasks'));
  const report = await d.tick({ offers: [offer] });
  expect(report.lane_refusals).toStrictEqual([{ task_id: offer.task_id, path: offer.path, reason }]);
  expect(recordBytes(repoDir, d.plan.batch)).toBe(before);
  expect(snapshotTree(join(stateDir(repoDir), d.plan.batch, 'tasks'))).toStrictEqual(tasksBefore);
  return report;
}

export const check = (id: string, run: string) => `{ id: ${id}, run: ${JSON.stringify(run)} }`;
