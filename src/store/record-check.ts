import { formatIssues } from '../core/basics/issues.js';
import { batchRecordSchema, checkRecordInvariants, childRecordSchema } from '../core/records/record.js';
import type { BatchRecord } from '../core/records/record.js';

// A record's check before it is written (batch-store.ts): its shape and every invariant,
// by parts, each part taken from the last check where it is the same as it was then. A
// record is written at most a few times a tick, and between two writes most of it does not
// change: parsing it whole with zod again was most of a write (a 60-child batch: ~0.7 ms a
// write, ~170 writes; docs/PERFORMANCE.md "State files"). The schemas hold no defaults or
// transforms, so a valid record parses to itself; anything found wrong is parsed whole
// again for the message a full parse gives.
//
// "The same" is the same frozen object (core/basics/frozen.ts: nothing can have changed it
// since it passed; the store freezes what it writes and reads) or, for a child that is not
// frozen, the same JSON text.

const shape = batchRecordSchema.shape;
type Key = keyof typeof shape;
const KEYS = Object.keys(shape) as Key[];

/** Frozen all the way down: nothing in it can change any more. */
function deeplyFrozen(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  return Object.isFrozen(value) && Object.values(value).every(deeplyFrozen);
}

export class RecordCheck {
  /** The last record that passed, when it is frozen all the way down (else null). */
  private last: BatchRecord | null = null;
  /** Its children (and every deeply frozen child that passed before), by identity and as JSON. */
  private validChildren = new WeakSet<object>();
  private validJson = new Set<string>();

  /** The problems of `record` (none: it may be written). */
  problems(record: BatchRecord): string[] {
    if (!this.shapeHolds(record)) {
      const parsed = batchRecordSchema.safeParse(record, { reportInput: true });
      if (!parsed.success) return formatIssues(parsed.error);
    }
    const problems = checkRecordInvariants(record);
    if (problems.length === 0) this.passed(record);
    return problems;
  }

  /** True when every part is known valid or parses (false: the whole parse says what is wrong). */
  private shapeHolds(record: BatchRecord): boolean {
    if (record === null || typeof record !== 'object') return false;
    for (const key of Object.keys(record)) if (!(key in shape)) return false;
    const last = this.last as Record<Key, unknown> | null;
    for (const key of KEYS) {
      const value = (record as Record<Key, unknown>)[key];
      if (key === 'children') continue;
      if (last && value === last[key]) continue; // (frozen, as all of `last` is)
      if (!shape[key].safeParse(value).success) return false;
    }
    const children: unknown = record.children;
    if (!Array.isArray(children) || children.length === 0) return false;
    return children.every((child: unknown) => this.childHolds(child));
  }

  private childHolds(child: unknown): boolean {
    if (child !== null && typeof child === 'object' && this.validChildren.has(child)) return true;
    return this.validJson.has(JSON.stringify(child)) || childRecordSchema.safeParse(child).success;
  }

  private passed(record: BatchRecord): void {
    this.last = deeplyFrozen(record) ? record : null;
    this.validJson = new Set();
    for (const child of record.children) {
      if (this.last !== null || deeplyFrozen(child)) this.validChildren.add(child);
      else this.validJson.add(JSON.stringify(child));
    }
  }
}
