import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { git } from '../../git/runner/git.js';
import { listWorktrees } from '../../git/worktree/worktrees.js';
import type { OpValues, ParsedOpArgs } from '../protocol.js';
import { withCacheLock } from './cache-lock.js';
import { isInside } from './place.js';
import type { Place } from './place.js';
import { dropNote, readNotes } from './sessions.js';
import { endSession, tmuxSessions } from './tmux.js';

// `batch.clean`: everything of one batch on this machine, and nothing else: its tmux
// sessions (told by the batch each was started for, never by a name's prefix: batch `a`'s
// prefix is also batch `a-b`'s), the worktrees and lane branches of the batch in the
// repository cache (`lane/<batch>/…`, the lanes under `<root>/lanes/*/<repo>/<batch>/`) and
// its run folder. Nothing outside the root is removed. Safe to run again.

export async function cleanBatch(
  { batch }: ParsedOpArgs<'batch.clean'>,
  place: Place,
): Promise<OpValues['batch.clean']> {
  const sessions = await endSessions(place, batch);
  const cache = place.cache;
  const { worktrees, branches } =
    cache === null
      ? { worktrees: [], branches: [] }
      : await withCacheLock(cache, () => cleanCache(place, cache, batch));
  const runs: string[] = [];
  const run = join(place.root, 'runs', batch);
  if (existsSync(run)) {
    rmSync(run, { recursive: true, force: true });
    runs.push(run);
  }
  return { worktrees, branches, sessions, runs };
}

async function endSessions(place: Place, batch: string): Promise<string[]> {
  const notes = readNotes(place).filter((n) => n.batch === batch);
  const live = await tmuxSessions();
  const ours = new Set([
    ...notes.map((n) => n.name),
    ...live.filter((s) => s.batch === batch).map((s) => s.name),
  ]);
  for (const session of live.filter((s) => ours.has(s.name))) await endSession(session.name, session.pid);
  for (const name of ours) dropNote(place, name);
  return [...ours].sort();
}

/** The lane folders of the batch: `<root>/lanes/<machine>/<repo>/<batch>` of every machine name. */
function laneFolders(place: Place, repo: string, batch: string): string[] {
  const lanes = join(place.root, 'lanes');
  if (!existsSync(lanes)) return [];
  return readdirSync(lanes)
    .map((machine) => join(lanes, machine, repo, batch))
    .filter((dir) => existsSync(dir));
}

async function cleanCache(
  place: Place,
  cache: string,
  batch: string,
): Promise<{ worktrees: string[]; branches: string[] }> {
  const repo = cache.slice(join(place.root, 'repos').length + 1, -'.git'.length);
  const folders = laneFolders(place, repo, batch);
  const inFolder = (path: string) => folders.some((dir) => isInside(dir, path));
  const prefix = `lane/${batch}/`;
  const worktrees: string[] = [];
  for (const w of await listWorktrees(cache)) {
    if (w.path === cache || !isInside(place.root, w.path)) continue;
    if (!inFolder(w.path) && !(w.branch ?? '').startsWith(prefix)) continue;
    await git(cache, ['worktree', 'remove', '--force', '--force', w.path], { okCodes: [128] });
    rmSync(w.path, { recursive: true, force: true });
    worktrees.push(w.path);
  }
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  await git(cache, ['worktree', 'prune']);
  const refs = await git(cache, ['for-each-ref', '--format=%(refname)', `refs/heads/${prefix}`]);
  const branches = refs.stdout.split('\n').filter(Boolean);
  if (branches.length > 0)
    await git(cache, ['update-ref', '--stdin'], { input: branches.map((r) => `delete ${r}\n`).join('') });
  return { worktrees, branches: branches.map((r) => r.slice('refs/heads/'.length)) };
}
