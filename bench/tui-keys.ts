import { EventEmitter } from 'node:events';
import { createConnection, createServer } from 'node:net';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import type { TuiActions } from '../components/App.js';
import { useFasterOutput } from '../src/tui/frames/faster-output.js';
import { INK_OPTIONS } from '../src/tui/ink-options.js';
import { withProductionReact } from '../src/tui/production-mode.js';
import type { TuiStore } from '../src/tui/tui-store.js';
import { tempDir } from './fixtures.js';

// The real Ink app on an in-memory terminal, and keys timed from the write to stdin to the
// first frame that shows the selection moved: what the keystroke figures measure. The keys
// reach the app as a terminal's do, through the kernel: read from a socket in a turn of the
// event loop of their own, not inside the frame of the key before (keyStdin).

// An in-memory terminal for the real Ink app: frames out, and a stdin for a bench that
// presses no key (keys go through keyStdin).

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

/**
 * A stdin whose keys come through a real socket: written at one end, read by the app's Ink
 * at the other when its event loop polls, as a terminal's keys are. (Written to an in-memory
 * stream, the next key was read and drawn inside the previous key's frame, before any of the
 * coordinator's I/O that came in meanwhile.)
 */
export async function keyStdin(): Promise<{
  stdin: NodeJS.ReadStream;
  press: (key: string) => void;
  close: () => void;
}> {
  const dir = tempDir('lanes-bench-keys-');
  const path = join(dir, 'keys.sock');
  const server = createServer();
  const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
  await new Promise<void>((resolve) => server.listen(path, resolve));
  const writer = createConnection(path);
  const reader = await accepted;
  await new Promise<void>((resolve) => (writer.connecting ? writer.once('connect', resolve) : resolve()));
  // (what Ink asks of a terminal's stdin beyond a readable stream)
  Object.assign(reader, { isTTY: true, setRawMode: () => reader });
  return {
    stdin: reader as unknown as NodeJS.ReadStream,
    press: (key) => void writer.write(key),
    close: () => {
      writer.destroy();
      reader.destroy();
      server.close(); // (its folder goes with the bench's other temporary ones)
    },
  };
}

/** Ink, React and the app, loaded and drawn as lanes does (src/cli/batch-run/run-tui.ts). */
export async function loadApp() {
  // (React's production build, as lanes loads it: src/tui/production-mode.ts)
  const [{ render }, { createElement }, { App }] = await withProductionReact(() =>
    Promise.all([import('ink'), import('react'), import('../components/App.js')]),
  );
  await useFasterOutput();
  return { render, createElement, App };
}

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
  const keyboard = await keyStdin();
  const { render, createElement, App } = await loadApp();
  const instance = render(createElement(App, { store, actions: NO_ACTIONS }), {
    stdout: stdout as unknown as NodeJS.WriteStream,
    stdin: keyboard.stdin,
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
      keyboard.press(down ? 'j' : 'k');
      await shown;
      latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
      at = next;
    }
    return latencies;
  };
  const unmount = () => {
    instance.unmount();
    keyboard.close();
  };
  return { stdout, ready, keys, unmount };
}
