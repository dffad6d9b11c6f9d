import { GitSession } from './git-session.js';
import type { StreamReader } from './git-session.js';

// Object reads through one `git cat-file --batch-command` kept open per repository: a ref
// resolved or a commit read is a pipe round trip, not a process (docs/DECISIONS.md "Git
// speed"). Objects never change, so a parsed commit or tree is asked for once.

export interface ParsedCommit {
  sha: string;
  tree: string;
  parents: string[];
  /** The raw `author` header value: "Name <email> <seconds> <zone>". */
  author: string;
  message: string;
  /** Trailer values by key (the last one wins), from the message's last paragraph. */
  trailers: Record<string, string>;
}

export interface TreeEntry {
  mode: string;
  name: string;
  sha: string;
}

const CACHE_LIMIT = 4096;

export class ObjectReader {
  private readonly session: GitSession;
  private readonly commits = new Map<string, ParsedCommit>();
  private readonly trees = new Map<string, TreeEntry[]>();

  constructor(cwd: string) {
    this.session = new GitSession(cwd, ['cat-file', '--batch-command']);
  }

  warm(): void {
    this.session.warm();
  }

  close(): void {
    this.session.close();
  }

  /** The object name a revision resolves to (`refs/heads/x^{commit}`, `worktrees/<id>/HEAD`), or null. */
  resolve(rev: string): Promise<string | null> {
    if (/[\n\r]/.test(rev)) return Promise.resolve(null);
    return this.session.ask(`info ${rev}\n`, async (read) => {
      const header = await read.line();
      const match = /^([0-9a-f]{40,64}) \S+ \d+$/.exec(header);
      return match ? (match[1] as string) : null;
    });
  }

  /** An object's type and content, or null when it does not exist. */
  read(rev: string): Promise<{ sha: string; type: string; content: Buffer } | null> {
    if (/[\n\r]/.test(rev)) return Promise.resolve(null);
    return this.session.ask(`contents ${rev}\n`, readObject);
  }

  async commit(rev: string): Promise<ParsedCommit | null> {
    const cached = this.commits.get(rev);
    if (cached) return cached;
    const object = await this.read(rev);
    if (!object || object.type !== 'commit') return null;
    const parsed = parseCommit(object.sha, object.content.toString('utf8'));
    this.keep(this.commits, parsed.sha, parsed);
    return parsed;
  }

  /** A commit lanes has just written (its raw object text): later reads need no round trip. */
  rememberCommit(sha: string, text: string): void {
    this.keep(this.commits, sha, parseCommit(sha, text));
  }

  /** A tree lanes has just written, its entries in git's order. */
  rememberTree(sha: string, entries: readonly TreeEntry[]): void {
    const key = (e: TreeEntry) => Buffer.from(/^0*40000$/.test(e.mode) ? `${e.name}/` : e.name);
    this.keep(
      this.trees,
      sha,
      [...entries].sort((a, b) => Buffer.compare(key(a), key(b))),
    );
  }

  private keep<T>(cache: Map<string, T>, sha: string, value: T): void {
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(sha, value);
  }

  async tree(sha: string): Promise<TreeEntry[] | null> {
    const cached = this.trees.get(sha);
    if (cached) return cached;
    const object = await this.read(sha);
    if (!object || object.type !== 'tree') return null;
    const parsed = parseTree(object.content, object.sha.length / 2);
    this.keep(this.trees, object.sha, parsed);
    return parsed;
  }

  /**
   * Whether `ancestor` is reachable from `descendant`, walking at most `limit` commits;
   * null when the walk was cut short (the caller asks git then).
   */
  async reaches(ancestor: string, descendant: string, limit = 256): Promise<boolean | null> {
    const seen = new Set<string>();
    const todo = [descendant];
    while (todo.length > 0) {
      const sha = todo.pop() as string;
      if (sha === ancestor) return true;
      if (seen.has(sha)) continue;
      seen.add(sha);
      if (seen.size > limit) return null;
      const commit = await this.commit(sha);
      if (!commit) return null;
      todo.push(...commit.parents);
    }
    return false;
  }
}

async function readObject(
  read: StreamReader,
): Promise<{ sha: string; type: string; content: Buffer } | null> {
  const header = await read.line();
  const match = /^([0-9a-f]{40,64}) (\S+) (\d+)$/.exec(header);
  if (!match) return null; // "<name> missing" or "<name> ambiguous"
  const size = Number(match[3]);
  const body = await read.bytes(size + 1); // the content and its newline
  return { sha: match[1] as string, type: match[2] as string, content: body.subarray(0, size) };
}

export function parseCommit(sha: string, text: string): ParsedCommit {
  const split = text.indexOf('\n\n');
  const head = split < 0 ? text : text.slice(0, split);
  const message = split < 0 ? '' : text.slice(split + 2);
  let tree = '';
  let author = '';
  const parents: string[] = [];
  for (const line of head.split('\n')) {
    if (line.startsWith('tree ')) tree = line.slice(5);
    else if (line.startsWith('parent ')) parents.push(line.slice(7));
    else if (line.startsWith('author ')) author = line.slice(7);
  }
  return { sha, tree, parents, author, message, trailers: parseTrailers(message) };
}

/** `Key: value` lines of the message's last paragraph, when every line of it is one (folded lines joined). */
export function parseTrailers(message: string): Record<string, string> {
  const paragraphs = message.replace(/\s+$/, '').split(/\n[ \t]*\n/);
  const last = paragraphs.length > 1 ? (paragraphs.at(-1) as string) : '';
  const trailers: Record<string, string> = {};
  const lines: string[] = [];
  for (const line of last.split('\n')) {
    if (/^[ \t]/.test(line) && lines.length > 0) lines[lines.length - 1] += ` ${line.trim()}`;
    else lines.push(line);
  }
  for (const line of lines) {
    const match = /^([A-Za-z0-9-]+):\s*(.*)$/.exec(line);
    if (!match) return {};
    trailers[match[1] as string] = (match[2] as string).trim();
  }
  return trailers;
}

export function parseTree(content: Buffer, hashBytes = 20): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let at = 0;
  while (at < content.length) {
    const space = content.indexOf(32, at);
    const nul = content.indexOf(0, space);
    if (space < 0 || nul < 0) break;
    const mode = content.subarray(at, space).toString('latin1');
    const name = content.subarray(space + 1, nul).toString('utf8');
    const sha = content.subarray(nul + 1, nul + 1 + hashBytes).toString('hex');
    entries.push({ mode, name, sha });
    at = nul + 1 + hashBytes;
  }
  return entries;
}
