import type { PlanChild } from './plan.js';
import { scopesOverlap } from './scope.js';

// Waves for display (`plan check`, the confirmation screen): level by level over
// blocked_by, each level split so that no two children in a wave have overlapping scopes
// and no wave holds more than maxParallel children. The live scheduler decides from the
// record instead; this is the forecast a user reads before confirming.

type WaveChild = Pick<PlanChild, 'id' | 'blocked_by' | 'scope'>;

/** Depth of each child: 0 without dependencies, else 1 + the deepest dependency. */
export function dependencyLevels(children: readonly WaveChild[]): Map<string, number> {
  const byId = new Map(children.map((c) => [c.id, c]));
  const levels = new Map<string, number>();
  const levelOf = (id: string, path: Set<string>): number => {
    const known = levels.get(id);
    if (known !== undefined) return known;
    if (path.has(id)) throw new Error(`dependency cycle through ${id}`); // plans are checked before
    path.add(id);
    const deps = byId.get(id)?.blocked_by ?? [];
    const level = deps.length === 0 ? 0 : 1 + Math.max(...deps.map((d) => levelOf(d, path)));
    path.delete(id);
    levels.set(id, level);
    return level;
  };
  for (const child of children) levelOf(child.id, new Set());
  return levels;
}

export function computeWaves<C extends WaveChild>(children: readonly C[], maxParallel: number): C[][] {
  const levels = dependencyLevels(children);
  const depth = Math.max(0, ...levels.values());
  const waves: C[][] = [];
  for (let level = 0; level <= depth; level++) {
    const levelWaves: C[][] = [];
    for (const child of children) {
      if (levels.get(child.id) !== level) continue;
      const fit = levelWaves.find(
        (wave) =>
          wave.length < maxParallel && wave.every((other) => !scopesOverlap(other.scope, child.scope)),
      );
      if (fit) fit.push(child);
      else levelWaves.push([child]);
    }
    waves.push(...levelWaves);
  }
  return waves;
}
