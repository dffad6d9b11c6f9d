import { render } from 'ink';
import { createElement } from 'react';
import { App } from '../../../components/App.js';
import type { TuiActions } from '../../../components/App.js';
import { ExitCode } from '../../core/basics/errors.js';
import type { TuiRun } from './tui-batch.js';
import { INK_OPTIONS } from '../../tui/ink-options.js';
import { useFasterOutput } from '../../tui/frames/faster-output.js';

// The TUI's composition root: above src/tui and components/, which it wires to the
// coordinator and the adapters. Runs a batch with the TUI: the optional confirmation
// screen, then the coordinator in this process with its lanes in pty panes, until the
// user quits. This file draws the first frame with Ink and the screen alone; the batch's
// modules (tui-batch.ts) load behind it (docs/PERFORMANCE.md "first frame, session 12").

export type { TuiRun } from './tui-batch.js';

export async function runTui(run: TuiRun): Promise<number> {
  let resolveConfirm: (yes: boolean) => void = () => {};
  const confirmed = new Promise<boolean>((r) => (resolveConfirm = r));
  const instance = render(
    createElement(App, {
      store: null,
      actions: placeholderActions(resolveConfirm),
      ...(run.confirm ? { confirmLines: run.confirm.lines } : {}),
    }),
    INK_OPTIONS,
  );
  // (begun once the frame is out, and read while the user reads the confirmation; the
  // batch's frames are Ink's made cheaper, src/tui/frames/faster-output.ts)
  const batch = import('./tui-batch.js');
  void useFasterOutput().catch(() => false); // (should it fail, Ink draws as it does by itself)
  batch.catch(() => {}); // (awaited below, where its failure is thrown)
  let lock = run.lock;
  let runConfirmed: (typeof import('./tui-batch.js'))['runConfirmedTui'];
  try {
    if (run.confirm) {
      if (!(await confirmed)) {
        await run.machines?.close();
        instance.unmount();
        process.stderr.write('not confirmed; nothing was written\n');
        return ExitCode.badInput;
      }
      lock = await run.confirm.create();
    }
    runConfirmed = (await batch).runConfirmedTui;
  } catch (error) {
    instance.unmount();
    await lock?.release();
    throw error;
  }
  return runConfirmed(run, instance, lock); // (it unmounts the screen and releases the lock)
}

function placeholderActions(confirm: (yes: boolean) => void): TuiActions {
  const none = () => {};
  return {
    confirm,
    resume: none,
    retry: none,
    review: none,
    togglePause: none,
    drop: none,
    cancel: none,
    diff: async () => '',
    qaLog: async () => '',
    openShell: async () => {},
    focusOutside: () => false,
    resize: none,
    runningInApp: () => 0,
    quit: none,
  };
}
