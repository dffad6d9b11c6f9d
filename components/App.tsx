import { Box, Text, useInput, useStdin, useStdout } from 'ink';
import { useEffect, useState, useSyncExternalStore } from 'react';
import { availableCommands, DROPPABLE, ENDED } from '../src/tui/available-commands.js';
import { commandFor, type Command } from '../src/tui/keymap.js';
import { gridSizes, gridTasks, innerSize } from '../src/tui/pane-layout.js';
import type { TerminalSize } from '../src/tui/pane-layout.js';
import type { TuiStore } from '../src/tui/tui-store.js';
import { ConfirmScreen } from './ConfirmScreen.js';
import { Footer } from './Footer.js';
import { Header } from './Header.js';
import { HelpOverlay } from './HelpOverlay.js';
import { laneListWidth, LaneList } from './LaneList.js';
import { PaneArea } from './PaneArea.js';
import { QuitPrompt } from './QuitPrompt.js';
import { useKeyState } from './key-state.js';
import { WayOutPrompt } from './WayOutPrompt.js';
import type { WayOut } from './WayOutPrompt.js';
import { diffLines, TextViewer } from './TextViewer.js';
import type { ViewerLine } from './TextViewer.js';

// The lanes TUI (DESIGN §10). It renders the store's snapshot and sends intents through
// `actions`; it never runs git or a tick itself — everything slow is behind a promise.

export interface TuiActions {
  confirm(yes: boolean): void;
  resume(): void;
  retry(taskId: string): void;
  review(taskId: string, verdict: 'approved' | 'rejected'): void;
  togglePause(): void;
  drop(taskId: string): void;
  cancel(): void;
  /** `L` on the completed screen: `lanes land` (fast-forward); the outcome comes back as a notice. */
  land?(): void;
  diff(taskId: string): Promise<string>;
  qaLog(taskId: string): Promise<string>;
  openShell(taskId: string): Promise<void>;
  /** Focus the lane outside the app (a Herdr tab); false when the lane is in-app. */
  focusOutside(taskId: string): boolean;
  /** The full pane size, and the size of each pane shown in a grid cell (src/tui/pane-layout.ts). */
  resize(paneCols: number, paneRows: number, cells?: Record<string, TerminalSize>): void;
  runningInApp(): number;
  quit(): void;
}

/** The part of the TUI store the app reads (tests pass a small fake of it). */
export type AppStore = Pick<TuiStore, 'subscribe' | 'getSnapshot' | 'sessions' | 'shells' | 'setVisible'>;

export interface AppProps {
  store: AppStore | null;
  actions: TuiActions;
  confirmLines?: string[];
}

type Overlay =
  | { kind: 'help' }
  | { kind: 'text'; title: string; lines: ViewerLine[] }
  | { kind: 'quit'; running: number }
  | WayOut
  | null;

const NOOP_SUBSCRIBE = () => () => {};

