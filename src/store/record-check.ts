import { z } from 'zod';
import { formatIssues } from '../core/basics/issues.js';
import { batchRecordSchema, checkRecordInvariants, childRecordSchema } from '../core/records/record.js';
import type { BatchRecord } from '../core/records/record.js';

// A record's check before it is written (batch-store.ts): its shape and every invariant,
// the children's shapes taken from the last check where a child is the same as it was then.
// A record is written at most a few times a tick, and between two writes most children do
// not change: parsing each with zod again was most of a write (a 60-child batch: ~0.7 ms a
// write, ~190 writes; docs/PERFORMANCE.md "State files"). The schemas hold no defaults or
// transforms, so a valid record parses to itself; anything found wrong is parsed whole
// again for the message a full parse gives.

const shellSchema = batchRecordSchema.extend({ children: z.array(z.unknown()).min(1) });

export class RecordCheck {
  /** Each child of the last record that passed, as JSON. */
  private valid = new Set<string>();

  /** The problems of `record` (none: it may be written). */
  problems(record: BatchRecord): string[] {
    const whole = () => batchRecordSchema.safeParse(record, { reportInput: true });
    if (!shellSchema.safeParse(record, { reportInput: true }).success) return formatIssues(whole().error!);
    const children = record.children.map((child) => JSON.stringify(child));
    const changed = record.children.filter((_, i) => !this.valid.has(children[i]!));
    if (!changed.every((child) => childRecordSchema.safeParse(child).success)) {
      const parsed = whole();
      if (!parsed.success) return formatIssues(parsed.error);
    }
    const problems = checkRecordInvariants(record);
    if (problems.length === 0) this.valid = new Set(children);
    return problems;
  }
}
