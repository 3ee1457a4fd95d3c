/** User aliases: a name that routes to an ordered list of provider/model targets. */
import type BetterSqlite3 from 'better-sqlite3';
import { changeConfig } from './config-version.ts';
import { StorageError, type Database } from './db.ts';

export const ROUTING_STRATEGIES = ['priority', 'cheapest', 'fastest'] as const;
export type RoutingStrategy = (typeof ROUTING_STRATEGIES)[number];

export interface AliasTarget {
  provider: string;
  model: string;
}

export interface Alias {
  name: string;
  targets: AliasTarget[];
  strategy: RoutingStrategy;
}

export interface AliasRow {
  name: string;
  targets: string;
  strategy: RoutingStrategy;
}

export class AliasesRepo {
  private readonly db: Database;
  private readonly byName: BetterSqlite3.Statement<[string], AliasRow>;
  private readonly all: BetterSqlite3.Statement<[], AliasRow>;

  constructor(db: Database) {
    this.db = db;
    this.byName = db.prepare(`SELECT * FROM aliases WHERE name = ?`);
    this.all = db.prepare(`SELECT * FROM aliases ORDER BY name`);
  }

  /** Creates or replaces the alias. */
  set(name: string, targets: AliasTarget[], strategy: RoutingStrategy = 'priority'): Alias {
    if (typeof name !== 'string' || name.length === 0 || name.trim() !== name) {
      throw new StorageError('invalid_input', 'an alias name is a non-empty name without surrounding spaces');
    }
    if (!ROUTING_STRATEGIES.includes(strategy)) {
      throw new StorageError('invalid_input', `a routing strategy is one of ${ROUTING_STRATEGIES.join(', ')}`);
    }
    const clean = checkTargets(targets);
    changeConfig(this.db, () => {
      this.db
        .prepare(
          `INSERT INTO aliases (name, targets, strategy) VALUES (?, ?, ?)
           ON CONFLICT (name) DO UPDATE SET targets = excluded.targets, strategy = excluded.strategy`,
        )
        .run(name, JSON.stringify(clean), strategy);
    });
    return { name, targets: clean, strategy };
  }

  get(name: string): Alias | null {
    const row = this.byName.get(name);
    return row === undefined ? null : toAlias(row);
  }

  list(): Alias[] {
    return this.all.all().map(toAlias);
  }

  remove(name: string): void {
    changeConfig(this.db, () => {
      const { changes } = this.db.prepare(`DELETE FROM aliases WHERE name = ?`).run(name);
      if (changes === 0) throw new StorageError('alias_not_found', `no alias named "${name}"`);
    });
  }
}

export function checkTargets(targets: unknown): AliasTarget[] {
  const valid =
    Array.isArray(targets) &&
    targets.length > 0 &&
    targets.every(
      (t: unknown) =>
        t !== null &&
        typeof t === 'object' &&
        typeof (t as AliasTarget).provider === 'string' &&
        (t as AliasTarget).provider.length > 0 &&
        typeof (t as AliasTarget).model === 'string' &&
        (t as AliasTarget).model.length > 0,
    );
  if (!valid) throw new StorageError('invalid_input', 'an alias needs at least one provider/model target');
  // Store exactly the two fields, in order: extra properties would otherwise leak into the JSON column.
  return (targets as AliasTarget[]).map((t) => ({ provider: t.provider, model: t.model }));
}

export function toAlias(row: AliasRow): Alias {
  let targets: unknown;
  try {
    targets = JSON.parse(row.targets);
  } catch {
    targets = null;
  }
  if (!Array.isArray(targets)) throw new StorageError('corrupt_row', `alias "${row.name}" has unreadable targets`);
  return { name: row.name, targets: targets as AliasTarget[], strategy: row.strategy };
}
