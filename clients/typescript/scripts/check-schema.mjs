// Fails when src/schema.ts is not what the pinned openapi-typescript makes
// from the current http/openapi.json, so the client cannot drift from the
// API. Fix with: npm run generate (and commit src/schema.ts).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = mkdtempSync(join(tmpdir(), 'engram-schema-'));
try {
  const fresh = join(dir, 'schema.ts');
  execFileSync(join(root, 'node_modules', '.bin', 'openapi-typescript'), [join(root, '..', '..', 'http', 'openapi.json'), '-o', fresh], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const want = readFileSync(fresh, 'utf8');
  const got = readFileSync(join(root, 'src', 'schema.ts'), 'utf8');
  if (got !== want) {
    const a = got.split('\n');
    const b = want.split('\n');
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    console.error(`check-schema: src/schema.ts is not generated from the current http/openapi.json (first difference at line ${i + 1}:\n  committed: ${a[i] ?? '(end)'}\n  generated: ${b[i] ?? '(end)'})\nRun: npm run generate`);
    process.exit(1);
  }
  console.log('check-schema: src/schema.ts matches http/openapi.json');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
