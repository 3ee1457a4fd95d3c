import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The tray's sources import the core's public entry by package name; without desktop/node_modules
  // (desktop's own npm install) that name resolves here.
  resolve: { alias: { 'gateway-local': fileURLToPath(new URL('./core/index.ts', import.meta.url)) } },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Two cores: keep parallelism modest so timing-sensitive stream tests stay honest.
    maxWorkers: 2,
  },
});
