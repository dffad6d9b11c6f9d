import type { AcceptanceCheck } from '../plan/plan.js';
import type { Clock } from './clock.js';
import type { FinalPort } from './final-port.js';
import type { GitPort } from './git-port.js';
import type { QaPort } from './qa-port.js';
import type { StorePort } from './store-port.js';

// Every port one tick works through. Tests may pass their own.

export interface TickPorts {
  store: StorePort;
  git: GitPort;
  qa: QaPort;
  clock: Clock;
  newRunId(): string;
  /** `integration_checks: all` in the config re-verifies every integration. */
  integrationChecks: 'changed' | 'all';
  /** The config's `final_checks`, used when the plan has none. */
  finalChecks?: readonly AcceptanceCheck[];
  /** Needed when the batch has final checks. */
  final?: FinalPort;
  /** Called at named points after a git mutation and before the write that records it. */
  crashPoint(name: string, detail?: string): void;
  /**
   * The tick's integrations have moved the batch branch to `head` (`integrated` children, so
   * as many slots free): lanes waiting to be admitted can be brought to it while the tick
   * goes on (the coordinator's lane jobs, DESIGN §7).
   */
  headMoved?(head: string, integrated: number): void;
}
