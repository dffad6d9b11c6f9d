import { render } from 'ink';
import { createElement } from 'react';
import { ConfirmScreen } from '../../../components/ConfirmScreen.js';
import { INK_OPTIONS } from '../../tui/ink-options.js';

// The confirmation screen of a drafted plan, drawn on its own (loaded only in a terminal):
// one answer a showing, the screen gone before the editor or the batch takes the terminal.

export type DraftAnswer = 'start' | 'edit' | 'quit';

export async function askOnScreen(lines: string[], startable: boolean): Promise<DraftAnswer> {
  let answer: (a: DraftAnswer) => void = () => {};
  const answered = new Promise<DraftAnswer>((r) => (answer = r));
  const instance = render(
    createElement(ConfirmScreen, {
      lines,
      startable,
      active: true,
      columns: process.stdout.columns || 80,
      rows: process.stdout.rows || 24,
      onAnswer: (yes: boolean) => answer(yes ? 'start' : 'quit'),
      onEdit: () => answer('edit'),
    }),
    INK_OPTIONS,
  );
  const result = await answered;
  instance.unmount();
  await instance.waitUntilExit();
  return result;
}
