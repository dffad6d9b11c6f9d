// Waiting on a condition, for the tests. What they wait for — a file another process
// writes, a line in a batch journal, a terminal screen, a process going away — has no
// event a test can subscribe to, so polling it is the synchronisation. This is not a
// sleep: `until` returns as soon as the condition holds, and the timeout only bounds a
// failure.

export interface UntilOptions {
  /** Give up after this long (ms); the probe is still tried once after it has passed. */
  timeoutMs?: number;
  /** Time between two probes (ms). */
  everyMs?: number;
  /** What was last seen, appended to the timeout error (a screen, a frame, a state). */
  detail?: () => string | Promise<string>;
}

/**
 * Calls `probe` every `everyMs` until it returns a truthy value, and returns that value.
 * Throws, naming `what` and the timeout, if it has not after `timeoutMs`.
 */
export async function until<T>(
  probe: () => T | Promise<T>,
  what: string,
  { timeoutMs = 10_000, everyMs = 25, detail }: UntilOptions = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) {
      const message = `timed out after ${timeoutMs} ms waiting for ${what}`;
      throw new Error(detail ? `${message}; ${await detail()}` : message);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
