/**
 * Loading a resource file the way the original does: `anymarkup.parse` hands anything that is not
 * XML or INI to PyYAML `safe_load`, so JSON files are read as YAML 1.1 flow syntax too (`1e3` is a
 * string, tab indentation fails), then openshift-resources drops a top-level `$schema`.
 */
import { readBlockSubset } from '@qontract/pycompat';
import { ResourceDataError } from './errors.ts';
import {
  dictDelete,
  isDict,
  type PyDict,
  type PyObject,
  type PyValue,
  pyTypeName,
} from './py-values.ts';
import { composeSingleDocument } from './yaml/composer.ts';
import { constructDocument, SAFE_LOAD_VALUES } from './yaml/constructor.ts';
import { YamlError } from './yaml/scanner.ts';

export type ResourceFormat = 'yaml' | 'json';

/**
 * One YAML 1.1 document with PyYAML `safe_load` semantics; `null` for an
 * empty stream. A document in plain block YAML (most resource files) is read
 * by the block-subset reader of @qontract/pycompat, with the same result;
 * anything else, and every error, by the full scanner, composer and
 * constructor (`subset: false` always; the differential tests compare them).
 */
export function pyYamlSafeLoad(text: string, options: { subset?: boolean } = {}): PyValue {
  if (options.subset !== false) {
    const simple = readSubset(text);
    if (simple !== undefined) return simple;
  }
  const node = composeSingleDocument(text);
  return node === null ? null : constructDocument(node);
}

function readSubset(text: string): PyValue | undefined {
  try {
    return readBlockSubset(text, SAFE_LOAD_VALUES);
  } catch {
    // A scalar that does not construct: the full load below reports it.
    return undefined;
  }
}

/**
 * Parses a resource file as the original does, whatever `format` says (it is informational: the
 * original does not look at the file extension either), and removes a top-level `$schema`.
 * Throws `YamlError` for documents PyYAML rejects and `ResourceDataError` when the document is
 * not a mapping.
 */
export function parseResource(text: string, format: ResourceFormat = 'yaml'): PyObject | PyDict {
  void format;
  return resourceFromLoaded(pyYamlSafeLoad(text));
}

/**
 * What `parseResource` makes of a document `pyYamlSafeLoad` loaded (elsewhere:
 * a worker of `loadInWorkers`): the mapping without its top-level `$schema`.
 */
export function resourceFromLoaded(value: PyValue): PyObject | PyDict {
  if (!isDict(value)) {
    throw new ResourceDataError(
      'TypeError',
      `a resource file must hold a mapping, not ${pyTypeName(value)}`,
    );
  }
  dictDelete(value, '$schema');
  return value;
}

export { YamlError };
