import { closeSync, existsSync, openSync, readdirSync, readSync, watch } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { badInput } from '../../core/basics/errors.js';
import { TERMINAL_BATCH_STATES } from '../../core/records/record.js';
import { BatchStore } from '../../store/batch-store.js';
import { Journal, parseJournal } from '../../store/journal.js';
import type { JournalEntry } from '../../store/journal.js';
import { readStateFile } from '../../store/safe-fs.js';
import { findRepo } from '../../store/state-dir.js';
import { batchIdArg, parseCommand } from '../args.js';
import type { CommandContext } from '../context.js';
import { dim } from '../batch-run/style.js';
import { theBatch } from './the-batch.js';

function formatEntry(e: JournalEntry): string {
  const { ts, batch: _batch, event, task, ...rest } = e;
  const fields = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${dim(ts)} ${event}${task ? ` ${task}` : ''}${fields ? ` ${dim(fields)}` : ''}`;
}

/** Each attempt's transcript of a lane, oldest first, as plain text (headless agents' JSON is already rendered). */
function printTranscripts(ctx: CommandContext, dir: string): void {
  if (!existsSync(dir)) return;
  const attempts = readdirSync(dir)
    .map((name) => /^attempt-(\d+)\.log$/.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .sort((a, b) => Number(a[1]) - Number(b[1]));
  for (const m of attempts) {
    ctx.stdout(`${dim(`── attempt ${m[1]} ──`)}\n`);
    printPlain(ctx, join(dir, m[0]));
  }
}

const CHUNK_BYTES = 1024 * 1024;

/**
 * A transcript as plain text, a chunk at a time: a lane's transcript can be 64 MB, and read
 * whole it took ten times that of memory. Each chunk is cut after its last newline (the rest
 * goes with the next), so no escape sequence or CR LF is split between two.
 */
function printPlain(ctx: CommandContext, file: string): void {
  const fd = openSync(file, 'r');
  const decoder = new StringDecoder('utf8');
  const buffer = Buffer.alloc(CHUNK_BYTES);
  let carry = '';
  let endsLine = true;
  try {
    for (;;) {
      const n = readSync(fd, buffer, 0, CHUNK_BYTES, null);
      const text = carry + (n > 0 ? decoder.write(buffer.subarray(0, n)) : decoder.end());
      const cut = n > 0 ? text.lastIndexOf('\n') + 1 : text.length;
      carry = text.slice(cut);
      const whole = text.slice(0, cut);
      if (whole) {
        const plain = stripVTControlCharacters(whole).replace(/\r\n?/g, '\n');
        ctx.stdout(plain);
        if (plain) endsLine = plain.endsWith('\n');
      }
      if (n === 0) break;
    }
  } finally {
    closeSync(fd);
  }
  if (!endsLine) ctx.stdout('\n'); // (a last line without its newline gets one, as before)
}

/** `lanes log [<batch>] [--follow] [--json] [--task <child>]` */
export async function logCommand(ctx: CommandContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(
    'log',
    argv,
    { follow: { type: 'boolean', short: 'f' }, json: { type: 'boolean' }, task: { type: 'string' } },
    1,
  );
  if (values.follow && values.json)
    throw badInput('usage', 'lanes log: --json prints one document and cannot --follow');
  const repo = await findRepo(ctx.cwd);
  const store = new BatchStore(repo.stateDir);
  const batchId = batchIdArg('log', positionals[0]) ?? theBatch(store, 'log');
  if (store.read(batchId) === null) throw badInput('state_missing', `no batch named "${batchId}"`);
  const path = store.paths(batchId).journal;
  const journal = new Journal(repo.stateDir, path, batchId);
  const { entries, unreadable } = journal.read();
  if (values.json) {
    ctx.stdout(`${JSON.stringify({ entries, unreadable })}\n`);
    return 0;
  }
  if (values.task !== undefined) {
    const task = values.task;
    if (!store.read(batchId)!.children.some((c) => c.task_id === task))
      throw badInput('usage', `lanes log: batch "${batchId}" has no child "${task}"`);
    for (const e of entries) if (e.task === task) ctx.stdout(`${formatEntry(e)}\n`);
    printTranscripts(ctx, join(store.paths(batchId).logsDir, task));
    return 0;
  }
  for (const e of entries) ctx.stdout(`${formatEntry(e)}\n`);
  if (unreadable) ctx.stderr(`lanes: ${unreadable} journal line(s) could not be read\n`);
  if (!values.follow) return 0;
  // Follow: print what is appended until the batch ends (or the user interrupts).
  let offset = (readStateFile(repo.stateDir, path) ?? '').length;
  await new Promise<void>((resolve) => {
    const poll = () => {
      const text = readStateFile(repo.stateDir, path) ?? '';
      const complete = text.lastIndexOf('\n') + 1;
      if (complete > offset) {
        for (const e of parseJournal(text.slice(offset, complete)).entries) ctx.stdout(`${formatEntry(e)}\n`);
        offset = complete;
      }
      // (budget_stopped is a stop, not an end, but as before nothing moves there without a human)
      const state = store.read(batchId)!.batch_state;
      if (TERMINAL_BATCH_STATES.has(state) || state === 'budget_stopped') finish();
    };
    const watcher = watch(store.paths(batchId).journal, () => poll());
    const timer = setInterval(poll, 1000);
    const finish = () => {
      watcher.close();
      clearInterval(timer);
      process.off('SIGINT', finish);
      resolve();
    };
    process.once('SIGINT', finish);
    poll();
  });
  return 0;
}
