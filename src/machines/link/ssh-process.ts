import { execFile } from 'node:child_process';

// One ssh client run to its end: an argv (never a shell string), input on stdin, what it
// printed. ssh's own failures (no connection, refused key, a dropped connection) end it
// with 255, which is how the link tells them from the remote command's own exit.

export interface SshResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** The exit code ssh ends with when the connection failed (not the remote command). */
export const SSH_FAILED = 255;

export function runSsh(
  argv: readonly string[],
  options: { input?: string | Buffer; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<SshResult> {
  return new Promise((resolve) => {
    const child = execFile(
      argv[0]!,
      argv.slice(1),
      {
        env: options.env ?? process.env,
        maxBuffer: 256 * 1024 * 1024,
        encoding: 'utf8',
        timeout: options.timeoutMs ?? 0,
        killSignal: 'SIGKILL',
      },
      (error, stdout, stderr) => {
        const code = error && typeof error.code === 'number' ? error.code : error ? SSH_FAILED : 0;
        resolve({
          exitCode: code,
          stdout,
          stderr: stderr || (error && !stderr ? String(error.message) : ''),
        });
      },
    );
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input ?? '');
  });
}
