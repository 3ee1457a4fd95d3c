/**
 * The core's public entry point (the package's `exports["."]`): what front ends outside the core,
 * the tray first, may use. Everything here loads without a native module, so it runs inside
 * Electron's main process; the rest of the core stays internal.
 */
export { dataPaths, ensureDataHome, resolveDataHome } from './home.ts';
export type { DataPaths } from './home.ts';
export { clearServerState, processAlive, readServerState } from './server-state.ts';
export type { ServerState } from './server-state.ts';
export { adminError, fetchSnapshot } from './admin/admin-client.ts';
export type { AdminEndpoint, AdminSnapshot, CallJson, KeySummary, ProviderSummary } from './admin/admin-client.ts';
export { money, until } from './display-format.ts';
