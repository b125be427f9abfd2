import { readFileSync } from 'node:fs';
import path from 'node:path';

/** The package version, read once; `version` queries and /health answer it. */
export const serviceVersion: string = (
  JSON.parse(readFileSync(path.resolve(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as { version: string }
).version;
