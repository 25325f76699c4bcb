import { runCodegen } from './run-codegen.ts';

/**
 * `node src/codegen/main.ts [--check]`: writes the typed documents of every
 * `.graphql` file. With `--check`, writes nothing and exits 1 when a
 * generated file is missing, stale or orphaned (`codegen:check`).
 */
async function main(argv: readonly string[]): Promise<number> {
  const check = argv.includes('--check');
  const { documents, stale, orphans, failures } = await runCodegen({ check });
  for (const f of failures) console.error(`error: ${f}`);
  if (check) {
    for (const s of stale) console.error(`stale: ${s}`);
    for (const o of orphans) console.error(`orphaned (its .graphql file is gone): ${o}`);
    if (stale.length || orphans.length) {
      console.error('run `npm run codegen -w @qontract/app-interface` and commit the result');
    } else if (!failures.length) {
      console.log(`codegen: ${documents.length} document(s) up to date`);
    }
    return stale.length || orphans.length || failures.length ? 1 : 0;
  }
  for (const s of stale) console.log(`wrote ${s}`);
  for (const o of orphans) console.warn(`orphaned generated file (delete it): ${o}`);
  console.log(`codegen: ${documents.length} document(s), ${stale.length} written`);
  return failures.length ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