export function App({ store, actions, confirmLines }: AppProps) {
  const { stdout } = useStdout();
  const { isRawModeSupported, setRawMode, internal_eventEmitter } = useStdin() as ReturnType<
    typeof useStdin
  > & {
    internal_eventEmitter: NodeJS.EventEmitter;
  };
  const interactive = isRawModeSupported === true;
  const [size, setSize] = useState({ columns: stdout.columns || 120, rows: stdout.rows || 40 });
  const [selected, setSelected] = useKeyState(0);
  const [grid, setGrid] = useState(false);
  const [attached, setAttached] = useState(false);
  const [overlay, setOverlay] = useState<Overlay>(null);
  // A word about the last key where it did nothing visible (cleared by the next key).
  const [hint, setHint] = useState<string | null>(null);
  const [now, setNow] = useState(Date.now());
  const snapshot = useSyncExternalStore(
    store?.subscribe ?? NOOP_SUBSCRIBE,
    () => store?.getSnapshot() ?? null,
  );

  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);

  const bodyRows = Math.max(6, size.rows - 4);
  const listWidth = laneListWidth(size.columns);
  const paneCols = Math.max(20, size.columns - listWidth - 1);
  useEffect(() => {
    const onResize = () => setSize({ columns: stdout.columns || 120, rows: stdout.rows || 40 });
    stdout.on('resize', onResize);
    return () => void stdout.off('resize', onResize);
  }, [stdout]);

  const rows = snapshot?.rows ?? [];
  const current = rows[Math.min(selected, rows.length - 1)];
  const sessionOf = (task: string) => store?.shells.get(task) ?? store?.sessions.get(task) ?? null;
  const session = current ? sessionOf(current.taskId) : null;

  // Attached: raw keystrokes (ctrl keys, escape sequences, paste) go to the pane as they came.
  useEffect(() => {
    if (!attached || !session) return;
    const onInput = (data: string) => {
      if (data.includes('\x07')) {
        setAttached(false);
        return;
      }
      session.write(data);
    };
    // Raw mode stays on while attached: the key handlers are inactive, and Ink would drop it.
    setRawMode(true);
    internal_eventEmitter.on('input', onInput);
    return () => {
      internal_eventEmitter.off('input', onInput);
      setRawMode(false);
    };
  }, [attached, session, internal_eventEmitter, setRawMode]);
  useEffect(() => {
    if (attached && !session?.running) setAttached(false);
  }, [attached, session, snapshot?.version]);

  const visible = grid ? gridTasks(rows, current?.taskId, sessionOf) : current ? [current.taskId] : [];
  useEffect(() => store?.setVisible(visible), [store, visible.join('|')]);
  // Each pane's terminal is the size of its cell; out of the grid, the full pane size. (Only
  // a change of sizes resizes: selecting another lane out of the grid changes nothing.)
  const full = innerSize(paneCols, bodyRows);
  const sizes = JSON.stringify([full, gridSizes(visible, paneCols, bodyRows)]);
  useEffect(() => {
    const [{ cols, rows }, cells] = JSON.parse(sizes) as [TerminalSize, Record<string, TerminalSize>];
    actions.resize(cols, rows, cells);
  }, [sizes, actions]);

  const run = (command: Command) => {
    if (!current) return;
    const task = current.taskId;
    switch (command) {
      case 'select-next':
        return setSelected((i) => Math.min(rows.length - 1, i + 1));
      case 'select-prev':
        return setSelected((i) => Math.max(0, i - 1));
      case 'attach':
        if (actions.focusOutside(task)) return;
        if (session?.running) setAttached(true);
        else
          setHint(
            session
              ? `${task}'s executor has exited (${current.state}): d diff, l QA log, s shell`
              : `${task} has no executor running (${current.state}): d diff, l QA log, s shell`,
          );
        return;
      case 'grid':
        return setGrid((g) => !g);
      case 'diff':
        void actions
          .diff(task)
          .then((text) => setOverlay({ kind: 'text', title: `diff of ${task}`, lines: diffLines(text) }));
        return;
      case 'qa-log':
        void actions.qaLog(task).then((text) =>
          setOverlay({
            kind: 'text',
            title: `QA log of ${task}`,
            lines: text.split('\n').map((t) => ({ text: t })),
          }),
        );
        return;
      case 'shell':
        void actions.openShell(task).then(() => setAttached(true));
        return;
      case 'resume':
        return actions.resume();
      case 'retry':
        return actions.retry(task);
      case 'approve':
        if (current.reviewPending) actions.review(task, 'approved');
        return;
      case 'reject':
        if (current.reviewPending) actions.review(task, 'rejected');
        return;
      case 'pause':
        return actions.togglePause();
      case 'drop':
        if (current && DROPPABLE.has(current.state)) setOverlay({ kind: 'drop', task });
        return;
      case 'cancel':
        if (!ENDED.has(snapshot?.batchState ?? '')) setOverlay({ kind: 'cancel' });
        return;
      case 'land':
        if (snapshot?.batchState === 'completed') actions.land?.();
        return;
      case 'help':
        return setOverlay({ kind: 'help' });
      case 'detach': // (ctrl-g is read from the raw input while attached)
        return;
      case 'quit': {
        const running = actions.runningInApp();
        if (running > 0) setOverlay({ kind: 'quit', running });
        else actions.quit();
        return;
      }
    }
  };

  useInput(
    (input, key) => {
      setHint(null);
      // Keys that arrive together come as one string: handle each character.
      if (input.length > 1 && !key.upArrow && !key.downArrow) {
        for (const ch of input) {
          const c = commandFor(ch, {});
          if (c) run(c);
        }
        return;
      }
      const command = commandFor(input, key);
      if (command) run(command);
    },
    { isActive: interactive && !attached && !confirmLines && overlay === null },
  );

  if (confirmLines)
    return (
      <ConfirmScreen
        lines={confirmLines}
        onAnswer={actions.confirm}
        active={interactive}
        columns={size.columns}
        rows={size.rows}
      />
    );
  if (!snapshot) return <Text>starting…</Text>;

  const commands = availableCommands(snapshot.batchState, current, session !== null);
  return (
    <Box flexDirection="column" width={size.columns} height={size.rows - 1}>
      <Header snapshot={snapshot} now={now} width={size.columns} />
      {overlay?.kind === 'help' ? (
        <HelpOverlay
          width={size.columns}
          height={bodyRows}
          active={interactive}
          onClose={() => setOverlay(null)}
        />
      ) : null}
      <Box height={bodyRows} gap={1} display={overlay?.kind === 'help' ? 'none' : 'flex'}>
        <LaneList
          rows={rows}
          selected={Math.min(selected, rows.length - 1)}
          now={now}
          width={listWidth}
          height={bodyRows}
        />
        <Box flexDirection="column" width={paneCols}>
          {overlay?.kind === 'text' ? (
            <TextViewer
              title={overlay.title}
              lines={overlay.lines}
              height={bodyRows}
              onClose={() => setOverlay(null)}
              active={interactive}
            />
          ) : overlay?.kind === 'drop' || overlay?.kind === 'cancel' ? (
            <WayOutPrompt
              way={overlay}
              active={interactive}
              onAnswer={(yes) => {
                if (yes && overlay.kind === 'drop') actions.drop(overlay.task);
                if (yes && overlay.kind === 'cancel') actions.cancel();
                setOverlay(null);
              }}
            />
          ) : overlay?.kind === 'quit' ? (
            <QuitPrompt
              running={overlay.running}
              active={interactive}
              onAnswer={(yes) => (yes ? actions.quit() : setOverlay(null))}
            />
          ) : (
            <PaneArea
              tasks={visible}
              selected={current?.taskId ?? null}
              sessionOf={sessionOf}
              width={paneCols}
              height={bodyRows}
              attached={attached}
            />
          )}
        </Box>
      </Box>
      <Footer
        commands={attached ? ['detach'] : commands}
        notice={hint ?? snapshot.notices.at(-1) ?? null}
        width={size.columns}
      />
    </Box>
  );
}
