import { spawnSync } from 'node:child_process';
import { HERDR_CALL_TIMEOUT_MS, HerdrCli, HerdrError } from './herdr-cli.js';

// Is lanes running inside a Herdr it can drive? (docs/HERDR.md, "Choosing the host"):
// HERDR_ENV=1, a herdr binary of a supported version, a running and protocol-compatible
// server, and a caller pane it resolves — whose workspace is where lane tabs go (never the UI-active one, which can be another client's).

/** 0.7.5 brought `pane wait-output`, `pane process-info` as used here, and `protocol_mismatch`. */
export const MIN_HERDR_VERSION = '0.7.5';

export interface HerdrPlace {
  cli: HerdrCli;
  version: string;
  /** The workspace of the pane lanes runs in: every lane tab is created there. */
  workspaceId: string;
  callerPaneId: string;
}

interface ServerStatus {
  running?: boolean;
  version?: string | null;
  compatible?: boolean | null;
  socket?: string;
}

interface PaneCurrent {
  pane: { pane_id: string; workspace_id: string; tab_id: string };
}

export function herdrBin(env: NodeJS.ProcessEnv = process.env): string {
  return env.HERDR_BIN_PATH || 'herdr';
}

/** Detects Herdr or throws a HerdrError that says what is missing. */
export async function detectHerdr(env: NodeJS.ProcessEnv = process.env): Promise<HerdrPlace> {
  if (env.HERDR_ENV !== '1')
    throw new HerdrError('herdr_not_detected', 'lanes is not running inside Herdr (HERDR_ENV is not 1)');
  const cli = await HerdrCli.create(herdrBin(env));
  const clientVersion = requireVersion(await cli.run(['--version']), 'the herdr command');
  const status = parseStatus(await cli.run(['status', 'server', '--json']));
  if (!status.running)
    throw new HerdrError(
      'herdr_not_running',
      `Herdr is not running${status.socket ? ` (no server at ${status.socket})` : ''}`,
    );
  if (status.compatible === false)
    throw new HerdrError(
      'herdr_protocol_mismatch',
      `the herdr command (${cli.bin}, ${clientVersion}) does not speak the running server's protocol (${status.version ?? 'unknown version'}); set HERDR_BIN_PATH to the server's binary, or restart Herdr`,
    );
  const version = status.version ? requireVersion(status.version, 'the running Herdr server') : clientVersion;
  // --pane with the launch-time id works from 0.7.0 on; --current alone needs 0.8.2.
  const who = env.HERDR_PANE_ID ? ['--pane', env.HERDR_PANE_ID] : ['--current'];
  const current = await cli.json<PaneCurrent>(['pane', 'current', ...who]);
  return { cli, version, workspaceId: current.pane.workspace_id, callerPaneId: current.pane.pane_id };
}

function parseStatus(text: string): ServerStatus {
  try {
    return JSON.parse(text) as ServerStatus;
  } catch {
    throw new HerdrError('herdr_failed', 'herdr status server --json did not print JSON');
  }
}

/** The x.y.z in `text`, refused when older than MIN_HERDR_VERSION. */
export function requireVersion(text: string, what: string): string {
  const version = /(\d+)\.(\d+)\.(\d+)/.exec(text)?.[0];
  if (!version)
    throw new HerdrError(
      'herdr_too_old',
      `cannot tell the version of ${what} from "${text.trim().slice(0, 60)}"; lanes needs Herdr ${MIN_HERDR_VERSION} or newer`,
    );
  if (compareVersions(version, MIN_HERDR_VERSION) < 0)
    throw new HerdrError(
      'herdr_too_old',
      `${what} is Herdr ${version}; lanes needs Herdr ${MIN_HERDR_VERSION} or newer (pane wait-output, pane process-info). Update Herdr, or run with --host pty`,
    );
  return version;
}

export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

/**
 * The same checks, synchronously, for choosing the host before anything async runs: null
 * when Herdr can be driven, else why not. HERDR_ENV=1 alone is only a hint (it leaks into
 * nested tmux and ssh sessions), so the server and the caller pane must answer too.
 */
export function herdrUnusableReason(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.HERDR_ENV !== '1') return 'HERDR_ENV is not 1';
  const bin = herdrBin(env);
  const run = (args: string[]) => {
    const result = spawnSync(bin, args, {
      encoding: 'utf8',
      timeout: HERDR_CALL_TIMEOUT_MS,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (result.error || result.status !== 0)
      throw new Error(
        `${bin} ${args.slice(0, 2).join(' ')} failed: ${result.error?.message ?? result.stderr.trim()}`,
      );
    return result.stdout;
  };
  try {
    requireVersion(run(['--version']), 'the herdr command');
    const status = parseStatus(run(['status', 'server', '--json']));
    if (!status.running) return 'Herdr is not running';
    if (status.compatible === false) return `the herdr command does not speak the server's protocol`;
    if (status.version) requireVersion(status.version, 'the running Herdr server');
    run(['pane', 'current', ...(env.HERDR_PANE_ID ? ['--pane', env.HERDR_PANE_ID] : ['--current'])]);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}
