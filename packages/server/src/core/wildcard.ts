/**
 * Name patterns where `*` matches any run of characters (and nothing else is special), as previews' name mappings,
 * journeys' jurisdiction maps and policies' namespaces take them. Each `*` is a capture group, so that a mapping
 * can carry what it matched over to its target. Compiled once per pattern: patterns come from a request or a
 * registry, a handful at a time (the cache is cleared past 10,000, a guard against a caller feeding it anything).
 */
const compiled = new Map<string, RegExp>();

/** The anchored regular expression of `pattern`: each `*` a lazy group `(.*?)`, everything else literal. */
export function wildcard(pattern: string): RegExp {
  let regex = compiled.get(pattern);
  if (regex === undefined) {
    const parts = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
    regex = new RegExp(`^${parts.join('(.*?)')}$`, 's');
    if (compiled.size > 10_000) compiled.clear();
    compiled.set(pattern, regex);
  }
  return regex;
}
