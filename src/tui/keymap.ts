// The keys of DESIGN §10 as data: one table drives the handlers, the footer and the `?` help.

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
  | 'help';

export interface Binding {
  command: Command;
  keys: string[];
  /** The key as shown, and a one-word hint for the footer ('' keeps it out of the footer). */
  shown: string;
  hint: string;
  help: string;
}

export const BINDINGS: readonly Binding[] = [
  {
    command: 'select-next',
    keys: ['j', 'down'],
    shown: 'j/k',
    hint: 'select',
    help: 'select the next / previous lane',
  },
  { command: 'select-prev', keys: ['k', 'up'], shown: '', hint: '', help: '' },
  {
    command: 'attach',
    keys: ['return'],
    shown: 'enter',
    hint: 'attach',
    help: "attach to the lane's pane (ctrl-g detaches)",
  },
  { command: 'grid', keys: ['g'], shown: 'g', hint: 'grid', help: 'one pane / a grid of up to four' },
  { command: 'diff', keys: ['d'], shown: 'd', hint: 'diff', help: "the lane's diff" },
  { command: 'qa-log', keys: ['l'], shown: 'l', hint: 'QA log', help: "the lane's latest QA log" },
  { command: 'shell', keys: ['s'], shown: 's', hint: 'shell', help: 'a shell in the lane' },
  {
    command: 'resume',
    keys: ['r'],
    shown: 'r',
    hint: 'resume',
    help: 'resume the parked lanes (a fresh confirmation)',
  },
  { command: 'retry', keys: ['R'], shown: 'R', hint: 'retry', help: 'retry the selected child' },
  {
    command: 'approve',
    keys: ['a'],
    shown: 'a',
    hint: 'approve',
    help: 'approve the review of the selected lane',
  },
  {
    command: 'reject',
    keys: ['x'],
    shown: 'x',
    hint: 'reject',
    help: 'reject the review of the selected lane',
  },
  { command: 'pause', keys: ['p'], shown: 'p', hint: 'pause', help: 'pause / unpause dispatch of new lanes' },
  {
    command: 'land',
    keys: ['L'],
    shown: 'L',
    hint: 'land',
    help: 'land the completed batch on its base branch (fast-forward)',
  },
  {
    command: 'drop',
    keys: ['D'],
    shown: 'D',
    hint: 'drop',
    help: 'drop the selected child and its dependents (asks first; the work stays on its lane branch)',
  },
  {
    command: 'cancel',
    keys: ['C'],
    shown: 'C',
    hint: 'cancel',
    help: 'cancel the batch (asks first; unintegrated work stays on lane branches)',
  },
  { command: 'help', keys: ['?'], shown: '?', hint: 'keys', help: 'all keys' },
  { command: 'quit', keys: ['q'], shown: 'q', hint: 'quit', help: 'quit (asks while in-app executors run)' },
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

/** The footer's hints for the commands that apply now. */
export function footerHints(commands: readonly Command[]): string {
  return BINDINGS.filter((b) => b.shown && commands.includes(b.command))
    .map((b) => `${b.shown} ${b.hint}`)
    .join('  ');
}
