import type { Plan } from './plan.js';
import { scopeMatcher, scopesOverlap } from './scope.js';

// What a plan needs to run well beyond being valid (issue 27, `lanes plan draft`): checks
// that can fail and name files that will be there, and scopes that let some work run side
// by side. One line per problem, naming the child, as `plan check`'s are.

/** Checks that prove nothing: they pass whatever the lane holds. */
const TRIVIAL = /^\s*(true|:|exit 0|echo\b[^|;&]*)\s*$/;

/** Words of a check that read as a repository file (`src/a.ts`, `docs/x.md`). */
function pathsNamed(run: string | readonly string[]): string[] {
  const words = typeof run === 'string' ? run.split(/[\s'"`;|&()<>]+/) : run.slice(1);
  return words.filter((w) => /^[\w.-]+(\/[\w.-]+)*\.[A-Za-z0-9]+$/.test(w) && !w.startsWith('-'));
}

export function planAdvice(plan: Plan, exists: (path: string) => boolean): string[] {
  const problems: string[] = [];
  plan.children.forEach((child, i) => {
    const trivial = child.acceptance.every((c) => typeof c.run === 'string' && TRIVIAL.test(c.run));
    if (trivial)
      problems.push(
        `children[${i}].acceptance: no check of child "${child.id}" can fail (each passes whatever the lane holds)`,
      );
    child.acceptance.forEach((check, j) => {
      for (const path of pathsNamed(check.run)) {
        const made = plan.children.some((c) => scopeMatcher(c.scope)(path));
        if (!made && !exists(path))
          problems.push(
            `children[${i}].acceptance[${j}]: check "${check.id}" of child "${child.id}" names ${path}, which is not in the repository and no child's scope creates it`,
          );
      }
    });
  });
  const free = plan.children.filter((c) => c.blocked_by.length === 0);
  const apart = plan.children.some((a, i) =>
    plan.children.some(
      (b, j) =>
        j > i &&
        !a.blocked_by.includes(b.id) &&
        !b.blocked_by.includes(a.id) &&
        !scopesOverlap(a.scope, b.scope),
    ),
  );
  if (plan.children.length > 1 && free.length > 0 && !apart)
    problems.push(
      'scope: every two children overlap in scope (or depend on each other), so nothing runs side by side; make the scopes disjoint where the work is independent',
    );
  return problems;
}
