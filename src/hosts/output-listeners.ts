// Who listens to a lane session's output (LaneSession.onOutput), for every host alike.

export class OutputListeners {
  private readonly listeners = new Set<(chunk: string) => void>();

  /** Adds a listener; the function returned removes it. */
  add(listener: (chunk: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(chunk: string): void {
    for (const listener of this.listeners) listener(chunk);
  }
}
