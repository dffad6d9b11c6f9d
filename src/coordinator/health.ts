// Lane health the coordinator watches (SPEC §7): quick exits that changed nothing
// (suspect dispatch: an agent's quota or auth wall), and lanes that went quiet (stall).

export const SUSPECT_WINDOW_MS = 60_000;
export const SUSPECT_LIMIT = 2;

/** Counts suspect exits in a row across lanes; any real exit resets the count. */
export class DispatchHealth {
  private streak = 0;

  /** Returns true when this exit makes dispatch unhealthy. */
  observeExit(ranForMs: number, laneChanged: boolean): { suspect: boolean; unhealthy: boolean } {
    const suspect = ranForMs < SUSPECT_WINDOW_MS && !laneChanged;
    this.streak = suspect ? this.streak + 1 : 0;
    return { suspect, unhealthy: this.streak >= SUSPECT_LIMIT };
  }

  reset(): void {
    this.streak = 0;
  }
}

/** Tracks when a lane last showed life: output, or a change of its files. */
export class StallWatch {
  private lastLife: number;
  private fingerprint: string | null = null;
  stalled = false;

  constructor(now: number) {
    this.lastLife = now;
  }

  output(now: number): void {
    this.lastLife = now;
    this.stalled = false;
  }

  /** Feeds the lane's current file fingerprint; a change counts as life. */
  files(fingerprint: string, now: number): void {
    if (this.fingerprint !== null && fingerprint !== this.fingerprint) this.output(now);
    this.fingerprint = fingerprint;
  }

  /** True once, when the lane has been quiet for `timeoutMs`. */
  check(now: number, timeoutMs: number): boolean {
    if (this.stalled || now - this.lastLife < timeoutMs) return false;
    this.stalled = true;
    return true;
  }
}
