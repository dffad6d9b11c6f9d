import { watch } from 'node:fs';
import { badInput } from '../../core/errors.js';
import { TERMINAL_BATCH_STATES } from '../../core/record.js';
import { BatchStore } from '../../store/batch-store.js';
import { Journal, parseJournal } from '../../store/journal.js';
import type { JournalEntry } from '../../store/journal.js';
import { readStateFile } from '../../store/safe-fs.js';
import { findRepo } from '../../store/state-dir.js';
import { batchIdArg, parseCommand } from '../args.js';
import type { CommandContext } from '../context.js';
import { dim } from '../style.js';
import { defaultBatch } from './resume.js';

function formatEntry(e: JournalEntry): string {
  const { ts, batch: _batch, event, task, ...rest } = e;
  const fields = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${dim(ts)} ${event}${task ? ` ${task}` : ''}${fields ? ` ${dim(fields)}` : ''}`;
}

/** `lanes log [<batch>] [--follow] [--json]` */
export async function logCommand(ctx: CommandContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(
    'log',
    argv,
    { follow: { type: 'boolean', short: 'f' }, json: { type: 'boolean' } },
    1,
  );
  if (values.follow && values.json)
    throw badInput('usage', 'lanes log: --json prints one document and cannot --follow');
  const repo = await findRepo(ctx.cwd);
  const store = new BatchStore(repo.stateDir);
  const batchId =
    batchIdArg('log', positionals[0]) ??
    (store.list().length === 1 ? store.list()[0]! : defaultBatch(store, 'log'));
  if (store.read(batchId) === null) throw badInput('state_missing', `no batch named "${batchId}"`);
  const path = store.paths(batchId).journal;
  const journal = new Journal(repo.stateDir, path, batchId);
  const { entries, unreadable } = journal.read();
  if (values.json) {
    ctx.stdout(`${JSON.stringify({ entries, unreadable })}\n`);
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
