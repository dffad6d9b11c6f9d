import { readdirSync, readFileSync } from 'node:fs';
import pty from 'node-pty';
import { ScreenModel } from '../../src/hosts/pty/screen.js';

// A real agent CLI in a real pty, its screen parsed by the same headless xterm lanes uses.
// The terminal's answers to the program's queries (cursor position, device attributes)
// are written back to the pty, as a terminal would.

export interface AgentPty {
  pid: number;
  /** The visible screen as text, once all output so far is parsed. */
  screen(): Promise<string>;
  /** The visible screen as parsed so far (for failure messages). */
  screenNow(): string;
  /** Types text as keystrokes. */
  type(text: string): void;
  exited: Promise<{ exitCode: number; signal: number | undefined }>;
  kill(signal?: string): void;
}

export function spawnAgent(
  file: string,
  args: string[],
  {
    cwd,
    env,
    cols = 120,
    rows = 40,
    answerQueries = true,
  }: { cwd: string; env: Record<string, string>; cols?: number; rows?: number; answerQueries?: boolean },
): AgentPty {
  const screen = new ScreenModel(cols, rows);
  const proc = pty.spawn(file, args, { name: 'xterm-256color', cols, rows, cwd, env });
  proc.onData((data) => void screen.write(data));
  if (answerQueries) screen.term.onData((answer) => proc.write(answer));
  const exited = new Promise<{ exitCode: number; signal: number | undefined }>((resolve) =>
    proc.onExit(({ exitCode, signal }) => resolve({ exitCode, signal })),
  );
  return {
    pid: proc.pid,
    async screen() {
      await screen.flushed();
      return screen.lines().join('\n');
    },
    screenNow: () => screen.lines().join('\n'),
    type: (text) => proc.write(text),
    exited,
    kill: (signal) => proc.kill(signal),
  };
}

/**
 * The processes whose environment has `name=value` (e.g. the private HOME a test gave an
 * agent): what is left of an agent and everything it started, wherever it was reparented.
 */
export function processesWithEnv(name: string, value: string): { pid: number; cmdline: string }[] {
  const entry = `${name}=${value}`;
  const found: { pid: number; cmdline: string }[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (!readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(entry)) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (/\) Z /.test(stat)) continue; // a zombie has ended; only its parent's wait is missing
      found.push({
        pid: Number(pid),
        cmdline: readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' '),
      });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}
