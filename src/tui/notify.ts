// A bell and an OSC 9 desktop notification, once per event (a parked child, a lane that
// waits for input, the end of the batch) — never a stream of them.

export type NotifyMode = 'bell' | 'osc9' | 'both' | 'none';

export class Notifier {
  private seen = new Set<string>();

  constructor(
    private readonly mode: NotifyMode,
    private readonly write: (data: string) => void,
  ) {}

  /** Notifies unless `key` was notified before. Returns whether it did. */
  notify(key: string, message: string): boolean {
    if (this.seen.has(key) || this.mode === 'none') return false;
    this.seen.add(key);
    // No control characters inside the OSC: they would end it early or inject others.
    const text = stripControls(message).slice(0, 200);
    let out = '';
    if (this.mode === 'bell' || this.mode === 'both') out += '\x07';
    if (this.mode === 'osc9' || this.mode === 'both') out += `\x1b]9;${text}\x07`;
    this.write(out);
    return true;
  }
}

function stripControls(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    out += code < 0x20 || code === 0x7f ? ' ' : ch;
  }
  return out;
}
