/**
 * `node --import ./register.ts desktop/src/main.ts`: resolves `electron` to the fake beside this file,
 * so the tray's main process runs under plain Node in tests (Electron itself is never launched).
 */
import { registerHooks } from 'node:module';

const fake = new URL('./electron.ts', import.meta.url).href;
registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier === 'electron') return { url: fake, format: 'module-typescript', shortCircuit: true };
    return nextResolve(specifier, context);
  },
});
