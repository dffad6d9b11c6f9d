import { appendFileSync, existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { wrapWithExitStatus } from '../../src/hosts/exit-status.js';
import type { ExitInfo, Host, HostEntry, LaneSession, LaunchSpec } from '../../src/hosts/host.js';
import { OutputListeners } from '../../src/hosts/output-listeners.js';
import { Transcript } from '../../src/hosts/transcript.js';

// A host that exists only for the tests: the proof that a host is one file plus one
// registry line (`HOSTS.with(ledgerHost(file))`). It runs each executor as a plain child
// process in its own process group, like the headless host but written from the contract
// alone, and writes a line to its ledger for every executor it opens, so a test can see
// that the batch really went through it. It is chosen when LANES_LEDGER_HOST=1.

export interface LedgerLine {
  task: string;
  attempt: number;
  pid: number | null;
  cwd: string;
}

export function ledgerHost(ledger: string): HostEntry {
  return {
    name: 'ledger',
    summary: 'test only: plain child processes, each written to a ledger',
    detect: ({ env }) => (env.LANES_LEDGER_HOST === '1' ? { use: true } : { use: false }),
    create: async () => new LedgerHost(ledger),
  };
}

class LedgerHost implements Host {
  readonly name = 'ledger';
  readonly capabilities = {
    inAppPane: false,
    outlivesLanes: false,
    attachable: false,
    agents: 'headless',
  } as const;
  private readonly sessions = new Set<LaneSession>();

  constructor(private readonly ledger: string) {}

  async open(spec: LaunchSpec): Promise<LaneSession> {
    if (!existsSync(spec.cwd)) throw new Error(`lane ${spec.cwd} does not exist`);
    const [file, ...args] = wrapWithExitStatus(spec.argv, spec.statusPath);
    const child = spawn(file!, args, {
      cwd: spec.cwd,
      env: { ...process.env, ...spec.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // (its own group: kill reaches all it started)
    });
    const pid = child.pid ?? null;
    const line: LedgerLine = { task: spec.taskId, attempt: spec.attempt, pid, cwd: spec.cwd };
    appendFileSync(this.ledger, `${JSON.stringify(line)}\n`);
    const transcript = new Transcript(spec.logPath);
    const listeners = new OutputListeners();
    for (const stream of [child.stdout, child.stderr]) {
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        transcript.add(chunk);
        listeners.emit(chunk);
      });
    }
    let running = true;
    const exited = new Promise<ExitInfo>((resolve) => {
      const end = (code: number | null, signal: NodeJS.Signals | null) => {
        if (!running) return;
        running = false;
        transcript.close();
        resolve({ code, signal });
      };
      child.once('close', end);
      child.once('error', () => end(127, null));
    });
    const session: LaneSession = {
      taskId: spec.taskId,
      host: this.name,
      pid,
      paneId: null,
      exited,
      get running() {
        return running;
      },
      onOutput: (listener) => listeners.add(listener),
      write() {},
      resize() {},
      kill(signal = 'SIGTERM') {
        if (!running || pid === null) return;
        try {
          process.kill(-pid, signal);
        } catch {
          // the group has ended already
        }
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
