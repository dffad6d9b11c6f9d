import { closeSync, constants, fstatSync, lstatSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { ensureStateDir, readStateFile } from './safe-fs.js';

// The append-only journal (DESIGN §8): one JSON object a line. It is a log for people and
// tests, not an authority: the record and git decide; the journal says what happened.

export const JOURNAL_EVENTS = [
  'batch-confirmed',
  'tick',
  'lane-requested',
  'lane-made-ahead',
  'lane-moved',
  'lane-discarded',
  'lane-provisioned',
  'lane-admitted',
  'lane-refused',
  'enrolled',
  'executor-spawned',
  'executor-exited',
  'executor-reattached',
  'executor-relaunched',
  'qa-passed',
  'qa-failed',
  'settled',
  'lane-committed',
  'integrated',
  'integration-conflict',
  'slot-released',
  'released',
  'parked',
  'dependents-skipped',
  'resumed',
  'stalled',
  'suspect-dispatch',
  'dispatch-paused',
  'batch-completed',
  'batch-failed',
  'batch-stopped',
  'replanned',
  'head-adopted',
  'worktree-unknown',
  'final-check',
  'bisect-step',
  'culprit-found',
  'evicted',
  'landed',
  'cleaned',
  // the ways out of a stopped batch (docs/DECISIONS.md, "No dead ends")
  'dropped',
  'drop-refused',
  'batch-cancelled',
  'lane-trashed',
  'lane-reworked',
  'lane-conflict-unresolved',
] as const;
export type JournalEvent = (typeof JOURNAL_EVENTS)[number];

export const journalEntrySchema = z.looseObject({
  ts: z.string(),
  batch: z.string(),
  event: z.enum(JOURNAL_EVENTS),
  task: z.string().optional(),
});
export type JournalEntry = z.output<typeof journalEntrySchema>;

export interface JournalRead {
  entries: JournalEntry[];
  /** Lines that did not parse (a torn last line after a crash, a hand edit). */
  unreadable: number;
}

export class Journal {
  constructor(
    private readonly stateDir: string,
    private readonly path: string,
    private readonly batch: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Kept open once opened (a batch appends a few hundred lines); closed at exit by the OS. */
  private fd: number | null = null;

  append(event: JournalEvent, fields: Record<string, unknown> = {}): JournalEntry {
    const entry = { ts: this.now().toISOString(), batch: this.batch, event, ...fields } as JournalEntry;
    // One write per line: O_APPEND keeps concurrent lines whole.
    writeSync(this.open(), `${JSON.stringify(entry)}\n`);
    return entry;
  }

  /** The kept fd is still the file at the path (not removed or replaced meanwhile). */
  private stillAtPath(fd: number): boolean {
    const here = lstatSync(this.path, { throwIfNoEntry: false });
    const kept = fstatSync(fd);
    return here !== undefined && here.ino === kept.ino && here.dev === kept.dev;
  }

  private open(): number {
    if (this.fd !== null && this.stillAtPath(this.fd)) return this.fd;
    if (this.fd !== null) closeSync(this.fd);
    ensureStateDir(this.stateDir, dirname(this.path));
    this.fd = openSync(
      this.path,
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
      0o644,
    );
    return this.fd;
  }

  read(): JournalRead {
    return parseJournal(readStateFile(this.stateDir, this.path) ?? '');
  }
}

export function parseJournal(text: string): JournalRead {
  const entries: JournalEntry[] = [];
  let unreadable = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const parsed = journalEntrySchema.safeParse(JSON.parse(line));
      if (parsed.success) entries.push(parsed.data);
      else unreadable++;
    } catch {
      unreadable++;
    }
  }
  return { entries, unreadable };
}
