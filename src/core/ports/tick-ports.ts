import type { AcceptanceCheck } from '../plan/plan.js';
import type { HeadMoved } from '../records/report.js';
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
   * The report's `head_moved` handed out the moment the tick's integrations decide it, so
   * that the coordinator's lane jobs bring the waiting lanes to the new head while the tick
   * goes on (DESIGN §7; DECISIONS "Effects are data"). Data only, the same the report then
   * says: it must not call back into the tick.
   */
  headMovedEarly?(moved: HeadMoved): void;
}
