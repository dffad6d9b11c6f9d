import type { OfferFacts } from '../../core/ports/git-port.js';

// What a lane job leaves for the next tick (steward-jobs.ts): a lane offered, or the
// failure to make one.

/** A lane for the next tick, with what git said of it when its job made or moved it. */
export type Offer = { task_id: string; path: string; facts?: Facts; machine?: string };

/** OfferFacts and when they were read (performance.now()). */
export type Facts = OfferFacts & { readAt: number };

/**
 * Facts older than this are read again by the admission: a lane made ahead can wait for a
 * slot a long time, and someone may have written to it meanwhile.
 */
export const FACTS_FRESH_MS = 2_000;

export type Failure = { task_id: string; reason: string };
