import { z } from 'zod';

/** Batch and child ids (DESIGN §1): safe as a path segment and a branch component. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** A full commit id (SHA-1 or SHA-256), as the state files hold them. */
export const shaSchema = z
  .string()
  .regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/, { message: 'must be a full commit id' });
/** An id in a state file (the pattern only: what lanes wrote is checked again by the plan). */
export const storedIdSchema = z.string().regex(ID_PATTERN, { message: 'must be a valid id' });

export const idSchema = z
  .string()
  .regex(ID_PATTERN, { message: 'must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$' })
  // "." and ".." segments are allowed by the pattern's tail but "a..b" would make a bad ref.
  .refine((id) => !id.includes('..') && !id.endsWith('.lock') && !id.endsWith('.'), {
    message: 'must not contain "..", nor end in "." or ".lock" (it names a git branch)',
  });

export function batchBranch(batchId: string): string {
  return `batch/${batchId}`;
}

export function laneBranch(batchId: string, childId: string): string {
  return `lane/${batchId}/${childId}`;
}

/**
 * A machine's name (lanes.config.json `machines`): it names a tmux session, a folder on the
 * machine and an ssh ControlPath, so it is kept to lower-case letters, digits and dashes.
 */
export const MACHINE_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
export const machineNameSchema = z.string().regex(MACHINE_NAME_PATTERN, {
  message: 'must match ^[a-z0-9][a-z0-9-]{0,62}$ (a tmux and path safe name)',
});

/** The coordinator's own machine, in `machines` and in a provision handoff. */
export const LOCAL_MACHINE = 'local';
