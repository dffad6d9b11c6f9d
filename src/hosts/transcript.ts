import { closeSync, constants, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { stripVTControlCharacters } from 'node:util';

// An executor's transcript: everything it printed, to a log file (cut at a size limit so a
// runaway executor cannot fill the disk), plus the last lines kept in memory.

export const LOG_LIMIT_BYTES = 64 * 1024 * 1024;
const KEEP_LINES = 500;

export class Transcript {
  private fd: number;
  private written = 0;
  private lines: string[] = [];
  private partial = '';

  /**
   * `path` null: only the recent lines are kept (someone else writes the file: the process
   * helper). `keepLines`: false where something else keeps the recent lines (the pty host's
   * screen model).
   */
  constructor(
    path: string | null,
    private readonly keepLines = true,
  ) {
    if (path === null) {
      this.fd = -1;
      return;
    }
    mkdirSync(dirname(path), { recursive: true });
    // (never through a symbolic link planted in the state dir: ELOOP instead)
    const { O_WRONLY, O_CREAT, O_APPEND, O_NOFOLLOW } = constants;
    this.fd = openSync(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0o644);
  }

  add(chunk: string): void {
    if (this.fd >= 0 && this.written < LOG_LIMIT_BYTES) {
      const bytes = Buffer.from(chunk).subarray(0, LOG_LIMIT_BYTES - this.written);
      writeSync(this.fd, bytes);
      this.written += bytes.length;
      if (this.written >= LOG_LIMIT_BYTES) writeSync(this.fd, '\n[lanes] transcript cut at the size limit\n');
    }
    if (!this.keepLines) return;
    const text = this.partial + stripVTControlCharacters(chunk).replace(/\r\n?/g, '\n');
    const parts = text.split('\n');
    this.partial = parts.pop() ?? '';
    if (parts.length) {
      this.lines.push(...parts);
      if (this.lines.length > KEEP_LINES) this.lines = this.lines.slice(-KEEP_LINES);
    }
  }

  recent(count: number): string[] {
    const all = this.partial ? [...this.lines, this.partial] : this.lines;
    return all.slice(-count);
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }
}
