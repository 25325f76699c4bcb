import { QontractError } from '@qontract/core';
import { dhmsToSeconds, saasFileEnvCombo } from '@qontract/saas';

/** A saas file's `timeout` under an hour (the original's `TektonTimeoutBadValueError`). */
class TektonTimeoutBadValueError extends QontractError {}

/** Shorter runs would be cut while the deploy still waits for its rollouts. */
const MIN_TIMEOUT_SECONDS = 3600;

export interface PipelineRunInput {
  readonly saasFileName: string;
  readonly envName: string;
  readonly pipelineName: string;
  readonly timeout: string | null;
  readonly consoleUrl: string;
  readonly namespace: string;
  readonly integration: string;
  readonly includeTriggerTrace: boolean;
  readonly reason: string | null;
  readonly targetRef: string;
}

export interface PipelineRun {
  readonly body: Record<string, unknown>;
  /** `generateName` without its trailing `-`: the name the create line shows. */
  readonly name: string;
  /** The uncut `<saas file>-<env>`, lowercased: one PipelineRun per run for it. */
  readonly dedupeKey: string;
}

/**
 * The PipelineRun that runs `openshift-saas-deploy --saas-file-name X
 * --env-name Y` in the saas file's Pipeline, as the original's
 * `_construct_tekton_trigger_resource` builds it: its names, labels,
 * annotations and params are what the deploy job and the cleaner read.
 */
export function tektonTriggerResource(input: PipelineRunInput): PipelineRun {
  const combo = saasFileEnvCombo(input.saasFileName, input.envName);
  const name = combo.short.toLowerCase();
  const params: { name: string; value: string }[] = [
    { name: 'saas_file_name', value: input.saasFileName },
    { name: 'env_name', value: input.envName },
    { name: 'tkn_cluster_console_url', value: input.consoleUrl },
    { name: 'tkn_namespace_name', value: input.namespace },
  ];
  if (input.includeTriggerTrace) {
    if (!input.reason) {
      throw new QontractError('reason must be provided if include_trigger_trace is True');
    }
    params.push(
      { name: 'trigger_integration', value: input.integration },
      { name: 'trigger_reason', value: input.reason },
    );
  }
  const spec: Record<string, unknown> = {
    pipelineRef: { name: input.pipelineName },
    params,
  };
  if (input.timeout) {
    if (dhmsToSeconds(input.timeout) < MIN_TIMEOUT_SECONDS) {
      throw new TektonTimeoutBadValueError(
        `[${input.saasFileName}/${input.envName}] timeout ${input.timeout} is smaller than 60 minutes`,
      );
    }
    // `pipeline: 0` lifts Tekton's default limit of the whole run; the tasks get the saas file's.
    spec.timeouts = { pipeline: '0', tasks: input.timeout };
  }
  return {
    body: {
      apiVersion: 'tekton.dev/v1',
      kind: 'PipelineRun',
      metadata: {
        generateName: `${name}-`,
        annotations: {
          'qontract.trigger_integration': input.integration,
          'qontract.trigger_reason': input.reason ?? '',
        },
        labels: {
          'qontract.saas_file_name': input.saasFileName,
          'qontract.env_name': input.envName,
          'qontract.target_ref': input.targetRef,
        },
      },
      spec,
    },
    name,
    dedupeKey: combo.long.toLowerCase(),
  };
}
