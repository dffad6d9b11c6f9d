// Where lane panes go and how big their terminals are: one pane over the whole pane area,
// or a grid of up to four, two a row. Each pane's pty is sized to the inside of its own
// cell, so an agent draws for the space it really has; and where a screen is still taller
// than its cell (a host that cannot resize, or before the agent has redrawn), the cell
// shows the rows around the cursor, where agents keep their input box.

export interface PaneCell {
  task: string;
  width: number;
  height: number;
}

export interface TerminalSize {
  cols: number;
  rows: number;
}

const GRID_COLUMNS = 2;

/** The cells for `tasks` (one task: the whole area). */
export function paneLayout(tasks: readonly string[], width: number, height: number): PaneCell[][] {
  if (tasks.length <= 1) return [tasks.map((task) => ({ task, width, height }))];
  const rowsOfPanes = Math.ceil(tasks.length / GRID_COLUMNS);
  const cellWidth = Math.floor(width / GRID_COLUMNS);
  const cellHeight = Math.floor(height / rowsOfPanes);
  return Array.from({ length: rowsOfPanes }, (_, r) =>
    tasks
      .slice(r * GRID_COLUMNS, (r + 1) * GRID_COLUMNS)
      .map((task) => ({ task, width: cellWidth, height: cellHeight })),
  );
}

/** The terminal inside a pane of this size: the border takes two columns, border and title three rows. */
export function innerSize(width: number, height: number): TerminalSize {
  return { cols: Math.max(10, width - 2), rows: Math.max(1, height - 3) };
}

/** The terminal size of each pane in a grid (none for a single pane: it has the full size). */
export function gridSizes(
  tasks: readonly string[],
  width: number,
  height: number,
): Record<string, TerminalSize> {
  if (tasks.length <= 1) return {};
  const out: Record<string, TerminalSize> = {};
  for (const cell of paneLayout(tasks, width, height).flat())
    out[cell.task] = innerSize(cell.width, cell.height);
  return out;
}

/**
 * The first screen row a pane of `rows` rows shows: the top rows when they hold the cursor;
 * else the cursor's row, and below it as much of what is drawn under it (an input box's
 * border, a status line) as fits.
 */
export function windowStart(screenRows: number, rows: number, cursorY: number, lastDrawnRow: number): number {
  if (screenRows <= rows || cursorY < rows) return 0; // the top rows hold the cursor
  const end = Math.min(Math.max(cursorY, lastDrawnRow), cursorY + rows - 1, screenRows - 1);
  return Math.max(0, end - rows + 1);
}

/** What resizing needs of a session (a LaneSession is one): its screen's size, if any. */
export interface ResizableSession {
  readonly screen?: TerminalSize | undefined;
  resize(cols: number, rows: number): void;
}

/**
 * Sizes every lane's sessions (executor and shell): a pane in the grid to its cell, every
 * other one to the full pane size (so the focused pane is full size again when the grid
 * closes). Sessions already at their size are left alone: a resize is a SIGWINCH.
 */
export function resizeSessions(
  sessions: Iterable<[string, ResizableSession]>,
  full: TerminalSize,
  cells: Record<string, TerminalSize> = {},
): void {
  for (const [task, session] of sessions) {
    const size = cells[task] ?? full;
    const screen = session.screen;
    if (screen && screen.cols === size.cols && screen.rows === size.rows) continue;
    session.resize(size.cols, size.rows);
  }
}

/** What the grid's order reads of a lane (a LaneRow is one). */
export interface GridLane {
  taskId: string;
  running: boolean;
  reviewPending?: boolean;
  health?: { waiting: boolean } | null;
}

/** 0: the lane waits for the user; 1: its executor runs; 2: the rest. */
function need(lane: GridLane): number {
  if (lane.reviewPending || lane.health?.waiting) return 0;
  return lane.running ? 1 : 2;
}

/**
 * The lanes a grid shows, four at most, each with a pane: the selected one first, then
 * the lanes that wait for the user, then the running ones, then the rest (finished lanes
 * fill the grid only where nothing else needs it), each group in the list's order.
 */
export function gridTasks(
  rows: readonly GridLane[],
  selected: string | undefined,
  sessionOf: (task: string) => unknown,
): string[] {
  const withPanes = rows.filter((r) => sessionOf(r.taskId) !== null);
  const byNeed = withPanes
    .map((lane, i) => ({ lane, i }))
    .sort((a, b) => need(a.lane) - need(b.lane) || a.i - b.i)
    .map(({ lane }) => lane.taskId);
  const ordered = selected ? [selected, ...byNeed.filter((t) => t !== selected)] : byNeed;
  return ordered.slice(0, 4);
}
