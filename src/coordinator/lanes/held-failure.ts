import { isLanesError } from '../../core/basics/errors.js';

// An error met beside the loop (a lane job, an executor's start), kept until the loop can
// throw it: where it would have gone had the work been awaited in the loop. The first wins.
// An executor's start or a lane job that met a machine that stopped answering
// (machine_unreachable) is no failure of the batch (holdUnlessAway): the pool has it
// reconnecting, the tick leaves its lanes and hands the start, the provision or the release
// again once it answers (each is safe to run twice), or parks them once it is lost.

export class HeldFailure {
  private error: { value: unknown } | null = null;

  get held(): boolean {
    return this.error !== null;
  }

  hold(error: unknown): void {
    this.error ??= { value: error };
  }

  holdUnlessAway(error: unknown): void {
    if (!metAwayMachine(error)) this.hold(error);
  }

  /** Throws the held error (once), if any. */
  throwHeld(): void {
    const held = this.error;
    this.error = null;
    if (held) throw held.value;
  }
}

/** The error of an op a machine did not answer (the pool has that machine reconnecting now). */
export function metAwayMachine(error: unknown): boolean {
  return isLanesError(error) && error.code === 'machine_unreachable';
}
