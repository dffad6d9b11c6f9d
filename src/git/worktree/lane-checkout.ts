import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { RepoSessions } from '../runner/repo-sessions.js';
import { plainSettings } from './checkout-settings.js';
import { writeNewFiles } from './lane-files-thread.js';
import { writeIndexFile } from './index-writer.js';
import type { CachedFolder, CheckedOutFile } from './index-writer.js';
import { isUnpopulated, linkedBranch, linkedGitDir, worktreeEntries } from './worktree-files.js';

// `git reset --hard <commit>` of a lane with nothing checked out yet (made with
// `--no-checkout`, worktree-files.ts isUnpopulated) without its process: the branch moved
// in the repository's ref transaction process, the commit's files written from their blobs
// (read through the object reader), then the index git would write for them. It was the
// process on the way of every lane made ahead to its offer, where the loop waits for it
// (docs/PERFORMANCE.md "A lane checked out by lanes"). Only where the result is certain to
// be git's: plain settings (checkout-settings.ts), a tree of at most MAX_FILES regular files
// under names any git checks out as they are, SHA-1 names; anything else is git's (null).

const MAX_FILES = 2000;
const MAX_BYTES = 32 * 1024 * 1024;

/** A name git writes as it is on every platform's checks: printable ASCII, no `.git` of any spelling. */
export function plainName(name: string): boolean {
  if (!/^[\x20-\x7e]+$/.test(name) || /[\\:]/.test(name) || name === '.' || name === '..') return false;
  const bare = name.toLowerCase().replace(/[. ]+$/, '');
  return bare !== '.git' && bare !== 'git~1' && bare !== '.gitattributes' && bare !== '.gitmodules';
}

/** Blobs read for earlier checkouts (every lane is checked out from much the same tree). */
const blobCache = new Map<string, Buffer>();
let cachedBytes = 0;
const CACHE_BYTES = 16 * 1024 * 1024;
const CACHED_BLOB = 256 * 1024;

async function readBlob(sessions: RepoSessions, sha: string): Promise<Buffer | null> {
  const known = blobCache.get(sha);
  if (known) return known;
  const object = await sessions.objects.read(sha);
  if (object?.type !== 'blob') return null;
  if (object.content.length <= CACHED_BLOB) {
    if (cachedBytes + object.content.length > CACHE_BYTES) {
      blobCache.clear();
      cachedBytes = 0;
    }
    blobCache.set(sha, object.content);
    cachedBytes += object.content.length;
  }
  return object.content;
}

interface Listed {
  files: { path: string; mode: number; sha: string }[];
  folders: string[];
  root: CachedFolder;
}

/** The commit's files and folders, or null when any entry is not a plain file or folder. */
async function listTree(sessions: RepoSessions, tree: string): Promise<Listed | null> {
  const files: Listed['files'] = [];
  const folders: string[] = [];
  const walk = async (sha: string, name: string, prefix: string): Promise<CachedFolder | null> => {
    const entries = await sessions.objects.tree(sha);
    if (entries === null) return null;
    const folder: CachedFolder = { name, sha, files: 0, folders: [] };
    const below: Promise<CachedFolder | null>[] = [];
    for (const e of entries) {
      if (!plainName(e.name)) return null;
      const path = prefix + e.name;
      if (e.mode === '40000') {
        folders.push(path);
        below.push(walk(e.sha, e.name, `${path}/`));
      } else if (e.mode === '100644' || e.mode === '100755') {
        files.push({ path, mode: parseInt(e.mode, 8), sha: e.sha });
        folder.files++;
      } else return null; // (a symlink, a submodule)
      if (files.length + folders.length > MAX_FILES) return null;
    }
    for (const sub of await Promise.all(below)) {
      if (sub === null) return null;
      folder.folders.push(sub);
      folder.files += sub.files;
    }
    return folder;
  };
  const root = await walk(tree, '', '');
  return root === null ? null : { files, folders, root };
}

/**
 * Checks out `commit` in the unpopulated lane at `lanePath`, its branch moved there first:
 * true when done, false when refused (the branch is not where the lane's HEAD was read, the
 * lane is no longer there), null when this is not a case done here (the caller runs git;
 * nothing was changed).
 */
