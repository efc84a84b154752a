import type { ConfigWarning } from './config.js';
import type { Env } from './env-reader.js';
import { CONFIG_VARIABLES, isKnownVariable } from './variables.js';

/** What {@link findUnknownVariables} found. */
export interface UnknownVariables {
  /** Set `MEMQL_*` names that no setting reads, sorted. */
  readonly names: string[];
  /** One warning per name, suggesting the closest known name when one is near. */
  readonly warnings: ConfigWarning[];
}

// Edits allowed between a typo and the name it suggests: enough for a dropped
// letter or a swapped pair, not so many that unrelated names match.
const MAX_SUGGESTION_DISTANCE = 3;

/**
 * Finds `MEMQL_*` variables that nothing reads. A misspelt setting would
 * otherwise be silently ignored and its default used; this is reported, not
 * fatal, so that a newer manifest can run an older binary.
 */
export function findUnknownVariables(env: Env): UnknownVariables {
  const names = Object.keys(env)
    .filter(
      (name) => name.startsWith('MEMQL_') && env[name] !== undefined && !isKnownVariable(name),
    )
    .sort();
  const warnings = names.map((variable) => {
    const near = closestKnownName(variable);
    const hint = near === null ? '' : `; did you mean ${near}?`;
    return { variable, message: `${variable} is not a known setting and is ignored${hint}` };
  });
  return { names, warnings };
}

/** The known name nearest to `name` by edit distance, if near enough. */
function closestKnownName(name: string): string | null {
  let best: string | null = null;
  let bestDistance = MAX_SUGGESTION_DISTANCE + 1;
  for (const variable of CONFIG_VARIABLES) {
    const distance = editDistance(name, variable.name);
    if (distance < bestDistance) {
      best = variable.name;
      bestDistance = distance;
    }
  }
  return best;
}

/** Levenshtein distance between two strings. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
