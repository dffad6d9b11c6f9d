import { Worker } from 'node:worker_threads';

// A worker thread of lanes' own for work that would otherwise hold the coordinator's thread
// (a lane's files, a look at /proc): started from its source on first use, one message each
// way a request, held open only while a request is out. Its source is CommonJS run with
// `eval`, so that it is a string in every build (the bundle has no file of it to start).
// The source answers each `{ id, ...request }` with `{ id, value }` or `{ id, error }`.

type Answer<T> = { id: number; value: T } | { id: number; error: string };

export class RequestThread<T> {
  private worker: Worker | null = null;
  private next = 0;
  private readonly waiting = new Map<number, (answer: Answer<T>) => void>();

  /** `name` says which thread ended, in the error of what was out when it did. */
  constructor(
    private readonly source: string,
    private readonly name: string,
  ) {}

  private thread(): Worker {
    if (this.worker) return this.worker;
    const started = new Worker(this.source, { eval: true });
    started.on('message', (answer: Answer<T>) => {
      const done = this.waiting.get(answer.id);
      this.waiting.delete(answer.id);
      if (this.waiting.size === 0) started.unref();
      done?.(answer);
    });
    const fail = (why: string) => {
      if (this.worker === started) this.worker = null;
      for (const [id, done] of this.waiting) done({ id, error: why });
      this.waiting.clear();
    };
    started.on('error', (error) => fail(error.message));
    started.on('exit', () => fail(`the ${this.name} thread ended`));
    this.worker = started;
    return started;
  }

  /** Starts the thread before it is first needed (a start is ~40 ms on this machine's Node 20). */
  warm(): void {
    const worker = this.thread();
    if (this.waiting.size === 0) worker.unref();
  }

  /** The thread's answer to `request`; rejects with the error it answered, or when it ended. */
  ask(request: object): Promise<T> {
    const worker = this.thread();
    const id = ++this.next;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, (answer) =>
        'error' in answer ? reject(new Error(answer.error)) : resolve(answer.value),
      );
      worker.ref();
      worker.postMessage({ ...request, id });
    });
  }
}
