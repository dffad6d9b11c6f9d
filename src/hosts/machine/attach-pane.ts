import pty from 'node-pty';
import { killGroup } from '../../process/process-group.js';
import { drainAfterExit } from '../pty/pty-drain.js';
import { dropQueuedWritesOnClose, holdsFd } from '../pty/pty-host.js';
import { ScreenModel } from '../pty/screen.js';

// A remote lane's pane in the TUI: a local pty running `ssh -t … tmux -L lanes attach -t
// <session>`, its bytes into a screen model as for a local pane. The executor lives in the
// tmux session, not in this pty: when the attach ends while the session still runs (the
// connection dropped, the user detached), the pane attaches again, later and later while
// it keeps failing. Ending the pane ends the attach only, never the session.

/** The first wait before attaching again, and the longest. */
const REATTACH_FIRST_MS = 250;
const REATTACH_MAX_MS = 5000;
/** An attach that lasted this long was a good one: the next wait starts short again. */
const STEADY_MS = 5000;

/** A terminal's full reset (RIS): off the alternate screen, cleared, the cursor home. */
const RESET = `${String.fromCharCode(27)}c`;

export class AttachPane {
  readonly screen: ScreenModel;
  private proc: pty.IPty | null = null;
  private stopped = false;
  private waitMs = REATTACH_FIRST_MS;
  private retry: NodeJS.Timeout | null = null;
  private closed: Promise<void> = Promise.resolve();

  constructor(
    private readonly argv: readonly string[],
    private size: { cols: number; rows: number },
    /** Asked when the attach ends: does the session still run (then attach again)? */
    private readonly stillRunning: () => Promise<boolean>,
    scrollback?: number,
  ) {
    this.screen = new ScreenModel(size.cols, size.rows, scrollback);
    this.attach();
  }

  write(data: string): void {
    if (this.proc && holdsFd(this.proc)) this.proc.write(data);
  }

  resize(cols: number, rows: number): void {
    this.size = { cols, rows };
    this.screen.resize(cols, rows);
    if (this.proc && holdsFd(this.proc)) this.proc.resize(cols, rows);
  }

  /** Ends the attach (the tmux session goes on) and resolves once it has exited and been drawn. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    if (this.proc) killGroup(this.proc.pid, 'SIGHUP');
    await this.closed;
    await this.screen.flushed();
  }

  /** Draws `output` on a reset screen (an ended session's last output, where tmux left nothing). */
  async show(output: string): Promise<void> {
    await this.screen.write(`${RESET}${output}`);
  }

  private attach(): void {
    const [file, ...args] = this.argv;
    // (inside a tmux of the user's, tmux refuses to attach from a pane unless TMUX is unset)
    const { TMUX: _tmux, TMUX_PANE: _pane, ...env } = process.env;
    const proc = pty.spawn(file as string, args, {
      name: 'xterm-256color',
      cols: this.size.cols,
      rows: this.size.rows,
      cwd: process.cwd(),
      env: { ...env, TERM: 'xterm-256color' } as Record<string, string>,
    });
    this.proc = proc;
    const startedAt = Date.now();
    drainAfterExit(proc);
    dropQueuedWritesOnClose(proc);
    proc.onData((data) => void this.screen.write(data));
    this.closed = new Promise((resolve) => {
      proc.onExit(() => {
        this.proc = null;
        resolve();
        if (!this.stopped) void this.again(Date.now() - startedAt);
      });
    });
  }

  private async again(lasted: number): Promise<void> {
    this.waitMs = lasted >= STEADY_MS ? REATTACH_FIRST_MS : this.waitMs;
    const running = await this.stillRunning().catch(() => true); // (unknown: try again)
    if (this.stopped || !running) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      if (!this.stopped) this.attach();
    }, this.waitMs);
    this.waitMs = Math.min(this.waitMs * 2, REATTACH_MAX_MS);
  }
}
