import { parentPort } from 'node:worker_threads';
import pty from 'node-pty';
import { drainAfterExit } from './pty-drain.js';
import { dropQueuedWritesOnClose, holdsFd } from './pty-fd.js';
import { changedRows, snapshotOf, type FromWorker, type OpenPane, type ToWorker } from './pty-messages.js';
import { ScreenModel, type StyledRun } from './screen.js';

// The pty worker: one thread for all of a process's pty panes (docs/DECISIONS.md "Panes off
// the main thread"). It reads the ptys and parses them into their screen models, so neither
// waits for lanes' main thread: a TUI drawing a costly frame no longer holds an executor
// on a full pty, and the last output of an executor that exits then is read before the
// kernel drops it. Every byte goes on to the main thread (the transcript, the listeners);
// the screens go as snapshots, taken only when the main thread needs one: a pane it draws
// (`want`), a flush it waits for, and a while after the screen went quiet (so recentLines
// is current for panes nobody draws, at a bounded cost).

/** A quiet screen's snapshot is sent this long after its last change, if nobody asked sooner. */
const QUIET_PUSH_MS = 100;
/** Output read is sent on to the main thread this long after the first unsent chunk. */
const DATA_MS = 4;
/**
 * Characters sent on and not yet taken by the main thread, at most, before the pty is
 * paused: an executor printing as fast as it can (`yes`) would otherwise flood a main
 * thread that draws and takes keys. A pause lasts PAUSE_MS at most whatever the main
 * thread does, well under the exit wrapper's 50 ms linger: an executor that exits during
 * one is still read before the kernel drops its last output (docs/DECISIONS.md).
 */
const MAX_AHEAD_CHARS = 1024 * 1024;
const PAUSE_MS = 20;

interface Pane {
  proc: pty.IPty;
  screen: ScreenModel;
  /** Resolves when everything fed so far is parsed (or dropped). */
  last: Promise<void>;
  fed: number;
  parsed: number;
  /** Changes of the screen (parsed output, a resize), and the count the last snapshot showed. */
  version: number;
  sentVersion: number;
  /** The count the last snapshot with the recent lines showed. */
  tailVersion: number;
  wanted: boolean;
  quietTimer: NodeJS.Timeout | null;
  /** When the screen last changed (performance.now()): it is quiet QUIET_PUSH_MS after. */
  changedAt: number;
  /** The rows the main thread holds (the last snapshot sent). */
  sentRows: StyledRun[][];
  /** A size asked for and not applied yet. */
  resizeTo: { cols: number; rows: number } | null;
  /** Read and not yet sent on: sent together once the reads of this turn of the loop are done. */
  unsent: string[];
  /** Characters sent on that the main thread has not said it took. */
  ahead: number;
  pauseTimer: NodeJS.Timeout | null;
}

const port = parentPort!;
const panes = new Map<number, Pane>();
const send = (message: FromWorker): void => port.postMessage(message);

/** `full`: with the recent lines (a flush, a quiet screen, the end), else what is drawn. */
function sendSnapshot(id: number, pane: Pane, flush: number | null, full: boolean): void {
  pane.sentVersion = pane.version;
  pane.wanted = false;
  if (full) {
    pane.tailVersion = pane.version;
    if (pane.quietTimer) clearTimeout(pane.quietTimer);
    pane.quietTimer = null;
  }
  const snapshot = snapshotOf(pane.screen, full);
  send({ t: 'snapshot', id, flush, snapshot: changedRows(snapshot, pane.sentRows) });
  pane.sentRows = snapshot.styled;
}

/** Once the screen has been quiet QUIET_PUSH_MS, its snapshot with the recent lines, if not sent. */
function whenQuiet(id: number, pane: Pane, wait: number): void {
  pane.quietTimer = setTimeout(() => {
    pane.quietTimer = null;
    if (panes.get(id) !== pane || pane.version === pane.tailVersion) return;
    const since = performance.now() - pane.changedAt;
    if (since < QUIET_PUSH_MS) return whenQuiet(id, pane, QUIET_PUSH_MS - since);
    sendSnapshot(id, pane, null, true);
  }, wait);
}

function changed(id: number, pane: Pane): void {
  pane.version++;
  pane.changedAt = performance.now();
  if (pane.wanted) sendSnapshot(id, pane, null, false);
  if (!pane.quietTimer) whenQuiet(id, pane, QUIET_PUSH_MS);
}

