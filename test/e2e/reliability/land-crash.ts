import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, tempDir } from '../../helpers/repo.js';
import { copyRepo, fileChild, lanesProcess, leanRepo, writePlan } from './support.js';

// `lanes land --merge` killed (kill -9) part way (issue 24, item 4): the base branch is
// checked out in the user's worktree; a second `land --merge` must finish the landing —
// the branch on the merge commit, the worktree's files and index following it.

export const LAND_BATCH = 'lm';

/** A completed two-child batch whose base (main, checked out in the repo) moved since. */
export async function landTemplate(): Promise<string> {
  const repo = await leanRepo();
  const plan = writePlan({
    batch: LAND_BATCH,
    executor: 'script',
    children: [fileChild('A'), fileChild('B')],
  });
  const r = await lanesProcess(['-C', repo, 'start', plan, '--yes', '--headless']);
  if (r.exitCode !== 0) throw new Error(`the template batch did not complete: ${r.stderr}`);
  writeFileSync(join(repo, 'README.md'), '# moved on\n');
  await git(repo, 'commit', '-qam', 'moved on');
  return repo;
}

/** What a landing that finished leaves: problems, none when it is whole. */
export async function landProblems(repo: string, moved: string): Promise<string[]> {
  const problems: string[] = [];
  const main = (await git(repo, 'rev-parse', 'main')).trim();
  const batch = (await git(repo, 'rev-parse', `batch/${LAND_BATCH}`)).trim();
  const parents = (await git(repo, 'rev-list', '--parents', '-1', 'main')).trim();
  if (parents !== `${main} ${moved} ${batch}`) problems.push(`main is not the merge: ${parents}`);
  const status = await git(repo, 'status', '--porcelain');
  if (status !== '') problems.push(`the worktree does not follow main: ${JSON.stringify(status)}`);
  for (const id of ['A', 'B']) {
    const text = (() => {
      try {
        return readFileSync(join(repo, `f/${id}.txt`), 'utf8');
      } catch {
        return null;
      }
    })();
    if (text !== `${id}\n`) problems.push(`f/${id}.txt is ${JSON.stringify(text)}`);
  }
  if (readFileSync(join(repo, 'README.md'), 'utf8') !== '# moved on\n') problems.push('README.md lost');
  const again = await lanesProcess(['-C', repo, 'land', LAND_BATCH, '--merge']);
  if (again.exitCode !== 0 || !again.stdout.includes('already on main'))
    problems.push(`a third land: ${again.exitCode} ${again.stdout}${again.stderr}`);
  return problems;
}

/** Every point a reference `land --merge` reaches, each as a LANES_CRASH_AT spec (n-th reach). */
export async function landCrashSpecs(template: string): Promise<string[]> {
  const repo = copyRepo(template);
  const countFile = join(tempDir('lanes-count-'), 'counts');
  const r = await lanesProcess(['-C', repo, 'land', LAND_BATCH, '--merge'], {
    LANES_CRASH_COUNT_FILE: countFile,
  });
  if (r.exitCode !== 0) throw new Error(`the reference land failed: ${r.stderr}`);
  const seen = new Map<string, number>();
  const specs: string[] = [];
  for (const line of readFileSync(countFile, 'utf8').split('\n').filter(Boolean)) {
    const [point = '', detail = ''] = line.split(' ');
    const key = detail ? `${point}@${detail}` : point;
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    specs.push(`${key}:${n}`);
  }
  return specs;
}

/** One cell: `land --merge` killed at `spec`, then `land --merge` again (at most 3 times). */
export async function landCell(template: string, spec: string) {
  const repo = copyRepo(template);
  const moved = (await git(repo, 'rev-parse', 'main')).trim();
  const crashed = await lanesProcess(['-C', repo, 'land', LAND_BATCH, '--merge'], { LANES_CRASH_AT: spec });
  const runs: number[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await lanesProcess(['-C', repo, 'land', LAND_BATCH, '--merge']);
    runs.push(r.exitCode);
    if (r.exitCode === 0) break;
  }
  return { spec, signal: crashed.signal, runs, problems: await landProblems(repo, moved) };
}
