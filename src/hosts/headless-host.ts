import { existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { killGroup } from '../process/process-group.js';
import { wrapWithExitStatus } from './exit-status.js';
import type { ExitInfo, Host, LaneSession, LaunchSpec } from './host.js';
import { Transcript } from './transcript.js';

// Executors as plain child processes (no terminal): output to the transcript file. Each
// runs in its own process group so that kill reaches everything it started.

export class HeadlessHost implements Host {
  readonly name = 'headless' as const;
  private sessions = new Set<LaneSession>();

  async open(spec: LaunchSpec): Promise<LaneSession> {
    if (!existsSync(spec.cwd)) throw new Error(`lane ${spec.cwd} does not exist`);
    const [file, ...args] = wrapWithExitStatus(spec.argv, spec.statusPath);
    const transcript = new Transcript(spec.logPath);
    const render = spec.renderLine ? lineRenderer(spec.renderLine) : null;
    const listeners = new Set<(chunk: string) => void>();
    // (node's own spawn: execa costs the loop ~2 ms more a process, and an exit is all we need)
    const child = spawn(file as string, args, {
      cwd: spec.cwd,
      env: { ...process.env, ...spec.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let running = true;
    // Like a pty's hangup: when the executor (its wrapper) ends, what it left running in
    // its group is killed, so a background child holding the output pipe cannot keep the
    // session from ending.
    // (The group only, never the bare pid: that is reaped and free for reuse by now.)
    child.once('exit', () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is already gone
      }
    });
    const output = (chunk: string) => {
      transcript.add(render ? render.add(chunk) : chunk);
      for (const l of listeners) l(chunk);
    };
    // stdout and stderr into one transcript, each chunk as it comes.
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding('utf8');
      stream?.on('data', output);
    }
    // `close`: the process ended and both streams are drained (`error`: it never started).
    const exited = new Promise<ExitInfo>((resolve) => {
      const end = (code: number | null, signal: NodeJS.Signals | null) => {
        if (!running) return;
        running = false;
        if (render) transcript.add(render.flush());
        transcript.close();
        resolve({ code, signal });
      };
      child.once('close', end);
      child.once('error', () => end(127, null));
    });
    const session: LaneSession = {
      taskId: spec.taskId,
      host: 'headless',
      pid: child.pid ?? null,
      paneId: null,
      exited,
      get running() {
        return running;
      },
      onOutput(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      write() {
        // no terminal: headless executors get no input
      },
      resize() {},
      kill(signal = 'SIGTERM') {
        if (running) killGroup(child.pid, signal);
      },
      recentLines: (count) => transcript.recent(count),
    };
    this.sessions.add(session);
    void exited.then(() => this.sessions.delete(session));
    return session;
  }

  async dispose(): Promise<void> {
    for (const s of this.sessions) s.kill('SIGTERM');
    await Promise.all([...this.sessions].map((s) => s.exited));
  }
}

/** Whole lines through `render`; a partial line waits for its end. */
function lineRenderer(render: (line: string) => string[]) {
  let partial = '';
  const out = (lines: string[]) =>
    lines
      .flatMap(render)
      .map((l) => `${l}\n`)
      .join('');
  return {
    add(chunk: string): string {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      return out(lines);
    },
    flush(): string {
      const rest = partial;
      partial = '';
      return rest ? out([rest]) : '';
    },
  };
}
