import { StringDecoder } from 'node:string_decoder';
import { isLanesError } from '../../core/basics/errors.js';
import type { MachineClient } from '../../machines/link/machine-client.js';

// A file on a machine read as it grows (`file.read` from the offset read so far): the
// transcript of a remote executor, brought back a piece at a time while it runs. A
// character cut between two reads is held until its last byte comes.

/** One read brings back this much at most; a longer tail is read in several. */
const READ_MAX = 1024 * 1024;

export class RemoteLog {
  private offset = 0;
  private readonly decoder = new StringDecoder('utf8');

  constructor(
    private readonly client: MachineClient,
    readonly path: string,
  ) {}

  /**
   * What was appended since the last read ('' when nothing, or the file is not there yet).
   * Throws when the machine does not answer: the next read starts where this one did.
   */
  async readNew(): Promise<string> {
    let text = '';
    for (;;) {
      let answer: { base64: string; size: number };
      try {
        answer = await this.client.call('file.read', { path: this.path, offset: this.offset, max: READ_MAX });
      } catch (error) {
        if (isLanesError(error) && error.code === 'machine_unreachable') {
          if (text === '') throw error;
          return text; // (what came is kept; the rest comes with the next read)
        }
        return text; // (the file is not there yet: the session has printed nothing)
      }
      const bytes = Buffer.from(answer.base64, 'base64');
      this.offset += bytes.length;
      text += this.decoder.write(bytes);
      if (bytes.length === 0 || this.offset >= answer.size) return text;
    }
  }

  /** A partial character left at the end (the file ended in the middle of one). */
  end(): string {
    return this.decoder.end();
  }
}

/** The whole of a small file on a machine (a status file), or null when it is not there. */
export async function readRemoteText(client: MachineClient, path: string): Promise<string | null> {
  try {
    const answer = await client.call<{ base64: string }>('file.read', { path, offset: 0, max: 4096 });
    return Buffer.from(answer.base64, 'base64').toString('utf8');
  } catch (error) {
    if (isLanesError(error) && error.code === 'machine_unreachable') throw error;
    return null;
  }
}