function sendData(id: number, pane: Pane): void {
  if (pane.unsent.length === 0) return;
  const data = pane.unsent.join('');
  pane.unsent = [];
  pane.ahead += data.length;
  send({ t: 'data', id, data });
  if (pane.ahead > MAX_AHEAD_CHARS && !pane.pauseTimer) {
    pane.proc.pause();
    pane.pauseTimer = setTimeout(() => resume(pane), PAUSE_MS);
  }
}

function resume(pane: Pane): void {
  if (pane.pauseTimer) clearTimeout(pane.pauseTimer);
  pane.pauseTimer = null;
  pane.proc.resume();
}

function feed(id: number, pane: Pane, data: string): void {
  pane.fed++;
  pane.last = pane.screen.write(data).then(() => {
    pane.parsed++;
    changed(id, pane);
  });
}

function resize(id: number, pane: Pane): void {
  const size = pane.resizeTo;
  pane.resizeTo = null;
  if (!size || panes.get(id) !== pane) return;
  if (size.cols === pane.screen.cols && size.rows === pane.screen.rows) return;
  pane.screen.resize(size.cols, size.rows);
  if (holdsFd(pane.proc)) pane.proc.resize(size.cols, size.rows);
  changed(id, pane);
}

function open(request: OpenPane): void {
  const { id, file, args, cwd, env, cols, rows, scrollback } = request;
  let proc: pty.IPty;
  try {
    proc = pty.spawn(file, args, { name: 'xterm-256color', cols, rows, cwd, env });
  } catch (error) {
    send({ t: 'failed', id, message: (error as Error).message });
    return;
  }
  const screen = new ScreenModel(cols, rows, scrollback);
  const pane: Pane = {
    proc,
    screen,
    last: Promise.resolve(),
    fed: 0,
    parsed: 0,
    version: 0,
    sentVersion: 0,
    tailVersion: 0,
    wanted: false,
    quietTimer: null,
    changedAt: 0,
    sentRows: [],
    resizeTo: null,
    unsent: [],
    ahead: 0,
    pauseTimer: null,
  };
  panes.set(id, pane);
  send({ t: 'spawned', id, pid: proc.pid });
  // Read as fast as the executor writes, never paused (docs/DECISIONS.md "Pane output").
  drainAfterExit(proc);
  dropQueuedWritesOnClose(proc);
  proc.onData((data) => {
    // One message for the chunks read within DATA_MS (a pty gives ~4 KB a read): the main
    // thread's cost is mostly a message's, whatever its size.
    if (pane.unsent.push(data) === 1) setTimeout(() => sendData(id, pane), DATA_MS);
    feed(id, pane, data);
  });
  proc.onExit(({ exitCode, signal }) => {
    if (pane.pauseTimer) clearTimeout(pane.pauseTimer);
    sendData(id, pane);
    send({ t: 'ended', id, exitCode, signal: signal ?? 0 });
    void pane.last.then(() => {
      sendSnapshot(id, pane, null, true);
      send({ t: 'exit', id });
      panes.delete(id);
      screen.dispose();
    });
  });
}

port.on('message', (message: ToWorker) => {
  if (message.t === 'open') return open(message);
  const pane = panes.get(message.id);
  if (!pane) return; // (its executor has exited: its last snapshot is the main thread's)
  switch (message.t) {
    case 'write':
      if (holdsFd(pane.proc)) pane.proc.write(message.data);
      return;
    case 'feed':
      return feed(message.id, pane, message.data);
    case 'resize':
      // The last size asked for, once the messages waiting have been read: a resize of the
      // screen model reflows it, and the main thread does not wait for one to ask the next.
      if (!pane.resizeTo) setImmediate(() => resize(message.id, pane));
      pane.resizeTo = { cols: message.cols, rows: message.rows };
      return;
    case 'took':
      pane.ahead -= message.chars;
      if (pane.pauseTimer && pane.ahead <= MAX_AHEAD_CHARS / 2) resume(pane);
      return;
    case 'want':
      if (pane.version !== pane.sentVersion) return sendSnapshot(message.id, pane, null, false);
      pane.wanted = true;
      return;
    case 'flush': {
      // When the screen model has parsed everything it holds (a flood answers at its end,
      // as ScreenModel.flushed does): one snapshot for it, not one a round trip.
      const { id, flush } = message;
      void pane.screen.flushed().then(() => panes.get(id) === pane && sendSnapshot(id, pane, flush, true));
      return;
    }
  }
});
