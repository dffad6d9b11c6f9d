import type { IPty } from 'node-pty';

// Reading a pty to its end after the executor has exited (docs/DECISIONS.md "Pane output").
//
// node-pty 1.1.0 (lib/unixTerminal.js) waits for the pty's read socket to close by itself
// once the child has exited (it closes with EIO when the kernel's pty buffer is read empty),
// but only 200 ms: then it destroys the socket. Output still unread at that moment is lost,
// in the screen model and in the transcript: the kernel keeps a few KB of it (more is lost
// there already, which is why the pty host never pauses a pty), and a busy event loop may
// not have come round to reading them.
//
// So that timer's destroy becomes "drain, then destroy": the socket is resumed, reading
// goes on, and the socket is destroyed only when it has stayed quiet for QUIET_MS (a
// background process the executor left may hold the pty open, so EIO may never come), or
// after LONGEST_DRAIN_MS whatever happens (such a process may keep writing forever).

/** No output for this long after the child's exit: the pty is read to its end. */
const QUIET_MS = 100;
/** A drain ends after this long even if output still flows (a background writer). */
const LONGEST_DRAIN_MS = 10_000;

interface ReadSocket {
  destroy(error?: Error): unknown;
  resume(): unknown;
  read(): unknown;
  readonly destroyed: boolean;
  readonly readableEnded: boolean;
  readonly readableLength: number;
}

/**
 * Makes node-pty read `proc` to its end after the child exits. Returns false (nothing
 * changed) if node-pty's internals are not as expected.
 */
export function drainAfterExit(proc: IPty): boolean {
  const socket = (proc as unknown as { _socket?: ReadSocket })._socket;
  if (!socket || typeof socket.destroy !== 'function' || typeof socket.read !== 'function') return false;
  const destroy = socket.destroy.bind(socket);
  let draining = false;
  let chunks = 0;
  proc.onData(() => {
    chunks++;
  });
  // A paused socket (pause() is node-pty's API; lanes does not call it) goes on reading into its own buffer (up to its high-water mark), so
  // the read that fails with EIO at the end may come while output waits there: hand it on
  // (read() emits it as data) before the socket is destroyed with the error.
  const handOnBuffered = (): void => {
    while (socket.readableLength > 0 && socket.read() !== null);
  };
  socket.destroy = (error?: Error) => {
    if (socket.destroyed) return destroy(error);
    if (error !== undefined || socket.readableEnded) {
      draining = true;
      handOnBuffered();
      return destroy(error);
    }
    // Only node-pty's post-exit timer destroys a readable socket without an error.
    if (draining) return socket;
    draining = true;
    socket.resume();
    const startedAt = Date.now();
    const check = (seen: number): void => {
      setTimeout(() => {
        // Decide after the event loop's next poll, so output that waited behind a busy
        // loop is read (and counted) before the socket is judged quiet.
        setImmediate(() => {
          if (socket.destroyed) return;
          if (chunks !== seen && Date.now() - startedAt < LONGEST_DRAIN_MS) return check(chunks);
          handOnBuffered();
          destroy();
        });
      }, QUIET_MS);
    };
    check(chunks);
    return socket;
  };
  return true;
}
