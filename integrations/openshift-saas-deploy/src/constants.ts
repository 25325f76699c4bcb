/** The original's module constants: the `qontract.integration` annotation and its version. */
export const QONTRACT_INTEGRATION = 'openshift-saas-deploy';
export const QONTRACT_INTEGRATION_VERSION = '0.1.0';
