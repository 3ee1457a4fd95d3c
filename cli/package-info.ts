/**
 * The package's own package.json: beside `cli/` in the checkout, two levels up from `dist/cli/` and from the
 * bundles (`.start-bundle/<build>/` in the checkout, `dist/start/` in the package). Read once, for `--version`
 * and the messages that name the package.
 */
import { readFileSync } from 'node:fs';

const PACKAGE_NAME = 'gateway-local';

const CANDIDATES = ['../package.json', '../../package.json'];

export function packageVersion(): string {
  for (const rel of CANDIDATES) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === PACKAGE_NAME && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not at this level: try the next
    }
  }
  return 'unknown';
}
