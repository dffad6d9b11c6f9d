import type { IPty } from 'node-pty';

// node-pty's file descriptor and write queue around the pty's close (docs/DECISIONS.md
// "Pane output"): used where the ptys are read (src/hosts/pty/pty-worker.ts, and the
// machine host's attached panes).

/**
 * Whether node-pty still holds the pty's file descriptor. Its read socket closes the fd
 * when it ends (EIO once the executor's side is gone), and the exit is reported only when
 * the child is reaped, a little later: in between, an ioctl on the fd fails with EBADF and a
 * write could reach whatever file has reused the number. node-pty 1.1.0 says so only through
 * the socket (lib/unixTerminal.js); `destroyed` is set before the fd is closed.
 */
export function holdsFd(proc: IPty): boolean {
  const socket = (proc as unknown as { _socket?: { destroyed?: unknown } })._socket;
  return socket?.destroyed !== true;
}

/**
 * What was typed into a pane and not written yet (node-pty queues a write the pty cannot
 * take: a paste the executor is not reading) is dropped when the pty closes: node-pty 1.1.0
 * would go on writing it to the closed descriptor, or to a file that reused its number.
 */
export function dropQueuedWritesOnClose(proc: IPty): void {
  const internals = proc as unknown as {
    _socket?: { once?: (event: 'close', listener: () => void) => void };
    _writeStream?: { _writeQueue?: unknown[]; dispose?: () => void };
  };
  internals._socket?.once?.('close', () => {
    const queue = internals._writeStream?._writeQueue;
    if (Array.isArray(queue)) queue.length = 0;
    internals._writeStream?.dispose?.();
  });
}
