import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

// Where a program would be found when an executor starts: a path (with a `/`) is taken
// as it is, relative to `cwd`; a bare name is looked up in PATH as execvp does.

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The program's path, or null when it would not start (not there, not executable). */
export function findProgram(program: string, searchPath: string | undefined, cwd: string): string | null {
  if (program.includes('/')) {
    const path = isAbsolute(program) ? program : resolve(cwd, program);
    return isExecutableFile(path) ? path : null;
  }
  for (const dir of (searchPath ?? '').split(delimiter)) {
    if (dir === '') continue; // (an empty entry means the cwd to execvp; lanes does not look there)
    const path = join(dir, program);
    if (isExecutableFile(path)) return path;
  }
  return null;
}
