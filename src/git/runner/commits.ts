import { git, gitLine, splitNul } from './git.js';

// Reading commits: resolving refs, ancestry, trailers and "what a commit changes".

export async function resolveCommit(cwd: string, ref: string): Promise<string | null> {
  const result = await git(cwd, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], {
    okCodes: [1, 128],
  });
  return result.exitCode === 0 ? result.stdout.trim() : null;
}

export async function isAncestor(cwd: string, ancestor: string, descendant: string): Promise<boolean> {
  if (ancestor === descendant && /^[0-9a-f]{40,64}$/.test(ancestor)) return true; // no git call for X..X
  const result = await git(cwd, ['merge-base', '--is-ancestor', ancestor, descendant], { okCodes: [1] });
  return result.exitCode === 0;
}

export interface CommitInfo {
  sha: string;
  parents: string[];
  subject: string;
  /** Trailer values by key (the last one wins). */
  trailers: Record<string, string>;
}

const FIELD = '\x1f';
const RECORD = '\x1e';
const FORMAT = `%H${FIELD}%P${FIELD}%s${FIELD}%(trailers:only,unfold)${RECORD}`;

function parseCommits(text: string): CommitInfo[] {
  return text
    .split(RECORD)
    .map((chunk) => chunk.replace(/^\n/, ''))
    .filter((chunk) => chunk.trim() !== '')
    .map((chunk) => {
      const [sha = '', parents = '', subject = '', trailerText = ''] = chunk.split(FIELD);
      const trailers: Record<string, string> = {};
      for (const line of trailerText.split('\n')) {
        const match = /^([A-Za-z0-9-]+):\s*(.*)$/.exec(line);
        if (match) trailers[match[1] as string] = (match[2] as string).trim();
      }
      return { sha, parents: parents.split(' ').filter(Boolean), subject, trailers };
    });
}

export async function commitInfo(cwd: string, sha: string): Promise<CommitInfo> {
  const out = await git(cwd, ['log', '-1', `--format=${FORMAT}`, sha, '--']);
  const [info] = parseCommits(out.stdout);
  if (!info) throw new Error(`commit ${sha} not found`);
  return info;
}

/** Commits reachable from `to` but not from `from`, oldest first. */
export async function commitsBetween(cwd: string, from: string, to: string): Promise<CommitInfo[]> {
  const out = await git(cwd, [
    'log',
    '--reverse',
    '--topo-order',
    `--format=${FORMAT}`,
    `${from}..${to}`,
    '--',
  ]);
  return parseCommits(out.stdout);
}

/** What a change does, path by path: "<mode> <blob>" of the new side ("0 deleted" for a deletion). */
export async function changeIdentity(cwd: string, from: string, to: string): Promise<Map<string, string>> {
  const out = await git(cwd, [
    'diff-tree',
    '-r',
    '-z',
    '--raw',
    '--no-renames',
    '--no-ext-diff',
    '--no-commit-id',
    from,
    to,
  ]);
  const parts = splitNul(out.stdout);
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const meta = (parts[i] as string).split(' ');
    const status = meta[4] ?? '';
    map.set(parts[i + 1] as string, status === 'D' ? '0 deleted' : `${meta[1]} ${meta[3]}`);
  }
  return map;
}

export function sameChange(a: Map<string, string>, b: Map<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [path, id] of a) if (b.get(path) !== id) return false;
  return true;
}

const identities = new Map<string, Promise<Record<string, string>>>();

/**
 * Environment that gives lanes' commits an identity when the repository has none
 * configured. Asked once per folder and process: the answer does not change mid-batch.
 */
export function identityEnv(cwd: string): Promise<Record<string, string>> {
  let found = identities.get(cwd);
  if (!found) {
    found = readIdentityEnv(cwd);
    identities.set(cwd, found);
  }
  return found;
}

async function readIdentityEnv(cwd: string): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  const author = await git(cwd, ['var', 'GIT_AUTHOR_IDENT'], { okCodes: [128] });
  if (author.exitCode !== 0)
    Object.assign(env, { GIT_AUTHOR_NAME: 'lanes', GIT_AUTHOR_EMAIL: 'lanes@localhost' });
  const committer = await git(cwd, ['var', 'GIT_COMMITTER_IDENT'], { okCodes: [128] });
  if (committer.exitCode !== 0)
    Object.assign(env, { GIT_COMMITTER_NAME: 'lanes', GIT_COMMITTER_EMAIL: 'lanes@localhost' });
  return env;
}

/**
 * git's own three-way merge of two commits (`merge-tree --write-tree`, ort): the merged
 * tree (with conflict markers where it conflicts) and the paths in conflict, none when it
 * merged cleanly. Writes objects only; no ref, index or file moves.
 */
export async function mergeTrees(
  cwd: string,
  ours: string,
  theirs: string,
  /** The merge base to use instead of git's (a lane's base: only the lane's own change is merged). */
  base?: string,
): Promise<{ tree: string; conflicts: string[] }> {
  // (git before 2.40 has no --merge-base: `ours`'s tree on a commit whose parent is `base`
  // makes `base` the merge base, as the batch rebuild's replay does.)
  const side =
    base === undefined
      ? ours
      : await commitTree(cwd, `${ours}^{tree}`, base, 'lanes: merge base\n', await identityEnv(cwd));
  const out = await git(
    cwd,
    ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', side, theirs],
    {
      okCodes: [1],
    },
  );
  const [tree = '', ...paths] = splitNul(out.stdout.replace(/\n$/, ''));
  const conflicts = out.exitCode === 0 ? [] : [...new Set(paths.map((p) => p.trim()).filter(Boolean))];
  return { tree: tree.trim(), conflicts };
}

/** The tree of a clean merge, or the paths in conflict (mergeTrees). */
export async function cleanMerge(
  cwd: string,
  ours: string,
  theirs: string,
): Promise<{ tree: string } | { conflicts: string[] }> {
  const { tree, conflicts } = await mergeTrees(cwd, ours, theirs);
  return conflicts.length > 0 ? { conflicts } : { tree };
}

/** Creates a commit object (no ref moves). */
export async function commitTree(
  cwd: string,
  tree: string,
  parent: string,
  message: string,
  env: Record<string, string>,
): Promise<string> {
  return gitLine(cwd, ['commit-tree', tree, '-p', parent, '-F', '-'], { env, input: message });
}

/** Points `ref` at `commit` (no compare: the ref is lanes' own). */
export async function keepRef(root: string, ref: string, commit: string): Promise<void> {
  await git(root, ['update-ref', ref, commit]);
}

/** Deletes `ref`; a missing one is no error. */
export async function dropRef(root: string, ref: string): Promise<void> {
  await git(root, ['update-ref', '-d', ref], { okCodes: [1] });
}

/** Compare-and-swap a ref: true when it moved from `expected` to `next`. */
export async function updateRef(cwd: string, ref: string, next: string, expected: string): Promise<boolean> {
  const result = await git(cwd, ['update-ref', ref, next, expected], { okCodes: [1, 128] });
  return result.exitCode === 0;
}

export async function gitVersion(cwd: string): Promise<[number, number]> {
  const out = await gitLine(cwd, ['--version']);
  const match = /(\d+)\.(\d+)/.exec(out);
  return match ? [Number(match[1]), Number(match[2])] : [0, 0];
}
