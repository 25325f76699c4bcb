/**
 * Kubernetes label syntax as the original's `validate_labels` checks it
 * (https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set):
 * one message per violation, so that a namespace file with several mistakes
 * shows all of them at once.
 */
export const LABEL_MAX_VALUE_LENGTH = 63;
export const LABEL_MAX_KEY_NAME_LENGTH = 63;
export const LABEL_MAX_KEY_PREFIX_LENGTH = 253;

const VALUE_PATTERN = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const KEY_NAME_PATTERN = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const KEY_PREFIX_PATTERN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const RESERVED_PREFIXES = new Set(['kubernetes.io', 'k8s.io']);

/** Messages for every rule `labels` breaks; empty when all labels are valid. */
export function validateLabels(labels: Readonly<Record<string, unknown>>): string[] {
  const errors: string[] = [];
  for (const [key, value] of Object.entries(labels)) {
    if (typeof value !== 'string') {
      // The original crashes on these (len() of a number); a message is kinder.
      errors.push(`Label value of ${key} must be a string, not ${JSON.stringify(value)}`);
    } else {
      if (value.length > LABEL_MAX_VALUE_LENGTH) {
        errors.push(`Label value longer than ${LABEL_MAX_VALUE_LENGTH} chars: ${value}`);
      }
      if (!VALUE_PATTERN.test(value)) {
        errors.push(
          `Label value is invalid, it needs to match '${VALUE_PATTERN.source}': ${value}`,
        );
      }
    }

    let prefix = '';
    let name = key;
    if (key.includes('/')) {
      const parts = key.split('/');
      // Upstream reports only more than two slashes; with two, the part after
      // the second slash is silently ignored (the API server refuses such a key).
      if (parts.length > 3) errors.push(`Only one "/" allowed in label keys: ${key}`);
      prefix = parts[0] ?? '';
      name = parts[1] ?? '';
    }
    if (name.length > LABEL_MAX_KEY_NAME_LENGTH) {
      errors.push(`Label key name is longer than ${LABEL_MAX_KEY_NAME_LENGTH} chars: ${name}`);
    }
    if (!KEY_NAME_PATTERN.test(name)) {
      errors.push(
        `Label key name is invalid, it needs to match '${KEY_NAME_PATTERN.source}': ${name}`,
      );
    }
    if (prefix) {
      if (prefix.length > LABEL_MAX_KEY_PREFIX_LENGTH) {
        errors.push(`Label key prefix longer than ${LABEL_MAX_KEY_PREFIX_LENGTH} chars: ${prefix}`);
      }
      if (!KEY_PREFIX_PATTERN.test(prefix)) {
        errors.push(
          `Label key prefix is invalid, it needs to match '${KEY_PREFIX_PATTERN.source}': ${prefix}`,
        );
      }
      if (RESERVED_PREFIXES.has(prefix)) errors.push(`Label key prefix is reserved: ${prefix}`);
    }
  }
  return errors;
}
