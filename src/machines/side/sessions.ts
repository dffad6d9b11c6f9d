import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { readExitStatus, wrapWithExitStatus } from '../../hosts/exit-status.js';
import { shQuote } from '../../hosts/herdr/herdr-wrapper.js';
import { TMUX_SOCKET, tmuxSafe } from '../protocol.js';
import type { OpValues, ParsedOpArgs, SessionState } from '../protocol.js';
import { BadRequest, insideRoot } from './place.js';
import type { Place } from './place.js';
import { endSession, signalGroup, tmux, tmuxSessions } from './tmux.js';

// An executor on a machine: a detached tmux session (it outlives the ssh connection and the
// coordinator) running the argv under the exit wrapper (src/hosts/exit-status.ts: the status
// file says how it ended), its output appended to the log by pipe-pane. What the session
// runs is a script the side writes with every word single-quoted: a plan's strings never pass
// through tmux's own parsing (an argument ending in `;` would end its command there). Each
// session is noted under `<root>/sessions/` (its batch, status and log), so a session that
// has ended is still known, and a retried start does not start it twice.

interface Note {
  name: string;
  batch: string | null;
  status: string;
  log: string;
  /** False from before tmux is asked until it started the session (a start cut short is tried again). */
  started: boolean;
}

const notesDir = (place: Place): string => join(place.root, 'sessions');

function readNote(place: Place, name: string): Note | null {
  try {
    return JSON.parse(readFileSync(join(notesDir(place), `${name}.json`), 'utf8')) as Note;
  } catch {
    return null;
  }
}

export function readNotes(place: Place): Note[] {
  const dir = notesDir(place);
  if (!existsSync(dir)) return [];
  const names = readdirSync(dir).filter((f) => f.endsWith('.json'));
  return names.map((f) => readNote(place, f.slice(0, -'.json'.length))).filter((n): n is Note => n !== null);
}

export function dropNote(place: Place, name: string): void {
  for (const ext of ['.json', '.sh']) rmSync(join(notesDir(place), `${name}${ext}`), { force: true });
}

/** The batch of a status file at `<root>/runs/<batch>/…`, else null. */
function batchOfStatus(place: Place, status: string): string | null {
  const [top, batch] = relative(place.root, status).split('/');
  return top === 'runs' && batch !== undefined && batch !== '' ? batch : null;
}

/** The tmux channel a new session waits on until its log pipe is in place (startSession). */
const readyChannel = (name: string): string => `lanes-ready-${name}`;

function script(name: string, cwd: string, env: Record<string, string>, argv: readonly string[]): string {
  const exports = Object.entries(env).map(([k, v]) => `export ${k}=${shQuote(v)}`);
  return [
    '# lanes: one executor session (src/machines/side/sessions.ts)',
    // (an executor that ends at once would end its session before tmux set it up)
    `tmux -L ${TMUX_SOCKET} wait-for ${shQuote(readyChannel(name))}`,
    `cd ${shQuote(cwd)} || exit 127`,
    ...exports,
    `exec ${argv.map(shQuote).join(' ')}`,
    '',
  ].join('\n');
}

