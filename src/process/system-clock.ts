import type { Clock } from '../core/ports/clock.js';

// The one reading of the machine's clock: the composition roots pass it to the tick and
// the coordinator (docs/ARCHITECTURE.md "The layers"); tests may pass a clock of their own.

export const systemClock: Clock = { now: () => new Date() };
