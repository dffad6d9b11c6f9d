import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { z } from 'zod';
import { ID_PATTERN } from '../core/basics/ids.js';
import { acceptanceCheckSchema } from '../core/plan/plan.js';
import type { CheckRun } from '../core/records/kernel.js';
import type { WorktreeInfo } from '../core/ports/worktree-port.js';
import type { LaneLook, OfferFacts, ReworkOutcome } from '../core/ports/git-port.js';

// What the coordinator (src/machines/link) asks the side script on a machine
// (src/machines/side, `node machine.js op`): one JSON request on stdin, one JSON answer line
// on stdout. The worktree and git ops are the WorktreePort and GitPort methods that take a
// lane path or branch, with the same arguments by name and the same answers (undefined
// becomes null: JSON has no undefined). Every op that changes something is safe to run
// twice: the link runs an op again when its connection dropped before the answer came.

const noNul = (text: string): boolean => !text.includes('\0');
const text = z.string().refine(noNul, { message: 'must not contain a NUL byte' });
/** An absolute path on the machine (what the side writes or runs in is checked against its root). */
const absPath = text.refine((p) => p.startsWith('/'), { message: 'must be an absolute path' });
const name = z.string().regex(ID_PATTERN, { message: 'must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$' });
const sha = z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/, { message: 'must be a full commit id' });
/** A commit, or a ref the cache has (a base may be named by the ref the link pushed). */
const rev = text.refine((r) => r !== '' && !r.startsWith('-'), { message: 'must be a commit or ref' });
const branch = text.refine((b) => b !== '' && !b.startsWith('-') && !b.includes('..'), {
  message: 'must be a branch name',
});
const deliveryIds = z.strictObject({ batch: name, task: name, run: z.string().min(1), base: rev });
/** Environment variables: each name one a shell takes (the side writes `export NAME=…`). */
const envVars = z.record(z.string(), text).superRefine((env, ctx) => {
  for (const key of Object.keys(env))
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key))
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message: 'must be an environment name ([A-Za-z_][A-Za-z0-9_]*)',
      });
});
const command = z.union([text.min(1), z.array(text).min(1)]);

const none = z.strictObject({});
const atPath = z.strictObject({ path: absPath });

