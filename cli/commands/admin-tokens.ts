/**
 * `gateway admin-tokens ...`: admin tokens per person, for a gateway several people administer. Each
 * token is printed once (alone on stdout) and stored hashed in the shared state, so every instance on
 * the same store honours it; the admin API's log lines name the person. The data home's `admin-token`
 * file keeps working beside them.
 */
import type { Command } from 'commander';
import type { AdminTokenInfo } from '../../core/storage/admin-tokens.ts';
import { usageError } from '../cli-error.ts';
import { note, out, printJson, table, withStore } from '../context.ts';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
function checkName(name: string): string {
  if (!NAME.test(name)) throw usageError(`admin token name "${name}" must be 1-64 letters, digits, ".", "_", "@" or "-"`);
  return name;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
const tokenJson = (t: AdminTokenInfo) => ({ name: t.name, prefix: t.prefix, created_at: iso(t.createdAt), revoked_at: iso(t.revokedAt) });

export function registerAdminTokens(program: Command): void {
  const cmd = program.command('admin-tokens').description('admin tokens per person (for a shared gateway): create, list, revoke');

  cmd
    .command('create')
    .description('issue an admin token for a person (printed once, alone on stdout)')
    .requiredOption('--name <name>', "the person's name, as admin log lines will show it")
    .action(async (opts: { name: string }) => {
      const name = checkName(opts.name);
      await withStore(async (store) => {
        const { secret } = await store.adminTokens.create(name);
        out(secret);
        note(`Admin token for "${name}" (shown once; only its hash is stored in ${store.location}). Use it as \`Authorization: Bearer <token>\` on /admin/*.`);
      });
    });

  cmd
    .command('list')
    .description('list admin tokens (names and prefixes, never the tokens)')
    .option('--all', 'include revoked tokens')
    .option('--json', 'print JSON')
    .action(async (opts: { all?: boolean; json?: boolean }) => {
      await withStore(async (store) => {
        const list = await store.adminTokens.list({ includeRevoked: opts.all === true });
        if (opts.json) return printJson(list.map(tokenJson));
        if (list.length === 0) return note("No admin tokens: `gateway admin-tokens create --name NAME`. The data home's admin-token file always works.");
        table(
          ['name', 'prefix', 'created', 'revoked'],
          list.map((t) => [t.name, `${t.prefix}…`, iso(t.createdAt), iso(t.revokedAt)]),
        );
      });
    });

  cmd
    .command('revoke <name>')
    .description("revoke a person's admin token (every instance refuses it at once)")
    .action(async (name: string) => {
      await withStore(async (store) => {
        await store.adminTokens.revoke(name);
        note(`Revoked the admin token of "${name}".`);
      });
    });
}
