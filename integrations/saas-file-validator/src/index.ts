import { gqlClient } from '@qontract/app-interface';
import { defineIntegration, QontractError } from '@qontract/core';
import { loadSaasFiles } from '@qontract/saas';
import { SaasFileValidatorContextDocument } from './saas-file-validator.generated.ts';
import type { ValidationContext } from './validate.ts';
import { validateSaasFiles } from './validate.ts';

const QONTRACT_INTEGRATION_VERSION = '0.1.0';

/**
 * Checks every saas file of app-interface (namespace selectors resolved,
 * templated target parameters rendered) and registers each violation as an
 * error, so the run exits 1 on any. Reads app-interface only, writes nothing:
 * dry-run makes no difference.
 */
export const saasFileValidator = defineIntegration({
  name: 'saas-file-validator',
  version: QONTRACT_INTEGRATION_VERSION,
  description: 'Validates Saas files.',
  options: {},
  run: async (ctx) => {
    const gql = await ctx.client(gqlClient);
    const [saasFiles, { apps, quayInstances, quayOrgs }] = await Promise.all([
      loadSaasFiles(gql),
      gql.query(SaasFileValidatorContextDocument),
    ]);
    if (saasFiles.length === 0) throw new QontractError('no saas files found');
    const context: ValidationContext = {
      codeComponentUrls: new Set(
        (apps ?? []).flatMap((a) => (a.codeComponents ?? []).map((c) => c.url)),
      ),
      quayInstanceUrls: new Set((quayInstances ?? []).map((i) => i.url)),
      quayOrgs: (quayOrgs ?? []).map((o) => ({ instanceUrl: o.instance.url, name: o.name })),
    };
    const problems = validateSaasFiles(saasFiles, context);
    for (const p of problems) ctx.errors.register(p.scope, p.message);
    ctx.log.info(`${saasFiles.length} saas file(s) checked, ${problems.length} problem(s) found`);
  },
});
