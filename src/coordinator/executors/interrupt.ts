import { abandonAttempt } from '../../core/records/kernel.js';
import type { Clock } from '../../core/ports/clock.js';
import type { CoordinatorStorePort } from '../../core/ports/store-port.js';
import type { Live } from './live.js';
import { stopRecordedExecutor, stopSession } from './stop-executors.js';

// The user's interrupt (Ctrl-C, SIGTERM in a headless run): every executor is stopped and
// its end is no exit — no QA, no quick-exit streak, no pause. Its attempt is closed as
// lost, so a resume starts it afresh (docs/DECISIONS.md "The user's interrupt, and exit
// code 5"). Exits that came before go on as usual.

export interface InterruptContext {
  live: Map<string, Live>;
  store: CoordinatorStorePort;
  watch: { forget(task: string): void };
  turns: { forget(task: string): void };
  clock: Clock;
}

export function interruptExecutors(ctx: InterruptContext): Promise<unknown> {
  return Promise.all(
    [...ctx.live.entries()].map(async ([task, live]) => {
      await live.launching;
      if (live.session?.running) await stopSession(live.session);
      else if (!live.session) await stopRecordedExecutor(ctx.store.readKernel(task));
      if (ctx.live.get(task) !== live) return; // (its exit was on its way already)
      ctx.watch.forget(task);
      ctx.turns.forget(task);
      ctx.live.delete(task);
      const read = ctx.store.readKernel(task);
      if (read.kind === 'ok' && read.record.attempts.at(-1)?.ended_at === null) {
        ctx.store.writeKernel(abandonAttempt(read.record, ctx.clock.now().toISOString()));
        ctx.store.journal('executor-interrupted', { task, attempt: read.record.attempts.length });
      }
    }),
  );
}
