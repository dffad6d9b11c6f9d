import type { execa as Execa, ResultPromise } from 'execa';
import { ExitCode, LanesError } from '../../core/basics/errors.js';

// Talking to Herdr through its CLI (docs/HERDR.md, "Talking to Herdr"): success is a JSON
// envelope on stdout (exit 0); a server error is a JSON envelope on stderr (exit 1); a
// usage error is plain text (exit 2). Every failure becomes a HerdrError with a stable
// lanes code and a message a user can act on.

/** How long one CLI call may take before lanes says Herdr is not answering. */
export const HERDR_CALL_TIMEOUT_MS = 10_000;

/** What went wrong with Herdr, in lanes' words (the Herdr host's own error codes). */
export type HerdrErrorCode =
  | 'herdr_not_detected'
  | 'herdr_too_old'
  | 'herdr_not_running'
  | 'herdr_not_answering'
  | 'herdr_protocol_mismatch'
  | 'herdr_usage'
  | 'herdr_pane_not_found'
  | 'herdr_failed';

/** Codes that mean "Herdr did not answer": lanes waits and retries instead of giving up. */
const TRANSIENT: ReadonlySet<HerdrErrorCode> = new Set(['herdr_not_running', 'herdr_not_answering']);

/** Codes a user fixes in their setup (exit 2, like any bad input); the rest are failures (exit 1). */
const SETUP: ReadonlySet<HerdrErrorCode> = new Set([
  'herdr_not_detected',
  'herdr_too_old',
  'herdr_protocol_mismatch',
  'herdr_usage',
]);

export class HerdrError extends LanesError<HerdrErrorCode> {
  override readonly name = 'HerdrError';
  constructor(
    override readonly code: HerdrErrorCode,
    message: string,
    /** Herdr's own error code (`pane_not_found`, `timeout`, …), when it gave one. */
    readonly herdrCode: string | null = null,
  ) {
    super(code, message, SETUP.has(code) ? ExitCode.badInput : ExitCode.unexpected);
  }

  get transient(): boolean {
    return TRANSIENT.has(this.code);
  }

  /** The pane or tab it names is gone (closed by the user, or Herdr restarted). */
  get gone(): boolean {
    return this.code === 'herdr_pane_not_found' || this.herdrCode === 'tab_not_found';
  }
}

export function isHerdrError(error: unknown): error is HerdrError {
  return error instanceof HerdrError;
}

interface Envelope<T> {
  id?: string;
  result?: T;
  error?: { code?: string; message?: string };
}

export class HerdrCli {
  /** execa is loaded here, for Herdr only: a batch without Herdr starts without its modules. */
  static async create(bin: string): Promise<HerdrCli> {
    return new HerdrCli(bin, (await import('execa')).execa);
  }

  private constructor(
    /** `$HERDR_BIN_PATH` when set (the running server's own binary), else `herdr` on PATH. */
    readonly bin: string,
    private readonly execa: typeof Execa,
    private readonly timeoutMs = callTimeout(),
  ) {}

  /** Runs `herdr <args>`; resolves with stdout on exit 0, throws a HerdrError otherwise. */
  async run(args: readonly string[], timeoutMs = this.timeoutMs): Promise<string> {
    const result = await this.execa(this.bin, args, {
      reject: false,
      stdin: 'ignore',
      timeout: timeoutMs,
      encoding: 'utf8',
      stripFinalNewline: false,
    });
    if (result.exitCode === 0) return String(result.stdout);
    throw toHerdrError(this.bin, args, result);
  }

  /** Runs a command that prints an envelope; resolves with its `.result`. */
  async json<T>(args: readonly string[], timeoutMs?: number): Promise<T> {
    const stdout = await this.run(args, timeoutMs);
    const envelope = parseJson<Envelope<T>>(stdout);
    if (!envelope || envelope.result === undefined)
      throw new HerdrError('herdr_failed', `herdr ${args.slice(0, 2).join(' ')} printed no JSON result`);
    return envelope.result;
  }

  /** Starts a long call (a wait) that the caller may cancel with `.kill()`. */
  start(args: readonly string[]): ResultPromise<{ reject: false; stdin: 'ignore'; encoding: 'utf8' }> {
    return this.execa(this.bin, args, { reject: false, stdin: 'ignore', encoding: 'utf8' });
  }

  /** Turns a finished long call into its envelope's result or a HerdrError. */
  settle<T>(
    args: readonly string[],
    result: {
      exitCode?: number;
      stdout?: unknown;
      stderr?: unknown;
      failed?: boolean;
      isTerminated?: boolean;
    },
  ): T {
    if (result.exitCode === 0) {
      const envelope = parseJson<Envelope<T>>(String(result.stdout));
      if (envelope?.result !== undefined) return envelope.result;
    }
    throw toHerdrError(this.bin, args, result);
  }
}

function callTimeout(): number {
  // LANES_HERDR_TIMEOUT_MS: tests make "Herdr stopped answering" quick to observe.
  const fromEnv = Number(process.env.LANES_HERDR_TIMEOUT_MS);
  return Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : HERDR_CALL_TIMEOUT_MS;
}

function parseJson<T>(text: string): T | null {
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

interface Finished {
  exitCode?: number;
  stderr?: unknown;
  timedOut?: boolean;
  code?: string;
  isTerminated?: boolean;
}

export function toHerdrError(bin: string, args: readonly string[], result: Finished): HerdrError {
  const what = `herdr ${args.slice(0, 2).join(' ')}`;
  if (result.code === 'ENOENT')
    return new HerdrError(
      'herdr_not_detected',
      `the herdr command was not found (${bin}); set HERDR_BIN_PATH or put herdr on PATH`,
    );
  if (result.timedOut || (result.isTerminated && result.exitCode === undefined))
    return new HerdrError('herdr_not_answering', `Herdr did not answer ${what} in time`);
  const stderr = String(result.stderr ?? '').trim();
  if (result.exitCode === 2)
    return new HerdrError(
      'herdr_usage',
      `Herdr refused the command line of ${what}: ${stderr.split('\n')[0] || 'usage error'} (lanes needs Herdr 0.7.5 or newer)`,
      'usage',
    );
  const envelope = parseJson<Envelope<unknown>>(stderr.split('\n').at(-1) ?? '');
  const code = envelope?.error?.code ?? null;
  const message = envelope?.error?.message ?? (stderr || `exit code ${result.exitCode ?? '?'}`);
  switch (code) {
    case 'server_not_running':
      return new HerdrError('herdr_not_running', `Herdr is not running: ${message}`, code);
    case 'protocol_mismatch':
      return new HerdrError(
        'herdr_protocol_mismatch',
        `the herdr command (${bin}) and the running Herdr server speak different protocols: ${message}. Set HERDR_BIN_PATH to the server's binary, or restart Herdr`,
        code,
      );
    case 'pane_not_found':
      return new HerdrError('herdr_pane_not_found', `Herdr has no such pane (${what}): ${message}`, code);
    default:
      return new HerdrError('herdr_failed', `${what} failed${code ? ` (${code})` : ''}: ${message}`, code);
  }
}
