export const openTeamState = (..._a: unknown[]): never => { throw new Error('not yet'); };
