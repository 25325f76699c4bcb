import {
  ErrorRegistry,
  errorMessage,
  executeActions,
  QontractError,
  type RunContext,
} from '@qontract/core';
import type { ActionResult } from '@qontract/openshift';
import { type SaasFile, saasFileEnvCombo, tektonPipelineName } from '@qontract/saas';
import { LogLevel, type Logger as SlackLogger, WebClient } from '@slack/web-api';
import { QONTRACT_INTEGRATION } from './constants.ts';

/** Where Slack's Web API is (`SLACK_API_URL`, then the original's `GOV_SLACK`, else Slack's own). */
function slackApiUrl(vars: Readonly<Record<string, string | undefined>>): string | undefined {
  if (vars.SLACK_API_URL) return vars.SLACK_API_URL;
  return vars.GOV_SLACK?.toLowerCase() === 'true' ? 'https://slack-gov.com/api/' : undefined;
}

/** What a run was told about its trigger and links (the CLI options of the deploy). */
export interface NotifyOptions {
  readonly saasFileName?: string | undefined;
  readonly envName?: string | undefined;
  readonly triggerIntegration?: string | undefined;
  readonly triggerReason?: string | undefined;
  readonly grafanaSaasDeployUrl?: string | undefined;
  readonly pipelinerunName?: string | undefined;
}

type DeployState = 'in-progress' | 'success' | 'failure';

const HEADLINE: Readonly<Record<DeployState, string>> = {
  'in-progress': ':yellow_jenkins_circle: *SaaS deploy: In Progress*',
  success: ':green_jenkins_circle: *SaaS deploy: Success*',
  failure: ':red_jenkins_circle: *SaaS deploy: Failure*',
};

/** The text of a deploy's start or end message, as the original's `slack_notify` writes it. */
function deployMessage(m: {
  readonly state: DeployState;
  readonly saasFileName: string;
  readonly envName: string;
  readonly consoleUrl: string;
  readonly grafanaLogsUrl?: string | undefined;
  readonly triggerIntegration?: string | undefined;
  readonly triggerReason?: string | undefined;
  readonly skipSuccessful: boolean;
}): string {
  const lines = [
    HEADLINE[m.state],
    `*SaaS File:* \`${m.saasFileName}\``,
    `*Deployment to environment:* \`${m.envName}\``,
  ];
  if (m.triggerIntegration) lines.push(`*Triggered by:* ${m.triggerIntegration}`);
  if (m.triggerReason) lines.push(`*Reason:* ${m.triggerReason}`);
  lines.push(
    `<${m.consoleUrl}|PipelineRun>${m.grafanaLogsUrl ? ` | <${m.grafanaLogsUrl}|Logs>` : ''}`,
  );
  // The owners asked for no success notice: say so when the deploy starts.
  if (m.state === 'in-progress' && m.skipSuccessful)
    lines.push('There will not be a notice for success.');
  return lines.join('\n');
}

