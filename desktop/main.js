// The tray's entry point for Electron (`npm start` runs `electron .`, which loads this file). Plain
// JavaScript: Electron's Node strips the TypeScript types of src/ the way `node bin/gateway.js` does
// for the CLI, and this file says so plainly when the Electron in use cannot.
if (!process.features.typescript) {
  console.error(`This Electron (Node ${process.versions.node}) cannot run TypeScript sources; use the Electron in desktop/package.json.`);
  process.exit(1);
}
import('./src/main.ts').catch((err) => {
  console.error(err);
  process.exit(1);
});
