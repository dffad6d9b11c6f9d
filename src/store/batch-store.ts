import { readdirSync } from 'node:fs';
import { LanesError } from '../core/basics/errors.js';
import { formatIssues } from '../core/basics/issues.js';
import { batchRecordSchema, checkRecordInvariants } from '../core/records/record.js';
import type { BatchRecord } from '../core/records/record.js';
import { isTerminal, reportSchema } from '../core/records/report.js';
import type { Report } from '../core/records/report.js';
import { ID_PATTERN } from '../core/basics/ids.js';
import { batchesDir, batchPaths } from './state-dir.js';
import { assertNoSymlink, readStateFile, readStateFileStamped, writeStateFileAtomic } from './safe-fs.js';
import type { FileStamp } from './safe-fs.js';
import { RecordCheck } from './record-check.js';
import { deepFreeze } from '../core/basics/frozen.js';

// Batch records and reports on disk. A record is validated (shape and every invariant)
// on each read and before each write; an invalid file on disk is never overwritten.

function invalid(path: string, problems: string[]): LanesError {
  return new LanesError(
    'state_invalid',
    `state record ${path} is invalid:\n${problems.map((p) => `  ${p}`).join('\n')}`,
    2,
  );
}

/** Parses and checks record text; `expectedId` is the batch id the file name gives. */
export function parseRecordText(text: string, path: string, expectedId?: string): BatchRecord {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw invalid(path, [`not valid JSON: ${(error as Error).message}`]);
  }
  // reportInput: without it zod leaves `input` out and every wrong type reads as "required".
  const parsed = batchRecordSchema.safeParse(raw, { reportInput: true });
  if (!parsed.success) throw invalid(path, formatIssues(parsed.error));
  const problems = checkRecordInvariants(parsed.data);
  if (expectedId !== undefined && parsed.data.batch_id !== expectedId)
    problems.unshift(`batch_id: "${parsed.data.batch_id}" does not match the file name ("${expectedId}")`);
  if (problems.length) throw invalid(path, problems);
  return parsed.data;
}

export function recordBytes(record: BatchRecord): string {
  return `${JSON.stringify(record, null, 2)}\n`;
}

export class BatchStore {
  constructor(readonly stateDir: string) {}

  private readonly check = new RecordCheck();

  /**
   * The last record text read or written and what it parsed to: a tick reads the record
   * several times and it changes only when written, so the same text is validated and
   * parsed once (every reader gets the same frozen object).
   */
  private lastRead: {
    path: string;
    text: string;
    /** What it parsed to, frozen (core/basics/frozen.ts): every reader gets this one. */
    parsed: BatchRecord;
    /** The file's stamp when it held `text`: while it still has it, the file is not read again. */
    stamp: FileStamp;
  } | null = null;

  /** The record's text and stamp, or 'same' while the file is the one read or written last. */
  private readText(path: string): { text: string; stamp: FileStamp } | 'same' | null {
    const known = this.lastRead?.path === path ? this.lastRead.stamp : null;
    return readStateFileStamped(this.stateDir, path, known);
  }

  paths(batchId: string) {
    return batchPaths(this.stateDir, batchId);
  }

  /** The record, or null when the batch has none. Throws state_invalid for a bad file. */
  read(batchId: string): BatchRecord | null {
    const found = this.validated(this.paths(batchId).record, batchId);
    return found?.parsed ?? null;
  }

  private validated(path: string, batchId: string): { text: string; parsed: BatchRecord } | null {
    const read = this.readText(path);
    if (read === null) return null;
    if (read === 'same') return this.lastRead!;
    if (this.lastRead !== null && this.isLast(path, read.text)) {
      this.lastRead.stamp = read.stamp;
      return this.lastRead;
    }
    const record = parseRecordText(read.text, path, batchId);
    this.lastRead = {
      path,
      text: read.text,
      parsed: deepFreeze(record),
      stamp: read.stamp,
    };
    return this.lastRead;
  }

  /** The record's plan_digest (validated like read), or null when the batch has no record. */
  planDigest(batchId: string): string | null {
    return this.validated(this.paths(batchId).record, batchId)?.parsed.plan_digest ?? null;
  }

  /**
   * Validates, then writes atomically. Refuses to replace a file that does not validate.
   * `record` is frozen all the way down (core/basics/frozen.ts): it is what every reader
   * of the text written gets from here on, and the parts of it the next record keeps are
   * known valid by identity (record-check.ts).
   */
  write(record: BatchRecord): void {
    deepFreeze(record);
    const path = this.paths(record.batch_id).record;
    // A typed refusal (exit 2) for a bad shape too, never a bare zod error.
    const problems = this.check.problems(record);
    if (problems.length) throw invalid(`${path} (refused write)`, problems);
    const existing = this.readText(path);
    // (the text this store read or wrote last has been validated already)
    if (existing !== null && existing !== 'same' && !this.isLast(path, existing.text))
      parseRecordText(existing.text, path, record.batch_id);
    const text = recordBytes(record);
    const stamp = writeStateFileAtomic(this.stateDir, path, text);
    // (a valid record parses to itself, record-check.ts: the text need not be parsed again)
    this.lastRead = { path, text, parsed: record, stamp };
  }

  private isLast(path: string, text: string): boolean {
    return this.lastRead?.path === path && this.lastRead.text === text;
  }

  /** Batch ids that have a record file, sorted. */
  list(): string[] {
    const dir = batchesDir(this.stateDir);
    assertNoSymlink(this.stateDir, dir);
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    return names
      .filter((n) => n.endsWith('.json') && !n.endsWith('.report.json'))
      .map((n) => n.slice(0, -'.json'.length))
      .filter((id) => ID_PATTERN.test(id))
      .sort();
  }

  readReport(batchId: string): Report | null {
    const path = this.paths(batchId).report;
    const text = readStateFile(this.stateDir, path);
    if (text === null) return null;
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      throw new LanesError(
        'state_invalid',
        `report ${path} is not valid JSON: ${(error as Error).message}`,
        2,
      );
    }
    const parsed = reportSchema.safeParse(raw);
    if (!parsed.success)
      throw new LanesError(
        'state_invalid',
        `report ${path} is invalid:\n  ${formatIssues(parsed.error).join('\n  ')}`,
        2,
      );
    return parsed.data;
  }

  /** The last report this store wrote: when the file still holds it, it need not be parsed again. */
  private lastReport: { path: string; text: string; state: Report['batch_state'] } | null = null;

  /** Writes the last stop report; a terminal report already on disk is never replaced. */
  writeReport(report: Report): void {
    const path = this.paths(report.batch_id).report;
    const mine =
      this.lastReport?.path === path && readStateFile(this.stateDir, path) === this.lastReport.text;
    const existing = mine ? { batch_state: this.lastReport!.state } : this.readReport(report.batch_id);
    if (existing && isTerminal(existing.batch_state))
      throw new LanesError(
        'report_immutable',
        `report ${path} is terminal (${existing.batch_state}) and is never overwritten`,
        2,
      );
    const text = `${JSON.stringify(reportSchema.parse(report), null, 2)}\n`;
    // A running batch's report is made again by every tick; the terminal one stays for good.
    writeStateFileAtomic(this.stateDir, path, text, { durable: isTerminal(report.batch_state) });
    this.lastReport = { path, text, state: report.batch_state };
  }
}
