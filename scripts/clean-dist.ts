// `npm run build` starts from an empty dist/, so a file deleted from the sources never ships.
import { rmSync } from 'node:fs';

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
