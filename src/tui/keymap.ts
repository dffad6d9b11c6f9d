// The keys of DESIGN §10 as data: one table drives the handlers, the footer and the `?` help.
import { fitParts, wrapText } from './fit.js';

export type Command =
  | 'select-next'
  | 'select-prev'
  | 'attach'
  | 'grid'
  | 'diff'
  | 'qa-log'
  | 'shell'
  | 'resume'
  | 'retry'
  | 'approve'
  | 'reject'
  | 'pause'
  | 'land'
  | 'drop'
  | 'cancel'
  | 'quit'
  | 'help'
  | 'detach';

export interface Binding {
  command: Command;
  keys: string[];
  /** The key as shown, and a one-word hint for the footer ('' keeps it out of the footer). */
  shown: string;
  hint: string;
  help: string;
  /** In a narrow key bar the higher numbers go first; `?` (0) always stays. */
  priority?: number;
}

export const BINDINGS: readonly Binding[] = [
  {
    command: 'select-next',
    keys: ['j', 'down'],
    shown: 'j/k',
    hint: 'select',
    priority: 5,
    help: 'select the next / previous lane',
  },
  { command: 'select-prev', keys: ['k', 'up'], shown: '', hint: '', help: '' },
  {
    command: 'attach',
    keys: ['return'],
    shown: 'enter',
    hint: 'attach',
    priority: 2,
    help: "attach to the lane's pane (ctrl-g detaches)",
  },
  {
    command: 'grid',
    keys: ['g'],
    shown: 'g',
    hint: 'grid',
    help: 'one pane / a grid of up to four',
    priority: 6,
  },
  { command: 'diff', keys: ['d'], shown: 'd', hint: 'diff', help: "the lane's diff", priority: 5 },
  {
    command: 'qa-log',
    keys: ['l'],
    shown: 'l',
    hint: 'QA log',
    help: "the lane's latest QA log",
    priority: 4,
  },
  { command: 'shell', keys: ['s'], shown: 's', hint: 'shell', help: 'a shell in the lane', priority: 6 },
  {
    command: 'resume',
    keys: ['r'],
    shown: 'r',
    hint: 'resume',
    priority: 1,
    help: 'resume the parked lanes (a fresh confirmation)',
  },
  { command: 'retry', keys: ['R'], shown: 'R', hint: 'retry', help: 'retry the selected child', priority: 1 },
  {
    command: 'approve',
    keys: ['a'],
    shown: 'a',
    hint: 'approve',
    priority: 1,
    help: 'approve the review of the selected lane',
  },
  {
    command: 'reject',
    keys: ['x'],
    shown: 'x',
    hint: 'reject',
    priority: 1,
    help: 'reject the review of the selected lane',
  },
  {
    command: 'pause',
    keys: ['p'],
    shown: 'p',
    hint: 'pause',
    help: 'pause / unpause dispatch of new lanes',
    priority: 7,
  },
  {
    command: 'land',
    keys: ['L'],
    shown: 'L',
    hint: 'land',
    priority: 1,
    help: 'land the completed batch on its base branch (fast-forward)',
  },
  {
    command: 'drop',
    keys: ['D'],
    shown: 'D',
    hint: 'drop',
    priority: 2,
    help: 'drop the selected child and its dependents (asks first; the work stays on its lane branch)',
  },
  {
    command: 'cancel',
    keys: ['C'],
    shown: 'C',
    hint: 'cancel',
    priority: 2,
    help: 'cancel the batch (asks first; unintegrated work stays on lane branches)',
  },
  { command: 'help', keys: ['?'], shown: '?', hint: 'keys', help: 'this help (j/k scroll it)', priority: 0 },
  {
    command: 'quit',
    keys: ['q'],
    shown: 'q',
    hint: 'quit',
    help: 'quit (asks while in-app executors run)',
    priority: 3,
  },
  {
    command: 'detach',
    keys: [], // ctrl-g, read from the raw input while attached (components/App.tsx)
    shown: 'ctrl-g',
    hint: 'detach',
    help: 'detach from a pane (back to these keys)',
    priority: 0,
  },
];

export interface KeyInfo {
  upArrow?: boolean;
  downArrow?: boolean;
  return?: boolean;
  ctrl?: boolean;
  meta?: boolean;
}

/** The command a key press means, if any. */
export function commandFor(input: string, key: KeyInfo): Command | null {
  const name = key.upArrow ? 'up' : key.downArrow ? 'down' : key.return ? 'return' : input;
  if (key.ctrl && input === 'c') return 'quit';
  // Ink reports ctrl-x as input 'x' with ctrl (alt-x likewise with meta): those are not
  // the plain keys. A ctrl-g sent to detach after the pane already ended must not toggle
  // the grid, and ctrl-a / ctrl-x must not approve or reject a review.
  if (key.ctrl || key.meta) return null;
  return BINDINGS.find((b) => b.keys.includes(name))?.command ?? null;
}

/**
 * The footer's hints for the commands that apply now, in the table's order; where they do
 * not fit in `width`, the ones of least use now go first (`?` stays: it lists them all).
 */
export function footerHints(commands: readonly Command[], width = Infinity): string {
  const parts = BINDINGS.filter((b) => b.shown && commands.includes(b.command)).map((b) => ({
    text: `${b.shown} ${b.hint}`,
    priority: b.priority ?? 5,
  }));
  return fitParts(parts, width)
    .map((p) => p.text)
    .join('  ');
}

/** The `?` help: one entry per key, each wrapped to `width` after a column for the key. */
export function helpLines(width: number): { key: string; text: string }[] {
  const keyWidth = 8;
  const out: { key: string; text: string }[] = [];
  for (const b of BINDINGS) {
    if (!b.shown) continue;
    const shown = b.command === 'select-next' ? 'j/k ↓/↑' : b.shown;
    wrapText(b.help, Math.max(10, width - keyWidth)).forEach((text, i) =>
      out.push({ key: (i === 0 ? shown : '').padEnd(keyWidth), text }),
    );
  }
  return out;
}