/** Each op's arguments. */
export const OP_ARGS = {
  hello: none,
  'wt.list': none,
  'wt.at': atPath,
  'wt.exists': atPath,
  'wt.isClean': atPath,
  'wt.isUnpopulated': atPath,
  'wt.branchTip': z.strictObject({ branch }),
  'wt.onBranch': z.strictObject({ commit: rev, tip: rev }),
  'wt.headOf': atPath,
  'wt.add': z.strictObject({
    path: absPath,
    branch,
    base: rev,
    branchExists: z.boolean(),
    checkout: z.boolean().optional(),
  }),
  'wt.resetKeep': z.strictObject({ path: absPath, base: rev }),
  'wt.deleteBranch': z.strictObject({ path: absPath, branch }),
  'wt.branchAt': atPath,
  'wt.restoreBranch': z.strictObject({ path: absPath, branch, tip: sha }),
  'wt.remove': atPath,
  'wt.lookAtFiles': z.strictObject({ path: absPath, base: rev }),
  'wt.changedAtExit': z.strictObject({ path: absPath, base: rev }),
  'wt.keepWork': z.strictObject({ path: absPath, branch, base: rev }),
  'wt.move': z.strictObject({ path: absPath, to: absPath }),
  'wt.realpath': atPath,
  'git.offerFacts': atPath,
  'git.lookAtLane': z.strictObject({ path: absPath, clean: z.boolean().optional() }),
  'git.changedPaths': z.strictObject({ lanePath: absPath, base: rev }),
  'git.findDelivery': z.strictObject({ lanePath: absPath, branch, ids: deliveryIds }),
  'git.commitDelivery': z.strictObject({
    lanePath: absPath,
    branch,
    paths: z.array(text),
    goal: z.string(),
    ids: deliveryIds,
  }),
  'git.syncLaneIndex': z.strictObject({ lanePath: absPath, commit: sha }),
  'git.reworkLane': z.strictObject({
    lanePath: absPath,
    branch,
    head: rev,
    ids: z.strictObject({ batch: name, task: name, base: rev }),
  }),
  'git.conflictMarkers': z.strictObject({ lanePath: absPath, paths: z.array(text) }),
  /** `logDir`: where the check logs stay on the machine (log_path); without it they come back only. */
  'qa.runChecks': z.strictObject({
    cwd: absPath,
    checks: z.array(acceptanceCheckSchema),
    logDir: absPath.optional(),
  }),
  /** The configured copy_files (read by the link from the coordinator's repository) and setup. */
  'qa.prepare': z.strictObject({
    dir: absPath,
    copy: z.array(
      z.strictObject({
        path: text.refine((p) => p !== '' && !p.startsWith('/') && !p.split('/').includes('..'), {
          message: 'must be a relative path inside the checkout',
        }),
        base64: z.string(),
        mode: z.number().int().nonnegative().optional(),
      }),
    ),
    setup: z.array(command),
  }),
  /**
   * `batch`: the batch the session belongs to (batch.clean ends it); without it, the batch
   * is read from `status` when that is `<root>/runs/<batch>/…`.
   */
  'session.start': z.strictObject({
    name: z.string().min(1),
    cwd: absPath,
    argv: z.array(text).min(1),
    env: envVars.default({}),
    log: absPath,
    status: absPath,
    batch: name.optional(),
  }),
  'session.list': z.strictObject({ prefix: z.string().default('') }),
  'session.kill': z.strictObject({
    name: z.string().min(1),
    signal: z.enum(['SIGTERM', 'SIGKILL', 'SIGINT', 'SIGHUP']).optional(),
  }),
  'file.read': z.strictObject({
    path: absPath,
    offset: z.number().int().nonnegative().default(0),
    max: z
      .number()
      .int()
      .positive()
      .default(1024 * 1024),
  }),
  'file.write': z.strictObject({
    path: absPath,
    base64: z.string(),
    mode: z.number().int().nonnegative().optional(),
  }),
  'batch.clean': z.strictObject({ batch: name }),
} as const;

export type MachineOp = keyof typeof OP_ARGS;
export const MACHINE_OPS = Object.keys(OP_ARGS) as MachineOp[];
export type OpArgs<Op extends MachineOp> = z.input<(typeof OP_ARGS)[Op]>;
/** (After the defaults are filled in: what the side works with.) */
export type ParsedOpArgs<Op extends MachineOp> = z.output<(typeof OP_ARGS)[Op]>;

/** The repository cache's name on the machine: `<basename of the repo>-<12 hex>` (repoId). */
export const repoIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,200}$/, { message: 'must be a repository id (letters, digits, . _ -)' })
  .refine((id) => !id.startsWith('.') && !id.includes('..'), {
    message: 'must not start with "." or hold ".."',
  });

/**
 * The envelope. `root`: where lanes keeps its files on the machine (`~` or `~/…` is the
 * machine user's home; made when missing). `repo`: the repository cache the op works on
 * (`<root>/repos/<repo>.git`), needed by every worktree, git and batch op.
 */
export const requestEnvelopeSchema = z.strictObject({
  op: z.enum(MACHINE_OPS as [MachineOp, ...MachineOp[]]),
  root: text.refine((r) => r.startsWith('/') || r === '~' || r.startsWith('~/'), {
    message: 'must be an absolute path or start with ~/',
  }),
  repo: repoIdSchema.optional(),
  args: z.unknown().default({}),
});

export type MachineRequest = {
  [Op in MachineOp]: { op: Op; root: string; repo?: string; args: OpArgs<Op> };
}[MachineOp];

export interface SessionState {
  name: string;
  running: boolean;
  /** How it ended (from its status file), or null while it runs or when it ended unrecorded. */
  exit: { code: number | null; signal: string | null } | null;
}

export interface HelloValue {
  root: string;
  home: string;
  user: string;
  versions: { git: string | null; node: string; tmux: string | null };
}

