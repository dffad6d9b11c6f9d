import { EventEmitter } from 'node:events';
import { stripVTControlCharacters } from 'node:util';
import type { TuiActions } from '../components/App.js';
import { INK_OPTIONS } from '../src/tui/ink-options.js';
import { withProductionReact } from '../src/tui/production-mode.js';
import type { TuiStore } from '../src/tui/tui-store.js';

// The real Ink app on an in-memory terminal, and keys timed from the write to stdin to the
// first frame that shows the selection moved: what both keystroke figures measure.

// An in-memory terminal for the real Ink app: frames out, keys in.

export class FakeStdout extends EventEmitter {
  isTTY = true;
  columns = 160;
  rows = 48;
  last = '';
  write = (data: string) => {
    // Ink writes control sequences (synchronized output, cursor) apart from the frame itself.
    if (stripVTControlCharacters(data).trim() === '') return true;
    this.last = data;
    this.emit('frame', data);
    return true;
  };
}

export class FakeStdin extends EventEmitter {
  isTTY = true;
  private queue: string[] = [];
  write(data: string) {
    this.queue.push(data);
    this.emit('readable');
  }
  read = () => this.queue.shift() ?? null;
  setEncoding() {}
  setRawMode() {}
  ref() {}
  unref() {}
  resume() {}
  pause() {}
}

export const NO_ACTIONS: TuiActions = {
  confirm: () => {},
  resume: () => {},
  retry: () => {},
  review: () => {},
  togglePause: () => {},
  drop: () => {},
  cancel: () => {},
  diff: async () => '',
  qaLog: async () => '',
  openShell: async () => {},
  focusOutside: () => false,
  resize: () => {},
  runningInApp: () => 0,
  quit: () => {},
};

export interface DrivenTui {
  stdout: FakeStdout;
  /** Resolves once the first lane is drawn selected. */
  ready: Promise<void>;
  /** `n` keys (j/k, five down then five back) while `more()`; each key's latency in ms. */
  keys: (n: number, more?: () => boolean) => Promise<number[]>;
  unmount: () => void;
}

export function selectedIs(frame: string, id: string): boolean {
  return new RegExp(`› ${id} `).test(stripVTControlCharacters(frame));
}

export async function driveTui(store: TuiStore, ids: readonly string[]): Promise<DrivenTui> {
  const stdout = new FakeStdout();
  const stdin = new FakeStdin();
  // Loaded as lanes loads them (src/cli/lazy-tui.ts): React's production build.
  const [{ render }, { createElement }, { App }] = await withProductionReact(() =>
    Promise.all([import('ink'), import('react'), import('../components/App.js')]),
  );
  const instance = render(createElement(App, { store, actions: NO_ACTIONS }), {
    stdout: stdout as unknown as NodeJS.WriteStream,
    stdin: stdin as unknown as NodeJS.ReadStream,
    ...INK_OPTIONS,
  });
  const ready = new Promise<void>((resolve) => {
    const onFrame = (frame: string) => {
      if (!selectedIs(frame, ids[0]!)) return;
      stdout.off('frame', onFrame);
      resolve();
    };
    if (selectedIs(stdout.last, ids[0]!)) resolve();
    else stdout.on('frame', onFrame);
  });
  let at = 0;
  const keys = async (n: number, more: () => boolean = () => true): Promise<number[]> => {
    const latencies: number[] = [];
    for (let k = 0; k < n && more(); k++) {
      const down = at < ids.length - 1 && (k % 10 < 5 || at === 0);
      const next = down ? at + 1 : at - 1;
      const started = process.hrtime.bigint();
      const shown = new Promise<void>((resolve) => {
        const onFrame = (frame: string) => {
          if (!selectedIs(frame, ids[next]!)) return;
          stdout.off('frame', onFrame);
          resolve();
        };
        stdout.on('frame', onFrame);
      });
      stdin.write(down ? 'j' : 'k');
      await shown;
      latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
      at = next;
    }
    return latencies;
  };
  return { stdout, ready, keys, unmount: () => instance.unmount() };
}
