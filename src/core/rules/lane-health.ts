import { scopeMatcher } from '../plan/scope.js';

// Lane health at a glance (DESIGN §7), for every live lane, before QA runs. Hints for the
// human; only an exit (or a turn end) says "done".
// - waiting: the screen shows one of the executor's prompt patterns (an agent asking
//   permission), or the agent said so itself;
// - stalled: no output and no file change for the stall timeout;
// - drift: the lane changed paths outside its scope.
// Each function takes what the watch knew and one thing it saw, and gives what it knows
// now and the change to tell (src/coordinator/lane-watch.ts does the looking and the timers).

export interface LaneHealth {
  waiting: boolean;
  stalled: boolean;
  drift: string[];
}

export type HealthChange = 'waiting' | 'stalled' | 'drift' | 'recovered';

export interface LaneLife {
  health: LaneHealth;
  /** When the lane last showed life: output, or a change of its files (ms). */
  lastLifeAt: number;
  /** The lane's files at the last look (null before the first look). */
  fingerprint: string | null;
}

export interface HealthStep {
  life: LaneLife;
  change: HealthChange | null;
}

export function newLaneLife(now: number): LaneLife {
  return { health: { waiting: false, stalled: false, drift: [] }, lastLifeAt: now, fingerprint: null };
}

/**
 * Output from the executor: life, so a stall ends. Waiting ends too, unless the executor
 * redraws while it waits (coding agents animate their screens): then only the screen can
 * say the prompt is gone (laneScreen).
 */
export function laneOutput(life: LaneLife, now: number, animated: boolean): HealthStep {
  const { health } = life;
  const recovers = health.stalled || (health.waiting && !animated);
  const next = { ...life, lastLifeAt: now };
  if (!recovers) return { life: next, change: null };
  return { life: { ...next, health: { ...health, waiting: false, stalled: false } }, change: 'recovered' };
}

/** A look at the screen's recent lines: a prompt pattern there is waiting; its end, recovery. */
export function laneScreen(life: LaneLife, screen: string, promptPatterns: readonly string[]): HealthStep {
  if (promptPatterns.length === 0) return { life, change: null };
  const asks = promptPatterns.some((p) => new RegExp(p).test(screen));
  if (asks === life.health.waiting) return { life, change: null };
  return {
    life: { ...life, health: { ...life.health, waiting: asks } },
    change: asks ? 'waiting' : 'recovered',
  };
}

/** The agent itself said it waits for the user (a hook). */
export function laneAsksUser(life: LaneLife): HealthStep {
  if (life.health.waiting) return { life, change: null };
  return { life: { ...life, health: { ...life.health, waiting: true } }, change: 'waiting' };
}

export interface FilesLook {
  /** Anything that changes when a file of the lane changes (its status). */
  fingerprint: string;
  /** The paths the lane changed since its base. */
  changed: readonly string[];
}

/**
 * A periodic look at the lane's files. A changed fingerprint is life (a stall ends);
 * quiet for `stallTimeoutMs` is a stall, told once; paths outside the scope are drift,
 * told when they change to some.
 */
export function laneFiles(
  life: LaneLife,
  look: FilesLook,
  scope: readonly string[],
  now: number,
  stallTimeoutMs: number,
): { life: LaneLife; changes: HealthChange[] } {
  const changes: HealthChange[] = [];
  let next: LaneLife = { ...life, fingerprint: look.fingerprint };
  if (life.fingerprint !== null && look.fingerprint !== life.fingerprint) {
    next.lastLifeAt = now;
    if (next.health.stalled) {
      next.health = { ...next.health, stalled: false };
      changes.push('recovered');
    }
  } else if (!next.health.stalled && now - next.lastLifeAt >= stallTimeoutMs) {
    next = { ...next, health: { ...next.health, stalled: true } };
    changes.push('stalled');
  }
  const drift = scopeDrift(look.changed, scope);
  if (drift.join('\0') !== next.health.drift.join('\0')) {
    next = { ...next, health: { ...next.health, drift } };
    if (drift.length) changes.push('drift');
  }
  return { life: next, changes };
}

/** The changed paths outside the scope, in the order given. */
export function scopeDrift(changed: readonly string[], scope: readonly string[]): string[] {
  const inScope = scopeMatcher(scope);
  return changed.filter((p) => !inScope(p));
}
