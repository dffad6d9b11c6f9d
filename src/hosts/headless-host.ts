import { existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { processHelper } from '../git/runner/git-helper.js';
import type { GitHelper } from '../git/runner/git-helper.js';
import { killGroup } from '../process/process-group.js';
import { wrapWithExitStatus } from './exit-status.js';
import { leftoverNote, runMarker, stopLeftovers } from '../process/leftovers.js';
import type { ExitInfo, Host, HostCapabilities, HostEntry, LaneSession, LaunchSpec } from './host.js';
import { LOG_LIMIT_BYTES, Transcript } from './transcript.js';
import { OutputListeners } from './output-listeners.js';

// Executors as plain child processes (no terminal): output to the transcript file. Each
// runs in its own process group so that kill reaches everything it started. A command
// executor is started by the process helper (src/git/git-helper.ts), which writes its
// transcript: a spawn from lanes' own process blocks its loop for the fork (~3 ms), and
// a batch starts one a child. An agent's executor, whose JSON lines are rendered into
// the transcript here, is started by lanes itself, as is everything when the helper cannot run.

/** How often the helper tells of an executor's output (the lane watch sees activity). */
const OUTPUT_NOTICE_MS = 100;
/** What of it comes back each time, at most: the recent lines are taken from it. */
const OUTPUT_TAIL_BYTES = 16 * 1024;

/** The last resort: it runs anywhere, so it is always a host a batch can use. */
export const headlessHost: HostEntry = {
  name: 'headless',
  summary: 'plain child processes, output to the transcript (no terminal)',
  detect: () => ({ use: true }),
  create: async () => new HeadlessHost(),
};

export class HeadlessHost implements Host {
  readonly name = 'headless';
  readonly capabilities: HostCapabilities = {
    inAppPane: false,
    outlivesLanes: false,
    attachable: false,
    agents: 'headless',
  };
  private sessions = new Set<LaneSession>();

  async open(spec: LaunchSpec): Promise<LaneSession> {
    if (!existsSync(spec.cwd)) throw new Error(`lane ${spec.cwd} does not exist`);
    const helper = spec.renderLine ? null : processHelper();
    const session = helper ? await openThroughHelper(helper, spec) : openInProcess(spec);
    this.sessions.add(session);
    void session.exited.then(() => this.sessions.delete(session));
    return session;
  }

  async dispose(): Promise<void> {
    for (const s of this.sessions) s.kill('SIGTERM');
    await Promise.all([...this.sessions].map((s) => s.exited));
  }
}

/**
 * The handle both ways share: running until `exited` resolves (the flag set before any
 * caller's await of it sees it), the pid's group signalled, output to the listeners.
 */
function session(
  spec: LaunchSpec,
  pid: number | null,
  exited: Promise<ExitInfo>,
  transcript: Transcript,
  listeners: OutputListeners,
): LaneSession {
  let running = true;
  void exited.then(() => (running = false));
  return {
    taskId: spec.taskId,
    host: 'headless',
    pid,
    paneId: null,
    exited,
    get running() {
      return running;
    },
    onOutput: (listener) => listeners.add(listener),
    write() {
      // no terminal: headless executors get no input
    },
    resize() {},
    kill(signal = 'SIGTERM') {
      if (running) killGroup(pid ?? undefined, signal);
    },
    recentLines: (count) => transcript.recent(count),
  };
}

function openThroughHelper(helper: GitHelper, spec: LaunchSpec): Promise<LaneSession> {
  const [file, ...args] = wrapWithExitStatus(spec.argv, spec.statusPath);
  const lines = new Transcript(null); // (the helper writes the file)
  const listeners = new OutputListeners();
  let pid: number | null = null;
  let end: (exit: ExitInfo) => void = () => {};
  const exited = new Promise<ExitInfo>((resolve) => (end = resolve));
  // Resolved once: when the helper says the executor started, or (one that never did) ended.
  return new Promise((opened) => {
    const open = () => opened(session(spec, pid, exited, lines, listeners));
    helper.exec(
      {
        cwd: spec.cwd,
        file: file as string,
        args,
        env: { ...process.env, ...spec.env } as Record<string, string>,
        logPath: spec.logPath,
        logLimit: LOG_LIMIT_BYTES,
        tailBytes: OUTPUT_TAIL_BYTES,
        notifyMs: OUTPUT_NOTICE_MS,
        sweep: runMarker(spec.runId),
      },
      {
        started(p) {
          pid = p;
          open();
        },
        output(text) {
          lines.add(text);
          listeners.emit(text);
        },
        exited(code, signal, spawnError) {
          // The helper itself ended: the executor may still run, and nothing reads its output.
          if (spawnError && pid !== null) killGroup(pid, 'SIGKILL');
          if (pid === null) open();
          end({ code, signal });
        },
      },
    );
  });
}

function openInProcess(spec: LaunchSpec): LaneSession {
  const [file, ...args] = wrapWithExitStatus(spec.argv, spec.statusPath);
  const transcript = new Transcript(spec.logPath);
  const render = spec.renderLine ? lineRenderer(spec.renderLine) : null;
  const listeners = new OutputListeners();
  // (node's own spawn: execa costs the loop ~2 ms more a process, and an exit is all we need)
  const child = spawn(file as string, args, {
    cwd: spec.cwd,
    env: { ...process.env, ...spec.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let ended = false;
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
    transcript.add(leftoverNote(stopLeftovers(spec.runId))); // (outside its group: leftovers.ts)
  });
  const output = (chunk: string) => {
    transcript.add(render ? render.add(chunk) : chunk);
    listeners.emit(chunk);
  };
  // stdout and stderr into one transcript, each chunk as it comes.
  for (const stream of [child.stdout, child.stderr]) {
    stream?.setEncoding('utf8');
    stream?.on('data', output);
  }
  // `close`: the process ended and both streams are drained (`error`: it never started).
  const exited = new Promise<ExitInfo>((resolve) => {
    const end = (code: number | null, signal: NodeJS.Signals | null) => {
      if (ended) return;
      ended = true;
      if (render) transcript.add(render.flush());
      transcript.close();
      resolve({ code, signal });
    };
    child.once('close', end);
    child.once('error', () => end(127, null));
  });
  return session(spec, child.pid ?? null, exited, transcript, listeners);
}

/** Whole lines through `render`; a partial line waits for its end. */
export function lineRenderer(render: (line: string) => string[]) {
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
