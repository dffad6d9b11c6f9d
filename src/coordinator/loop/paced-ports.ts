import type { HeadMoved } from '../../core/records/report.js';
import type { TickPorts } from '../../core/ports/tick-ports.js';
import { afterTurn, coordinatorThread, type ThreadShare } from '../../process/thread-share.js';

export { coordinatorThread };

// The ports a tick and an attempt's end work through, with what comes back from git and
// the QA checks taken in its turn of the coordinator's thread (process/thread-share.ts):
// a hundred lanes' QA runs and deliveries finishing together resume one after another,
// with keys and frames in between, not all in one turn of the event loop. The core's
// decisions and their order within a lane are untouched: only when a lane's next piece
// runs moves.

const PACED = Symbol('paced');

/** `port` whose asynchronous methods resolve in a later turn of the coordinator's thread. */
export function paced<T extends object>(port: T, share: ThreadShare = coordinatorThread): T {
  if ((port as { [PACED]?: true })[PACED]) return port;
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(port, {
    get(target, key) {
      if (key === PACED) return true;
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      if (!wrapped.has(key))
        wrapped.set(key, (...args: unknown[]) => {
          const out: unknown = (value as (...a: unknown[]) => unknown).apply(target, args);
          return out instanceof Promise ? afterTurn(out, share) : out;
        });
      return wrapped.get(key);
    },
  });
}

/** The tick's ports (an attempt's end works through them too), git and QA paced. */
export function pacedPorts(ports: TickPorts, headMovedEarly: (moved: HeadMoved) => void): TickPorts {
  return { ...ports, git: paced(ports.git), qa: paced(ports.qa), headMovedEarly };
}
