import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { badInput } from '../core/basics/errors.js';
import { gitLine, GitError } from '../git/runner/git.js';

// Where a repository's lanes state lives: <git-common-dir>/lanes (DESIGN §2.3), shared by
// every worktree of the repository and never inside a work tree.

export interface RepoPaths {
  /** The top level of the work tree lanes was started in. */
  root: string;
  /** The repository's common git dir (the main .git, also from a linked worktree). */
  commonDir: string;
  /** <commonDir>/lanes */
  stateDir: string;
}

export async function findRepo(cwd: string): Promise<RepoPaths> {
  if (!existsSync(cwd)) throw badInput('not_a_repository', `${cwd}: no such directory`);
  try {
    const out = await gitLine(cwd, [
      'rev-parse',
      '--path-format=absolute',
      '--show-toplevel',
      '--git-common-dir',
    ]);
    const [root, commonDir] = out.split('\n');
    if (!root || !commonDir) throw badInput('not_a_repository', `${cwd} is not inside a git work tree`);
    return { root, commonDir, stateDir: join(commonDir, 'lanes') };
  } catch (error) {
    if (error instanceof GitError)
      throw badInput('not_a_repository', `${resolve(cwd)} is not inside a git work tree`);
    throw error;
  }
}

export interface BatchPaths {
  record: string;
  report: string;
  journal: string;
  batchDir: string;
  tasksDir: string;
  logsDir: string;
  lock: string;
  lockHolder: string;
}

/** The folder of every batch's record, report and journal. */
export function batchesDir(stateDir: string): string {
  return join(stateDir, 'batches');
}

/** Made once a batch: the tick asks for them for every lane it reads, many times a second. */
const pathsOf = new Map<string, Readonly<BatchPaths>>();

export function batchPaths(stateDir: string, batchId: string): Readonly<BatchPaths> {
  const key = `${stateDir}\0${batchId}`;
  let paths = pathsOf.get(key);
  if (paths === undefined) {
    paths = Object.freeze(makeBatchPaths(stateDir, batchId));
    pathsOf.set(key, paths);
  }
  return paths;
}

function makeBatchPaths(stateDir: string, batchId: string): BatchPaths {
  const batches = batchesDir(stateDir);
  const batchDir = join(batches, batchId);
  return {
    record: join(batches, `${batchId}.json`),
    report: join(batches, `${batchId}.report.json`),
    journal: join(batches, `${batchId}.events.jsonl`),
    batchDir,
    tasksDir: join(batchDir, 'tasks'),
    logsDir: join(batchDir, 'logs'),
    lock: join(stateDir, 'locks', batchId),
    lockHolder: join(stateDir, 'locks', `${batchId}.holder.json`),
  };
}