/** Python's `urlencode` of one value (quote_plus: `~` kept, `!'()*` escaped, space as `+`). */
function quotePlus(value: string): string {
  return encodeURIComponent(value)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

/** The PipelineRun list of the saas file's pipeline in the OpenShift console, and the Grafana logs link. */
function deployLinks(
  saasFile: SaasFile,
  envName: string,
  o: Pick<NotifyOptions, 'grafanaSaasDeployUrl' | 'pipelinerunName'>,
): { readonly consoleUrl: string; readonly grafanaLogsUrl?: string } {
  const provider = saasFile.pipelinesProvider;
  if (provider.provider !== 'tekton') {
    throw new QontractError(
      `saas file ${saasFile.name}: unsupported pipelines provider ${provider.name} (${provider.provider}) for Slack notifications`,
    );
  }
  const template = (provider.pipelineTemplates ?? provider.defaults.pipelineTemplates)
    .openshiftSaasDeploy.name;
  const pipeline = tektonPipelineName(template, saasFile.name);
  const ns = provider.namespace;
  const consoleUrl = `${ns.cluster.consoleUrl}/k8s/ns/${ns.name}/tekton.dev~v1~Pipeline/${pipeline}/Runs?name=${saasFileEnvCombo(saasFile.name, envName).short}`;
  const grafana = (o.grafanaSaasDeployUrl ?? '').trim();
  if (!grafana) return { consoleUrl };
  const params: Array<[string, string]> = [
    ['var-cluster', ns.cluster.name],
    ['var-namespace', ns.name],
    ['var-pipeline', pipeline],
  ];
  if (o.pipelinerunName) params.push(['var-pipelinerun', o.pipelinerunName]);
  const query = params.map(([k, v]) => `${quotePlus(k)}=${quotePlus(v)}`).join('&');
  return { consoleUrl, grafanaLogsUrl: `${grafana.replace(/\/+$/, '')}?${query}` };
}

/** A message to post, as an action of the run. */
interface SlackPost {
  readonly what: string;
  readonly text: string;
}

/**
 * The Slack notifications of one deploy (a single saas file with `slack`,
 * not in dry-run): the start message, the events, the result message.
 */
export interface DeployNotifier {
  start(): Promise<void>;
  /** `output: events`: a line per object the deploy wrote, `[cluster] Kind name applied|deleted`. */
  events(results: readonly ActionResult[]): Promise<void>;
  finish(success: boolean): Promise<void>;
  /**
   * Registers the failed posts on the run: after the deploy has published its
   * promotions, so that a Slack outage never turns a deploy into a failed one
   * for its subscribers (the run still exits 1, as the original's).
   */
  registerFailures(): void;
}

/**
 * The deploy's Slack client as the original's `slackapi_from_slack_workspace`
 * makes it: the workspace's integration entry named `openshift-saas-deploy`
 * gives the token (from Vault), the icon and the user name; the saas file's
 * `slack.channel` wins over the entry's channel. Undefined when the run sends
 * nothing (dry-run, several saas files, no `slack`).
 */
export async function deployNotifier(
  ctx: RunContext,
  saasFiles: readonly SaasFile[],
  o: NotifyOptions,
): Promise<DeployNotifier | undefined> {
  const saasFile = saasFiles[0];
  const slack = saasFile?.slack;
  if (ctx.dryRun || saasFiles.length !== 1 || !saasFile || !slack) return undefined;
  if (!o.saasFileName || !o.envName) {
    throw new QontractError(
      'saas_file_name and env_name must be provided when using slack notifications',
    );
  }
  const envName = o.envName;
  const entries = (slack.workspace.integrations ?? []).filter(
    (i) => i.name === QONTRACT_INTEGRATION,
  );
  if (entries.length !== 1) {
    throw new QontractError(
      `saas file ${saasFile.name}: Slack workspace ${slack.workspace.name} must have exactly one integrations entry named ${QONTRACT_INTEGRATION} (found ${entries.length})`,
    );
  }
  const entry = entries[0]!;
  const links = deployLinks(saasFile, envName, o);
  const token = await ctx.secrets.read(entry.token);
  const channel = slack.channel || entry.channel;
  const apiUrl = slackApiUrl(ctx.env.vars);
  const client = new WebClient(token, {
    ...(apiUrl ? { slackApiUrl: apiUrl } : {}),
    // The original's client: 30 s per request, 5 retries (429 after Retry-After, 5xx).
    timeout: 30_000,
    retryConfig: { retries: 5, factor: 2, minTimeout: 500, maxTimeout: 5_000 },
    logger: slackLogger(ctx),
    logLevel: LogLevel.WARN,
  });
  const skipSuccessful = saasFile.skipSuccessfulDeployNotifications ?? false;
  // Failures wait here until `registerFailures` (see there).
  const failures = new ErrorRegistry();
  const run = {
    dryRun: ctx.dryRun,
    log: ctx.log,
    errors: failures,
    report: ctx.report,
    signal: ctx.signal,
  };
  const post = (posts: readonly SlackPost[]) =>
    executeActions(
      run,
      posts,
      {
        name: () => 'slack_post_message',
        sideEffect: true,
        describe: (p) => `[slack ${channel}] posting ${p.what}`,
        destructive: () => false,
        execute: (p) =>
          client.chat.postMessage({
            channel,
            text: p.text,
            icon_emoji: entry.icon_emoji,
            username: entry.username,
          }),
        failure: (p, e) => ({
          scope: 'slack',
          message: `[slack ${channel}] posting ${p.what} failed: ${errorMessage(e)}`,
        }),
      },
      // One at a time: the channel reads them in the order of the deploy.
      { concurrency: 1 },
    ).then(() => undefined);
  const message = (state: DeployState) =>
    deployMessage({
      state,
      saasFileName: saasFile.name,
      envName,
      ...links,
      triggerIntegration: o.triggerIntegration,
      triggerReason: o.triggerReason,
      skipSuccessful,
    });
  return {
    start: async () => {
      if (slack.notifications?.start)
        await post([{ what: 'the start notification', text: message('in-progress') }]);
    },
    events: async (results) => {
      if (slack.output !== 'events') return;
      const lines = results
        .filter((r) => r.outcome === 'done')
        .map(
          (r) =>
            `[${r.action.cluster}] ${r.action.kind} ${r.action.name} ${r.action.action === 'apply' ? 'applied' : 'deleted'}`,
        );
      await post(lines.map((text) => ({ what: 'an event', text })));
    },
    finish: async (success) => {
      if (success && skipSuccessful) {
        ctx.log.info(
          `Skipping Slack notification for ${saasFile.name} to ${envName} because deploy was successful.`,
        );
        return;
      }
      await post([
        { what: 'the result notification', text: message(success ? 'success' : 'failure') },
      ]);
    },
    registerFailures: () => {
      for (const e of failures.errors) ctx.errors.register(e.scope, e.message);
    },
  };
}

/** @slack/web-api's own lines (retries, rate limits) in the run's log, redacted as every line. */
function slackLogger(ctx: RunContext): SlackLogger {
  let level = LogLevel.WARN;
  return {
    debug: (...m) => ctx.log.debug(`slack: ${m.join(' ')}`),
    info: (...m) => ctx.log.debug(`slack: ${m.join(' ')}`),
    warn: (...m) => ctx.log.warn(`slack: ${m.join(' ')}`),
    error: (...m) => ctx.log.error(`slack: ${m.join(' ')}`),
    setLevel: (l) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => {},
  };
}
