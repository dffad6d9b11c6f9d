import { LanesError } from '../../core/basics/errors.js';

// ssh joins the words after the destination into one line and hands it to the remote
// user's shell. So every word lanes sends there is quoted here, and only here, for a POSIX
// shell: single quotes hold everything literally except a single quote, which closes the
// quote, is escaped, and opens it again.

/** One word for a POSIX shell: `it's` → `'it'\''s'`. A NUL byte cannot be sent at all. */
export function shellQuote(word: string): string {
  if (word.includes('\0'))
    throw new LanesError('usage', 'a word for a remote shell must not contain a NUL byte');
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The command line that runs `argv` on the remote shell, word for word. */
export function shellLine(argv: readonly string[]): string {
  return argv.map(shellQuote).join(' ');
}

/**
 * A configured root (`~`, `~/x` or an absolute path) as a shell word: `~` stands for the
 * remote user's home, which only the remote shell knows.
 */
export function rootWord(root: string): string {
  if (root === '~') return '"$HOME"';
  if (root.startsWith('~/')) return `"$HOME"/${shellQuote(root.slice(2))}`;
  return shellQuote(root);
}
