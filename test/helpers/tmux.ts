import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { until } from './until.js';

// A tmux server of a test's own (its own socket name), for driving the real TUI: one
// session, read with capture-pane, waited on by content (never by time).

/** The environment inside tmux: no CI flag (Ink then draws only its last frame), no outer tmux or Herdr. */
export function terminalEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  for (const name of [
    'CI',
    'CONTINUOUS_INTEGRATION',
    'NODE_ENV',
    'FORCE_COLOR',
    'NO_COLOR',
    'TMUX',
    'TMUX_PANE',
    'HERDR_ENV',
  ])
    delete env[name];
  for (const name of Object.keys(env)) if (name.startsWith('VITEST')) delete env[name];
  return { ...env, ...extra };
}

export class Tmux {
  readonly socket = `lanes-t-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  private last = '';

  constructor(private readonly env: Record<string, string> = terminalEnv()) {}

  run(...args: string[]): Promise<string> {
    return execa('tmux', ['-f', '/dev/null', '-L', this.socket, ...args], {
      env: this.env,
      extendEnv: false,
    }).then((r) => r.stdout);
  }

  /** Starts `argv` (exec'd by sh, arguments quoted) in a session `name` of cols×rows. */
  async start(
    argv: readonly string[],
    options: { cwd: string; cols?: number; rows?: number; name?: string },
  ) {
    const quoted = argv.map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(' ');
    await this.run(
      'new-session',
      '-d',
      '-s',
      options.name ?? 'main',
      '-x',
      String(options.cols ?? 200),
      '-y',
      String(options.rows ?? 50),
      '-c',
      options.cwd,
      `${quoted}; echo EXIT=$?; sleep 600`,
    );
  }

  capture(name = 'main'): Promise<string> {
    return this.run('capture-pane', '-p', '-t', name);
  }

  keys(keys: string, name = 'main'): Promise<string> {
    return this.run('send-keys', '-t', name, keys);
  }

  text(text: string, name = 'main'): Promise<string> {
    return this.run('send-keys', '-t', name, '-l', text);
  }

  /** Polls the screen until it matches; fails with the last capture. */
  async waitFor(pattern: RegExp, timeoutMs: number, name = 'main'): Promise<string> {
    const found = await until(
      async () => {
        this.last = await this.capture(name);
        return pattern.test(this.last) ? { screen: this.last } : null;
      },
      `the screen to show ${String(pattern)}`,
      { timeoutMs, everyMs: 150, detail: () => `it shows:\n${this.last}` },
    );
    return found.screen;
  }

  async kill(): Promise<void> {
    await execa('tmux', ['-L', this.socket, 'kill-server'], { reject: false });
    const uid = process.getuid?.() ?? 0;
    rmSync(join(process.env.TMUX_TMPDIR ?? '/tmp', `tmux-${uid}`, this.socket), { force: true });
  }
}
