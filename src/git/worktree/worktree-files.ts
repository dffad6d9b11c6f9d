import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

// The worktrees of a repository read from the files git keeps for them, as `git worktree
// list` reads them: the main worktree beside its `.git` directory, each linked one from
// `<common dir>/worktrees/<id>/` (`gitdir` names its `.git` file, `HEAD` its branch).
// No process, so a tick can look at every lane for free (docs/DECISIONS.md "Git speed").

/** A worktree as `git worktree list` and its files tell it. */
export interface WorktreeEntry {
  path: string;
  head: string | null;
  /** Short branch name, or null when detached. */
  branch: string | null;
}

/** The git directory a linked worktree's `.git` file names, or null when `path/.git` is not such a file. */
export function linkedGitDir(path: string): string | null {
  const dotGit = resolve(path, '.git');
  try {
    if (!statSync(dotGit).isFile()) return null;
    const match = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, 'utf8'));
    return match ? resolve(path, (match[1] as string).trim()) : null;
  } catch {
    return null;
  }
}

/** A linked worktree's HEAD file (gitDir its folder): the branch it is on, or the commit it is detached at. */
export function readHead(gitDir: string): { head: string | null; branch: string | null } | null {
  let text: string;
  try {
    text = readFileSync(join(gitDir, 'HEAD'), 'utf8').trim();
  } catch {
    return null;
  }
  const ref = /^ref: (.+)$/.exec(text);
  if (ref) {
    const name = ref[1] as string;
    return { head: null, branch: name.startsWith('refs/heads/') ? name.slice('refs/heads/'.length) : null };
  }
  return /^[0-9a-f]{40,64}$/.test(text) ? { head: text, branch: null } : null;
}

/**
 * A linked worktree made without a checkout (`worktree add --no-checkout`) and still holding
 * nothing but its `.git` file: git wrote no index for it, and reads it as every file deleted.
 */
export function isUnpopulated(path: string): boolean {
  const gitDir = linkedGitDir(path);
  if (gitDir === null || existsSync(join(gitDir, 'index'))) return false;
  try {
    const names = readdirSync(path);
    return names.length === 1 && names[0] === '.git';
  } catch {
    return false;
  }
}

/**
 * Every folder and file below the worktree at `path` (its own `.git` left out), '/'-separated,
 * each folder before what it holds; null when anything there is neither (a link, a socket)
 * or there are more than `limit` entries.
 */
export function worktreeEntries(path: string, limit: number): { folders: string[]; files: string[] } | null {
  const folders: string[] = [];
  const files: string[] = [];
  const walk = (dir: string, prefix: string): boolean =>
    readdirSync(dir, { withFileTypes: true }).every((entry) => {
      if (prefix === '' && entry.name === '.git') return true;
      const at = prefix + entry.name;
      if (entry.isDirectory()) folders.push(at);
      else if (entry.isFile()) files.push(at);
      else return false;
      return (
        folders.length + files.length <= limit &&
        (!entry.isDirectory() || walk(join(dir, entry.name), `${at}/`))
      );
    });
  return walk(path, '') ? { folders, files } : null;
}

/** The name the repository knows a linked worktree's HEAD by (for cat-file and update-ref). */
export function linkedHeadRef(gitDir: string): string {
  return `worktrees/${basename(gitDir)}/HEAD`;
}

/** The branch a linked worktree is on, from its HEAD file; null when detached or not one. */
export function linkedBranch(path: string): string | null {
  const gitDir = linkedGitDir(path);
  return gitDir === null ? null : (readHead(gitDir)?.branch ?? null);
}

/**
 * The worktrees of the repository whose common git directory is `commonDir`, or null when
 * its files are not the plain layout read here (a bare repository, a file git would
 * report differently): the caller asks `git worktree list` then. `head` is only filled
 * for detached worktrees.
 */
export function worktreesFromFiles(commonDir: string): WorktreeEntry[] | null {
  if (basename(commonDir) !== '.git') return null;
  const main = readHead(commonDir);
  if (main === null) return null;
  const entries: WorktreeEntry[] = [{ path: dirname(commonDir), ...main }];
  const dir = join(commonDir, 'worktrees');
  if (!existsSync(dir)) return entries;
  for (const id of readdirSync(dir)) {
    const gitDir = join(dir, id);
    let dotGit: string;
    try {
      dotGit = readFileSync(join(gitDir, 'gitdir'), 'utf8').trim();
    } catch (error) {
      // Half made or half removed by a `git worktree add`/`remove` running beside us (the
      // steward's jobs): not a worktree yet, or not any more.
      if (isMissing(error)) continue;
      return null;
    }
    const head = readHead(gitDir);
    if (head === null && inFlux(gitDir)) continue;
    if (head === null || !dotGit.endsWith('/.git')) return null;
    entries.push({ path: dirname(resolve(gitDir, dotGit)), ...head });
  }
  return entries;
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

/** A worktree's git directory gone, or its HEAD not written yet (`worktree add` writes it last). */
function inFlux(gitDir: string): boolean {
  return !existsSync(join(gitDir, 'HEAD')) || !existsSync(join(gitDir, 'commondir'));
}
