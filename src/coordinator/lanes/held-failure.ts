// An error met beside the loop (a lane job, an executor's start), kept until the loop can
// throw it: where it would have gone had the work been awaited in the loop. The first wins.

export class HeldFailure {
  private error: { value: unknown } | null = null;

  get held(): boolean {
    return this.error !== null;
  }

  hold(error: unknown): void {
    this.error ??= { value: error };
  }

  /** Throws the held error (once), if any. */
  throwHeld(): void {
    const held = this.error;
    this.error = null;
    if (held) throw held.value;
  }
}
