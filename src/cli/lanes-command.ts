import { realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';

// How the user runs lanes from their shell (issue 26: every printed command runs as
// printed). `lanes` when that is what the shell finds; when lanes was started through npm
// (`npm run demo`, `npm run lanes -- …`) or by a path, the form that works from anywhere.

let cached: string | null = null;
/** ` -C <dir>` when the command runs elsewhere than where the user is (`lanes -C <dir> …`). */
let where = '';

/** Hints name the folder the command ran in when that is not the user's own (run.ts). */
export function hintsRunIn(userDir: string, commandDir: string): void {
  const same = (safeRealpath(userDir) ?? userDir) === (safeRealpath(commandDir) ?? commandDir);
  where = same ? '' : ` -C ${quote(commandDir)}`;
}

export function lanesCommand(): string {
  return `${bareCommand()}${where}`;
}

function bareCommand(): string {
  if (cached !== null) return cached;
  const bundle = process.argv[1] ? safeRealpath(process.argv[1]) : null;
  const onPath = (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => safeRealpath(join(dir, 'lanes')))
    .find((p) => p !== null);
  if (bundle === null || (onPath && onPath === bundle)) cached = 'lanes';
  else cached = `node ${quote(bundle)}`;
  return cached;
}

function safeRealpath(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

function quote(path: string): string {
  return /^[\w./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}

const COMMANDS = 'init|plan|start|resume|drop|cancel|tick|status|log|wait|demo|land|clean';

/** Text with `lanes <command>` hints, each as the user types it here. */
export function asTyped(text: string): string {
  const prefix = lanesCommand();
  if (prefix === 'lanes') return text;
  // (a hint that names its folder itself, `lanes -C <dir> …`, keeps it)
  const bare = bareCommand();
  return text
    .replace(/\blanes -C /g, `${bare} -C `)
    .replace(new RegExp(`(?<![\\w/.-])lanes (${COMMANDS})\\b`, 'g'), `${prefix} $1`);
}
