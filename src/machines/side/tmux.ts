import { execFile } from 'node:child_process';
import { TMUX_SOCKET } from '../protocol.js';

// tmux as the side runs it: always on lanes' own server (`-L lanes`), so the user's own
// sessions are never touched, with the environment the side script was started with (not
// the side's own settings, which the server would hand to every session it starts).

/** The environment the side script was started with, before it set anything of its own. */
export const startEnv: NodeJS.ProcessEnv = { ...process.env };

export interface TmuxResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function tmux(args: readonly string[]): Promise<TmuxResult> {
  return new Promise((resolve) => {
    execFile('tmux', ['-L', TMUX_SOCKET, ...args], { env: startEnv }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 127) : 0;
      resolve({ code, stdout, stderr: stderr || (error && code === 127 ? error.message : '') });
    });
  });
}

/** Every session of lanes' server with its batch (`@lanes_batch`) and first pane's pid; none when no server runs. */
export async function tmuxSessions(): Promise<{ name: string; batch: string; pid: number | null }[]> {
  // (spaces between: tmux 3.3 prints a tab of a format as `_`; no name, batch or pid holds a space)
  const out = await tmux(['list-panes', '-a', '-F', '#{session_name} #{@lanes_batch} #{pane_pid}']);
  if (out.code !== 0) return [];
  const seen = new Map<string, { name: string; batch: string; pid: number | null }>();
  for (const line of out.stdout.split('\n')) {
    const [name = '', batch = '', pid = ''] = line.split(' ');
    if (name !== '' && !seen.has(name))
      seen.set(name, { name, batch, pid: /^\d+$/.test(pid) ? Number(pid) : null });
  }
  return [...seen.values()];
}

/** Ends a session and every process of its pane's group (an agent that ignores the hangup too). */
export async function endSession(name: string, pid: number | null): Promise<void> {
  await tmux(['kill-session', '-t', `=${name}`]);
  if (pid !== null) signalGroup(pid, 'SIGKILL');
}

export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // (gone already)
  }
}
