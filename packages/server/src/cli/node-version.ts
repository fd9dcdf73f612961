/**
 * The oldest Node.js Headwater runs on. The Kafka client (`@platformatic/kafka`, loaded by `serve` and `proxy`)
 * declares `>= 20.19.4 || >= 22.18.0 || >= 24.6.0` in its engines, which is >= 20.19.4; every package.json of
 * this repository declares the same (test/cli-help.test.ts checks both).
 */
export const MINIMUM_NODE_VERSION = '20.19.4';

const parts = (version: string): number[] => version.replace(/^v/, '').split('.').map(Number);

/**
 * Why this Node.js is too old for `command`, or undefined when it is not.
 *
 * @example
 * nodeVersionProblem('serve', '20.11.1'); // 'headwater serve needs Node.js 20.19.4 or newer ...'
 */
export function nodeVersionProblem(
  command: string,
  version: string = process.versions.node,
): string | undefined {
  const have = parts(version);
  const need = parts(MINIMUM_NODE_VERSION);
  for (let i = 0; i < need.length; i++) {
    const a = have[i] ?? 0;
    const b = need[i]!;
    if (a > b) return undefined;
    if (a < b) {
      return (
        `headwater ${command} needs Node.js ${MINIMUM_NODE_VERSION} or newer (the Kafka client it loads, ` +
        `@platformatic/kafka, does); this is Node.js ${version.replace(/^v/, '')} (${process.execPath}). ` +
        'Install a newer Node.js (20.19.4 or later 20.x, or 22 or 24 LTS, from https://nodejs.org or your version ' +
        'manager: `nvm install 22`) and run the command again.'
      );
    }
  }
  return undefined;
}