/** What each op answers (`value` of an ok answer). */
export interface OpValues {
  hello: HelloValue;
  'wt.list': WorktreeInfo[];
  'wt.at': WorktreeInfo | null;
  'wt.exists': boolean;
  'wt.isClean': boolean;
  'wt.isUnpopulated': boolean;
  'wt.branchTip': string | null;
  'wt.onBranch': boolean;
  'wt.headOf': string | null;
  'wt.add': string | null;
  'wt.resetKeep': boolean;
  'wt.deleteBranch': null;
  'wt.branchAt': string | null;
  'wt.restoreBranch': boolean;
  'wt.remove': string | null;
  'wt.lookAtFiles': { fingerprint: string; changed: string[] };
  'wt.changedAtExit': string[];
  'wt.keepWork': string;
  'wt.move': null;
  'wt.realpath': string | null;
  'git.offerFacts': OfferFacts;
  'git.lookAtLane': LaneLook;
  'git.changedPaths': string[];
  'git.findDelivery': string | null;
  'git.commitDelivery': string;
  'git.syncLaneIndex': null;
  'git.reworkLane': ReworkOutcome;
  'git.conflictMarkers': string[];
  /** `logs`: each check's log text by check id (cut at 1 MiB, as the log file is). */
  'qa.runChecks': { runs: CheckRun[]; logs: Record<string, string> };
  /** `why`: null when the checkout is ready; `logs`: each setup command's log by `setup-<n>`. */
  'qa.prepare': { why: string | null; logs: Record<string, string> };
  'session.start': { name: string };
  'session.list': SessionState[];
  'session.kill': null;
  /** null: no such file (yet). `size`: the whole file's, `base64`: up to `max` bytes from `offset`. */
  'file.read': { base64: string; size: number } | null;
  'file.write': null;
  'batch.clean': { worktrees: string[]; branches: string[]; sessions: string[]; runs: string[] };
}

export type MachineAnswer<T = unknown> =
  { ok: true; value: T } | { ok: false; code: string; message: string };

export const answerSchema = z.union([
  z.strictObject({ ok: z.literal(true), value: z.unknown() }),
  z.strictObject({ ok: z.literal(false), code: z.string(), message: z.string() }),
]);

/** The exit code of `node machine.js op` for a request it could not read. */
export const BAD_REQUEST_EXIT = 2;

/** What tmux allows in a session name (it would change `.` and `:` itself): the rest becomes `_`. */
export function tmuxSafe(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_');
}

/**
 * The tmux session of one attempt of a child: `lanes-<batch>-<child>-<run>-<attempt>`,
 * tmux-safe. The run is in it: a child run again in the same batch on the same machine (its
 * lane made again, a move back) starts at attempt 1 again, and must not meet its old session.
 */
export function sessionName(batch: string, child: string, run: string, attempt: number): string {
  return tmuxSafe(`lanes-${batch}-${child}-${run}-${attempt}`);
}

/** The socket tmux runs lanes' sessions on (`tmux -L lanes`): the user's own server is untouched. */
export const TMUX_SOCKET = 'lanes';

/** Where a lane lives on a machine: `<root>/lanes/<machine>/<repo>/<batch>/<child>`. */
export function machineLanePath(
  root: string,
  machine: string,
  repo: string,
  batch: string,
  child: string,
): string {
  return `${root}/lanes/${machine}/${repo}/${batch}/${child}`;
}

/** The repository cache on a machine (bare): `<root>/repos/<repo>.git`. */
export function machineRepoPath(root: string, repo: string): string {
  return `${root}/repos/${repo}.git`;
}

/** The repository id of the coordinator's repository at `realpath`: `<basename>-<first 12 hex of sha256(realpath)>`. */
export function repoId(realpath: string): string {
  const hash = createHash('sha256').update(realpath).digest('hex').slice(0, 12);
  const base =
    basename(realpath)
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .replace(/^\.+/, '') || 'repo';
  return `${base}-${hash}`;
}