export async function startSession(
  args: ParsedOpArgs<'session.start'>,
  place: Place,
): Promise<OpValues['session.start']> {
  const name = tmuxSafe(args.name);
  const log = insideRoot(place, args.log, 'session.start: log');
  const status = insideRoot(place, args.status, 'session.start: status');
  const batch = args.batch ?? batchOfStatus(place, status);
  const note: Note = { name, batch, status, log, started: false };
  const running = (await tmuxSessions()).some((s) => s.name === name);
  // Started already (a retry): never a second run of the same attempt. A start cut off after
  // tmux made the session and before it was signalled ready (the side ended with its
  // connection) left the executor waiting on the channel: the retry signals it.
  const noted = readNote(place, name)?.started === true;
  if (noted || running || existsSync(status)) {
    if (!noted && running) await tmux(['wait-for', '-S', readyChannel(name)]);
    if (!noted) writeNote(place, { ...note, started: true });
    return { name };
  }
  if (!existsSync(args.cwd)) throw new BadRequest(`session.start: the folder ${args.cwd} does not exist`);
  mkdirSync(dirname(log), { recursive: true });
  mkdirSync(dirname(status), { recursive: true });
  writeFileSync(log, '', { flag: 'a' });
  // (noted first: a session tmux started but the side did not hear of is still the batch's)
  writeNote(place, note);
  const file = join(notesDir(place), `${name}.sh`);
  writeFileSync(file, script(name, args.cwd, args.env, wrapWithExitStatus(args.argv, status)), {
    mode: 0o600,
  });
  // One tmux command line: the pane's output is piped to the log before the server reads any
  // of it. (`#` doubled: tmux reads the pipe's command as a format.)
  const pipe = `exec cat >> ${shQuote(log)}`.replaceAll('#', '##');
  const target = `=${name}:`;
  const command = [
    ...['new-session', '-d', '-s', name, '-x', '200', '-y', '50', 'sh', file, ';'],
    ...['set-option', '-t', target, '@lanes_batch', batch ?? '', ';'],
    // (no status line: the attach pane and its recent lines are the executor's screen only)
    ...['set-option', '-t', target, 'status', 'off', ';'],
    ...['pipe-pane', '-t', target, '-o', pipe],
  ];
  let started = await tmux(command);
  // tmux ends its server when the last session ends: a new-session that reached it as it
  // went (another executor here ending at that moment) made nothing, and asking again starts
  // a server of its own (test/machines/side/side-session-race.test.ts).
  for (let again = 0; again < SERVER_GONE_RETRIES && serverWentAway(started); again++) {
    if ((await tmuxSessions()).some((s) => s.name === name)) break;
    started = await tmux(command);
  }
  if (started.code !== 0 && !existsSync(status)) {
    const found = (await tmuxSessions()).find((s) => s.name === name);
    if (found) await endSession(name, found.pid); // (half set up: its output would be lost)
    dropNote(place, name);
    throw new Error(`tmux new-session failed (${started.code}): ${started.stderr.trim()}`);
  }
  await tmux(['wait-for', '-S', readyChannel(name)]);
  writeNote(place, { ...note, started: true });
  return { name };
}

/** How many times a start is asked again of a server that went away under it. */
const SERVER_GONE_RETRIES = 5;

const serverWentAway = (result: { code: number; stderr: string }): boolean =>
  result.code !== 0 && /server exited unexpectedly/.test(result.stderr);

function writeNote(place: Place, note: Note): void {
  const path = join(notesDir(place), `${note.name}.json`);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(`${path}.tmp`, JSON.stringify(note));
  renameSync(`${path}.tmp`, path);
}

export async function listSessions(
  { prefix }: ParsedOpArgs<'session.list'>,
  place: Place,
): Promise<OpValues['session.list']> {
  const live = new Set((await tmuxSessions()).map((s) => s.name));
  const notes = new Map(readNotes(place).map((n) => [n.name, n]));
  const names = [...new Set([...notes.keys(), ...live])].filter((n) => n.startsWith(prefix)).sort();
  return names.map((name): SessionState => {
    const note = notes.get(name);
    const exit = note ? readExitStatus(note.status) : null;
    return { name, running: live.has(name) && exit === null, exit };
  });
}

export async function killSession(
  { name, signal }: ParsedOpArgs<'session.kill'>,
  _place: Place,
): Promise<OpValues['session.kill']> {
  const found = (await tmuxSessions()).find((s) => s.name === tmuxSafe(name));
  if (found === undefined) return null; // (ended already)
  if (signal === undefined) await endSession(found.name, found.pid);
  else if (found.pid !== null) signalGroup(found.pid, signal);
  return null;
}
