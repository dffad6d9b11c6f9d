// An attempt whose executor lanes finds ended after a restart, killed by a signal (the exit
// wrapper records sh's 128+n): the signal came from outside while lanes was away — the
// user's kill -9, the OOM killer, a closed terminal — not from the work. Such an attempt is
// lost, like one that left no exit at all: no QA runs on it and no QA failure is counted;
// the child starts again (an agent continues its conversation). A lost attempt is not a
// failed check (docs/DECISIONS.md "No dead ends").

const SIGNAL_BASE = 128;
const HIGHEST_SIGNAL = 64;

/** The exit, found after a restart, is a death by signal: the attempt is lost, not failed. */
export function diedOfSignal(exit: { code: number | null; signal: string | null }): boolean {
  if (exit.signal !== null) return true;
  return exit.code !== null && exit.code > SIGNAL_BASE && exit.code <= SIGNAL_BASE + HIGHEST_SIGNAL;
}
