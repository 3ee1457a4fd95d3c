/**
 * Provider secrets in team mode. Several servers share one database, so a secret can come only from
 * each server's own environment (`--key-env VAR`, read on every request); the OS keychain belongs to
 * one person's laptop and is refused with a message that says what to do instead.
 */
import type { SecretStore } from './secret-store.ts';

export const TEAM_KEYCHAIN_MESSAGE =
  'team mode (--database/--redis) keeps no provider secret in the database and cannot use the OS keychain, which belongs to one laptop: ' +
  'give the provider `--key-env VAR` and set VAR in the environment of every gateway server.';

export class TeamKeychainRefused extends Error {
  readonly code = 'keychain_refused_in_team_mode';

  constructor() {
    super(TEAM_KEYCHAIN_MESSAGE);
    this.name = 'TeamKeychainRefused';
  }
}

/** The secret store a team server uses: none (a keychain provider gets "no key" and fails over). */
export const refuseKeychainInTeamMode = (): Promise<SecretStore | null> => Promise.resolve(null);
