/** Builders of raw SaasFiles / namespace query results, for the tests of the saas packages. */
import type { RawSaasFile, RawSaasNamespace, RawSaasTarget } from '../model.ts';

/** A namespace as the SaasTargetNamespace fragment returns it. */
export function rawNamespace(
  name: string,
  options: {
    cluster?: string;
    app?: string;
    parentApp?: string;
    env?: string;
    envLabels?: Record<string, unknown>;
    envParameters?: Record<string, unknown>;
    labels?: Record<string, unknown>;
    skupper?: boolean;
  } = {},
): RawSaasNamespace {
  const cluster = options.cluster ?? 'c1';
  return {
    name,
    path: `/${cluster}/${name}.yml`,
    labels: options.labels ? JSON.stringify(options.labels) : null,
    delete: null,
    environment: {
      name: options.env ?? 'stage',
      labels: JSON.stringify(options.envLabels ?? { type: options.env ?? 'stage' }),
      parameters: options.envParameters ? JSON.stringify(options.envParameters) : null,
      secretParameters: null,
    },
    app: {
      name: options.app ?? 'app',
      labels: null,
      parentApp: options.parentApp ? { name: options.parentApp } : null,
      selfServiceRoles: [{ name: 'owners' }],
      serviceOwners: null,
      codeComponents: null,
    },
    cluster: {
      name: cluster,
      serverUrl: `https://${cluster}.example.com`,
      internal: null,
      insecureSkipTLSVerify: null,
      labels: null,
      automationToken: null,
      clusterAdminAutomationToken: null,
      disable: null,
      spec: null,
      externalConfiguration: null,
    },
    skupperSite: options.skupper === undefined ? null : { delete: options.skupper ? true : null },
  };
}

export function rawTarget(overrides: Partial<RawSaasTarget> = {}): RawSaasTarget {
  return {
    path: null,
    name: null,
    namespace: null,
    slos: null,
    namespaceSelector: null,
    provider: null,
    ref: 'main',
    promotion: null,
    parameters: null,
    secretParameters: null,
    upstream: null,
    images: null,
    disable: null,
    delete: null,
    ...overrides,
  };
}

export function rawSaasFile(
  name: string,
  targets: RawSaasTarget[],
  overrides: Partial<RawSaasFile> = {},
): RawSaasFile {
  return {
    path: `/services/app/cicd/${name}.yml`,
    name,
    labels: null,
    app: {
      name: 'app',
      parentApp: null,
      selfServiceRoles: [{ name: 'owners' }],
      serviceOwners: null,
      codeComponents: [
        { url: 'https://github.com/org/app', blockedVersions: null, hotfixVersions: null },
      ],
    },
    pipelinesProvider: { name: 'tekton', provider: 'tekton' } as RawSaasFile['pipelinesProvider'],
    deployResources: null,
    slack: null,
    managedResourceTypes: ['Deployment'],
    managedResourceNames: null,
    takeover: null,
    deprecated: null,
    compare: null,
    timeout: null,
    skipSuccessfulDeployNotifications: null,
    publishJobLogs: null,
    clusterAdmin: null,
    imagePatterns: ['quay.io/org/app'],
    allowedSecretParameterPaths: null,
    use_channel_in_image_tag: null,
    authentication: null,
    parameters: null,
    secretParameters: null,
    validateTargetsInApp: null,
    validatePlannedData: null,
    resourceTemplates: [
      {
        name: 'rt',
        url: 'https://github.com/org/app',
        path: '/openshift/template.yaml',
        provider: null,
        hash_length: null,
        parameters: null,
        secretParameters: null,
        targets,
      },
    ],
    selfServiceRoles: null,
    ...overrides,
  };
}

/** An SLO document without namespaces and one availability SLO (`expr` and `SLOTarget` given). */
export function rawSloDocument(name: string, expr = 'up', target = 0.99) {
  return {
    name,
    namespaces: [],
    slos: [
      {
        name: 'availability',
        expr,
        SLIType: 'availability',
        SLOParameters: { window: '28d' },
        SLOTarget: target,
        SLOTargetUnit: 'percent_0_1',
      },
    ],
  };
}
