import { readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
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

/** After a read that said "end", how long (ms) the rest is waited for at most. */
const AFTER_END_MS = 20;
/** ...and read for at most (a process the executor left may still hold the pty and write). */
const AFTER_END_READ_MS = 200;

/** No output for this long after the child's exit: the pty is read to its end. */
const QUIET_MS = 100;
/** A drain ends after this long even if output still flows (a background writer). */
const LONGEST_DRAIN_MS = 10_000;

interface ReadSocket {
  destroy(error?: Error): unknown;
  emit(event: 'data', chunk: string): unknown;
  _readableState?: { decoder?: { write(bytes: Buffer): string } | null };
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
  // Under load a read of the pty can say "end" (0 bytes) while the executor's last output
  // is still on its way through the kernel (seen: 2.7 KB of 2 MB): what follows is read
  // from the descriptor itself, until it says EIO (nothing left, its other side closed),
  // and handed on as the socket's own data, through its own decoder (a character split
  // across two reads stays whole).
  const fd = (proc as unknown as { _fd?: unknown })._fd;
  const readToTheEnd = (): void => {
    if (typeof fd !== 'number') return;
    const decoder = socket._readableState?.decoder ?? new StringDecoder('utf8');
    const bytes = Buffer.alloc(64 * 1024);
    const nap = new Int32Array(new SharedArrayBuffer(4));
    const until = Date.now() + AFTER_END_READ_MS;
    for (let waited = 0; waited < AFTER_END_MS && Date.now() < until;) {
      let n: number;
      try {
        n = readSync(fd, bytes);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return; // (EIO: the end)
        n = 0;
      }
      if (n === 0) {
        Atomics.wait(nap, 0, 0, 1);
        waited++;
        continue;
      }
      const text = decoder.write(bytes.subarray(0, n));
      if (text) socket.emit('data', text);
    }
  };
  socket.destroy = (error?: Error) => {
    if (socket.destroyed) return destroy(error);
    if (error !== undefined || socket.readableEnded) {
      draining = true;
      handOnBuffered();
      if (error === undefined) readToTheEnd();
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
