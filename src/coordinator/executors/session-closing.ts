import { closeLive } from '../turns/session-close.js';

// The close-session effects under way (each beside the loop): a release waits for them
// (the lane's session is closed before its lane goes), and so does the end of the run.

type CloseContext = Parameters<typeof closeLive>[0];

export class SessionClosing {
  private readonly closing = new Set<Promise<void>>();

  constructor(private readonly context: () => CloseContext) {}

  /** Carries out a close-session effect beside the loop (settled waits for it). */
  close(task: string): void {
    const closing: Promise<void> = closeLive(this.context(), task).finally(() =>
      this.closing.delete(closing),
    );
    this.closing.add(closing);
  }

  /** Resolves once no session is being closed. */
  async settled(): Promise<void> {
    await Promise.all([...this.closing]);
  }
}
