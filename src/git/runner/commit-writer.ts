import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git } from './git.js';
import { GitSession } from './git-session.js';
import { scratchDir } from '../../process/scratch.js';

// Commit objects written through one `git hash-object -w -t commit --stdin-paths` kept open
// per repository: lanes composes the commit (tree, parent, author, committer, message) and
// git checks its format and stores it, as `commit-tree` would, without a process per commit
// (docs/DECISIONS.md "Git speed"). Hooks and signing never apply to lanes' commits.

export interface Person {
  name: string;
  email: string;
  /** Fixed "<seconds> <zone>" when the environment sets the date (GIT_*_DATE), else null: now. */
  date: string | null;
}

export interface Identity {
  author: Person;
  committer: Person;
}

const FALLBACK = { name: 'lanes', email: 'lanes@localhost', date: null };

/** The repository's author and committer (`git var`), or lanes' own when it has none. Asked once. */
export async function readIdentity(cwd: string): Promise<Identity> {
  const [author, committer] = await Promise.all(
    ['GIT_AUTHOR_IDENT', 'GIT_COMMITTER_IDENT'].map(async (name) => {
      const out = await git(cwd, ['var', name], { okCodes: [128] });
      return out.exitCode === 0 ? parsePerson(out.stdout.trim(), name) : FALLBACK;
    }),
  );
  return { author: author ?? FALLBACK, committer: committer ?? FALLBACK };
}

function parsePerson(ident: string, varName: string): Person {
  const match = /^(.*) <([^<>]*)> (\d+ [+-]\d{4})$/.exec(ident);
  if (!match) return FALLBACK;
  const dateVar = varName === 'GIT_AUTHOR_IDENT' ? 'GIT_AUTHOR_DATE' : 'GIT_COMMITTER_DATE';
  return {
    name: match[1] as string,
    email: match[2] as string,
    date: process.env[dateVar] ? (match[3] as string) : null,
  };
}

/** "<seconds> <zone>" of now, in the local zone as git writes it. */
export function gitNow(now = new Date()): string {
  const offset = -now.getTimezoneOffset();
  const abs = Math.abs(offset);
  const zone = `${offset < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
  return `${Math.floor(now.getTime() / 1000)} ${zone}`;
}

export function personLine(p: Person): string {
  return `${p.name} <${p.email}> ${p.date ?? gitNow()}`;
}

export class CommitWriter {
  private readonly session: GitSession;
  private scratch: string | null = null;
  private n = 0;

  /** `written`: told of each commit written, with its text (the object reader keeps it). */
  constructor(
    cwd: string,
    private readonly written: (sha: string, text: string) => void = () => {},
  ) {
    this.session = new GitSession(cwd, ['hash-object', '-w', '-t', 'commit', '--stdin-paths']);
  }

  warm(): void {
    this.session.warm();
  }

  close(): void {
    this.session.close();
    if (this.scratch) rmSync(this.scratch, { recursive: true, force: true });
    this.scratch = null;
  }

  /** Writes a commit object; `author` and `committer` are full ident lines ("Name <email> <date>"). */
  write(
    tree: string,
    parents: readonly string[],
    author: string,
    committer: string,
    message: string,
  ): Promise<string> {
    const body =
      `tree ${tree}\n${parents.map((p) => `parent ${p}\n`).join('')}` +
      `author ${author}\ncommitter ${committer}\n\n${message}`;
    this.scratch ??= scratchDir('lanes-commit'); // (a killed process's is swept: process/scratch.ts)
    const file = join(this.scratch, `c${this.n++}`);
    writeFileSync(file, body);
    return this.session
      .ask(
        `${file}\n`,
        async (read) => {
          const sha = await read.line();
          if (!/^[0-9a-f]{40,64}$/.test(sha))
            throw new Error(`git hash-object answered ${JSON.stringify(sha)}`);
          this.written(sha, body);
          return sha;
        },
        true,
      ) // (the same commit object again: safe to repeat after a closed session)
      .finally(() => rmSync(file, { force: true }));
  }
}