export async function checkoutLane(
  sessions: RepoSessions,
  commonDir: string,
  lanePath: string,
  commit: string,
): Promise<boolean | null> {
  const gitDir = linkedGitDir(lanePath);
  const branch = linkedBranch(lanePath);
  if (gitDir === null || branch === null || commit.length !== 40 || !isUnpopulated(lanePath)) return null;
  if (!(await plainSettings(sessions.root, commonDir)).checkout) return null;
  const target = await sessions.objects.commit(commit);
  const listed = target && (await listTree(sessions, target.tree));
  if (!listed) return null;
  const blobs = await Promise.all(listed.files.map((f) => readBlob(sessions, f.sha)));
  if (blobs.some((b) => b === null) || blobs.reduce((n, b) => n + b!.length, 0) > MAX_BYTES) return null;
  const ref = `refs/heads/${branch}`;
  const head = await sessions.branchTip(branch);
  if (head === null) return null;
  if (head !== commit && !(await sessions.refs.transaction([`update ${ref} ${commit} ${head}`])))
    return false;
  // From here on the lane's files (lane-files-thread.ts: nothing of them left on a failure).
  writing.add(lanePath);
  try {
    const stats = await writeNewFiles(
      lanePath,
      listed.folders,
      listed.files.map((f, i) => ({ path: f.path, data: blobs[i]!, executable: f.mode === 0o100755 })),
    );
    const files: CheckedOutFile[] = listed.files.map((f, i) => ({ ...f, stat: stats[i]! }));
    try {
      writeIndexFile(join(gitDir, 'index'), files, listed.root);
    } catch {
      const made = [...listed.files.map((f) => f.path), ...listed.folders.reverse()];
      for (const path of made) rmSync(join(lanePath, path), { recursive: true, force: true });
      return false;
    }
    return true;
  } catch {
    return false; // (the lane gone meanwhile, or not writable)
  } finally {
    writing.delete(lanePath);
  }
}

/** The lanes whose files this process is writing now. */
const writing = new Set<string>();

/**
 * A lane whose checkout by lanes was cut short (lanes killed while the worker wrote its files,
 * or before the index was renamed into place): no index, and every file in it the blob its
 * HEAD's tree has at that path. Such a lane is taken back to nothing checked out, its files
 * removed (each is a committed blob: nothing of anyone's goes) and a lock of its index left
 * by the cut with them; true when the lane was one. Anything else in it (a file of another
 * content or name, a link) and it is left as it is: false, and it reads as a lane with changes.
 */
export async function undoCutCheckout(sessions: RepoSessions, lanePath: string): Promise<boolean> {
  const gitDir = linkedGitDir(lanePath);
  if (gitDir === null || writing.has(lanePath) || existsSync(join(gitDir, 'index'))) return false;
  if (readdirSync(lanePath).every((name) => name === '.git')) return false; // (unpopulated: nothing cut)
  const branch = linkedBranch(lanePath);
  const head = branch !== null ? await sessions.branchTip(branch) : null;
  const tree = head !== null ? (await sessions.objects.commit(head))?.tree : undefined;
  const listed = tree ? await listTree(sessions, tree) : null;
  if (!listed) return false;
  const blobs = new Map(listed.files.map((f) => [f.path, f]));
  const folders = new Set(listed.folders);
  const entries = worktreeEntries(lanePath, MAX_FILES);
  if (!entries || !entries.folders.every((f) => folders.has(f)) || !entries.files.every((f) => blobs.has(f)))
    return false;
  // (a file cut while it was written holds the start of its blob)
  for (const path of entries.files) {
    const content = readFileSync(join(lanePath, path));
    const sha = blobs.get(path)!.sha;
    if (blobName(content) === sha) continue;
    const blob = await readBlob(sessions, sha);
    if (!blob || content.length >= blob.length || !blob.subarray(0, content.length).equals(content))
      return false;
  }
  for (const path of [...entries.files, ...entries.folders.reverse()])
    rmSync(join(lanePath, path), { recursive: true, force: true });
  rmSync(join(gitDir, 'index.lock'), { force: true });
  return true;
}

/** The object name git gives `content` as a blob (SHA-1). */
function blobName(content: Buffer): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}
