// The time (adapter: src/process/system-clock.ts).

export interface Clock {
  now(): Date;
}
