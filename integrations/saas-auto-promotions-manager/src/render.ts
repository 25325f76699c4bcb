/**
 * The saas-file edit of a promotion (the original's
 * `Renderer.render_merge_request_content`): the subscriber's targets get the
 * desired `ref` and `promotion_data` hashes. Edited on the YAML document
 * (the `yaml` package's Document API, as the original's ruamel round trip)
 * so comments, key order, quoting and the rest of the file stay as they are.
 */
import { QontractError } from '@qontract/core';
import { namespaceSelectedBy } from '@qontract/saas';
import { isMap, isSeq, parseDocument, type YAMLMap, type YAMLSeq } from 'yaml';
import type { Subscriber } from './inventory.ts';

const TARGET_SCHEMA = '/app-sre/saas-file-target-1.yml';

const asMap = (node: unknown): YAMLMap | undefined => (isMap(node) ? node : undefined);
const items = (node: unknown): unknown[] => (isSeq(node) ? (node as YAMLSeq).items : []);
const plain = (node: unknown): unknown =>
  node && typeof node === 'object' && 'toJSON' in node
    ? (node as { toJSON(): unknown }).toJSON()
    : node;

/** A target of the subscriber: its namespace (or selector), `promotion.auto` and the same channels. */
function isSubscriberTarget(s: Subscriber, target: YAMLMap): boolean {
  const selector = plain(target.get('namespaceSelector')) as
    | { jsonPathSelectors?: { include?: string[]; exclude?: string[] | null } }
    | undefined;
  if (selector) {
    if (!selector.jsonPathSelectors) return false;
    if (
      !namespaceSelectedBy(s.namespace, {
        include: selector.jsonPathSelectors.include ?? [],
        exclude: selector.jsonPathSelectors.exclude ?? [],
      })
    ) {
      return false;
    }
  } else if (asMap(target.get('namespace'))?.get('$ref') !== s.namespace.path) {
    return false;
  }
  const promotion = asMap(target.get('promotion'));
  if (!promotion?.get('auto')) return false;
  const subscribed = new Set((plain(promotion.get('subscribe')) as string[] | undefined) ?? []);
  const wanted = new Set(s.channels.map((c) => c.name));
  return subscribed.size === wanted.size && [...wanted].every((c) => subscribed.has(c));
}

/**
 * The file's new text, starting with `---`. Stale promotion data is not
 * removed, as in the original. An unparsable file is a QontractError naming it.
 */
export function renderMergeRequestContent(s: Subscriber, current: string): string {
  const doc = parseDocument(current, { keepSourceTokens: false });
  if (doc.errors.length > 0) {
    throw new QontractError(`${s.targetFilePath}: not valid YAML: ${doc.errors[0]?.message}`);
  }
  const root = asMap(doc.contents);
  if (!root) throw new QontractError(`${s.targetFilePath}: not a YAML mapping`);
  const targets =
    root.get('$schema') === TARGET_SCHEMA
      ? [root]
      : items(root.get('resourceTemplates')).flatMap((rt) =>
          items(asMap(rt)?.get('targets'))
            .map(asMap)
            .filter((t): t is YAMLMap => t !== undefined && isSubscriberTarget(s, t)),
        );
  for (const target of targets) {
    target.set('ref', s.desiredRef);
    const promotion = asMap(target.get('promotion'));
    if (!promotion) continue;
    let data = promotion.get('promotion_data') as YAMLSeq | undefined;
    for (const desired of s.desiredHashes) {
      let applied = false;
      for (const entry of items(data).map(asMap)) {
        if (entry?.get('channel') !== desired.channel) continue;
        for (const d of items(entry.get('data')).map(asMap)) {
          if (d?.get('parent_saas') !== desired.parentSaas) continue;
          d.set('target_config_hash', desired.targetConfigHash);
          applied = true;
        }
      }
      if (!applied) {
        if (!isSeq(data)) {
          data = doc.createNode([]) as YAMLSeq;
          promotion.set('promotion_data', data);
        }
        data.add(
          doc.createNode({
            channel: desired.channel,
            data: [
              {
                parent_saas: desired.parentSaas,
                target_config_hash: desired.targetConfigHash,
                type: 'parent_saas_config',
              },
            ],
          }),
        );
      }
    }
  }
  // The original writes `---` and then the document: one marker, whatever the file had.
  doc.directives.docStart = null;
  // The serializer indents all sequences one way: the file's way (a `key:` line followed
  // by `- ` at the same indentation is the indentless style).
  const indentless = /^( *)[^\s#-][^\n]*:\n\1- /m.test(current);
  return `---\n${doc.toString({ lineWidth: 0, indentSeq: !indentless })}`;
}
