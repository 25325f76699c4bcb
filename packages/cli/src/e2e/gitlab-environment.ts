import type { ExampleEnvironment } from '@qontract/testing';
import { type FakeGitlab, startFakeGitlab } from '@qontract/testing/fake-gitlab';
import { type FakePagerDuty, startFakePagerDuty } from '@qontract/testing/fake-pagerduty';
import { afterEach } from 'vitest';
import {
  type CliRun,
  rewriteAppInterface,
  runQontractReconcile,
  useExampleEnvironment,
} from './harness.ts';

/** The example instance's URL in `examples/app-interface` (gitlab.yml and the code components). */
export const EXAMPLE_GITLAB_URL = 'https://127.0.0.1:16460';
/** The example tokens of `examples/config.toml` (`[gitlab.gitlab]`, `[pagerduty.example]`). */
export const GITLAB_TOKEN = 'glpat-example-token-not-real';
const PAGERDUTY_TOKEN = 'pd-example-token-not-real';
/** The example PagerDuty target's schedule (`example-primary-oncall.yml`). */
export const EXAMPLE_SCHEDULE = 'PEXMPL1';

export interface GitlabEnvironment {
  readonly env: ExampleEnvironment;
  readonly gitlab: FakeGitlab;
  readonly pagerduty: FakePagerDuty;
  /** Runs `qontract-reconcile [--dry-run] [--plan-out FILE] <integration>` against the fakes. */
  run(integration: string, options?: { dryRun?: boolean; planOut?: string }): Promise<CliRun>;
}

/**
 * The example environment with a fake GitLab and a fake PagerDuty: the
 * environment's copy of app-interface points at the fake GitLab (instance
 * `url` and the code components on it), and every run passes
 * `PAGERDUTY_API_URL`. The fakes are empty; tests seed them. Everything
 * started by a test is closed when it ends.
 */
export function useGitlabEnvironment(): () => Promise<GitlabEnvironment> {
  const start = useExampleEnvironment();
  const fakes: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(fakes.splice(0).map((f) => f.close()));
  });
  return async () => {
    const [env, gitlab, pagerduty] = await Promise.all([
      start(),
      startFakeGitlab({ token: GITLAB_TOKEN, tls: true }),
      startFakePagerDuty({ token: PAGERDUTY_TOKEN }),
    ]);
    fakes.push(gitlab, pagerduty);
    await rewriteAppInterface(env.appInterfaceDir, { [EXAMPLE_GITLAB_URL]: gitlab.url });
    return {
      env,
      gitlab,
      pagerduty,
      run: (integration, { dryRun = false, planOut } = {}) =>
        runQontractReconcile(
          [
            '--config',
            env.configPath,
            ...(dryRun ? ['--dry-run'] : []),
            ...(planOut ? ['--plan-out', planOut] : []),
            integration,
          ],
          { PAGERDUTY_API_URL: pagerduty.url },
        ),
    };
  };
}
