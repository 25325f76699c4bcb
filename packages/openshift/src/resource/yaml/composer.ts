/**
 * PyYAML 6.0.3's parser and composer (MIT licence), folded into one recursive-descent pass that
 * builds the node graph of a single document (`yaml.safe_load` = `get_single_node`). The grammar
 * decisions and the errors are the same as in PyYAML's state machine; see scanner.ts for why this
 * is hand-written.
 */
import { type Mark, type ScalarPart, Scanner, type TokenKind, YamlError } from './scanner.ts';

export const TAG_PREFIX = 'tag:yaml.org,2002:';

export interface ScalarNode {
  readonly kind: 'scalar';
  tag: string;
  readonly parts: ScalarPart[];
  /** The value as text (escaped surrogates fused), for tag resolution and constructors. */
  readonly value: string;
  readonly style: string | null;
  readonly mark: Mark;
}
export interface SequenceNode {
  readonly kind: 'sequence';
  tag: string;
  readonly items: Node[];
  readonly mark: Mark;
}
export interface MappingNode {
  readonly kind: 'mapping';
  tag: string;
  pairs: [Node, Node][];
  readonly mark: Mark;
}
export type Node = ScalarNode | SequenceNode | MappingNode;

const DEFAULT_TAGS: Readonly<Record<string, string>> = { '!': '!', '!!': TAG_PREFIX };

// The implicit resolvers of PyYAML's Resolver, keyed by the first character of the scalar.
const BOOL_RE = /^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/;
const FLOAT_RE =
  /^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;
const INT_RE =
  /^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$/;
const MERGE_RE = /^(?:<<)$/;
const NULL_RE = /^(?:~|null|Null|NULL|)$/;
const TIMESTAMP_RE =
  /^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$/;
const VALUE_RE = /^(?:=)$/;

type Resolver = readonly [string, RegExp];
const RESOLVERS: ReadonlyMap<string, readonly Resolver[]> = resolversByFirstChar([
  ['bool', BOOL_RE, [...'yYnNtTfFoO']],
  ['float', FLOAT_RE, [...'-+0123456789.']],
  ['int', INT_RE, [...'-+0123456789']],
  ['merge', MERGE_RE, ['<']],
  ['null', NULL_RE, ['~', 'n', 'N', '']],
  ['timestamp', TIMESTAMP_RE, [...'0123456789']],
  ['value', VALUE_RE, ['=']],
]);
function resolversByFirstChar(
  resolvers: readonly (readonly [tag: string, re: RegExp, first: readonly string[]])[],
): Map<string, Resolver[]> {
  const byChar = new Map<string, Resolver[]>();
  for (const [tag, re, first] of resolvers) {
    for (const ch of first) {
      const list = byChar.get(ch) ?? [];
      list.push([TAG_PREFIX + tag, re]);
      byChar.set(ch, list);
    }
  }
  return byChar;
}

/** The tag PyYAML's resolver gives a scalar (`implicitPlain`: a plain scalar without a tag). */
export function resolveScalarTag(value: string, implicitPlain: boolean): string {
  if (implicitPlain) {
    const first = value === '' ? '' : (Array.from(value.slice(0, 2))[0] ?? '');
    for (const [tag, re] of RESOLVERS.get(first) ?? []) {
      if (re.test(value)) return tag;
    }
  }
  return `${TAG_PREFIX}str`;
}

/**
 * The scalar's text as one flat string: joined, not concatenated piece by
 * piece, which would keep a rope of every piece alive for as long as the value
 * (a double-quoted JSON string with escaped quotes is dozens of pieces).
 */
function partsToString(parts: ScalarPart[]): string {
  if (parts.length === 1 && typeof parts[0] === 'string') return parts[0];
  return parts
    .map((p) => (typeof p === 'string' ? p : String.fromCodePoint(p.escapedCodePoint)))
    .join('');
}

class Composer {
  private readonly scanner: Scanner;
  private tagHandles: Record<string, string> = { ...DEFAULT_TAGS };
  private anchors = new Map<string, Node>();

  constructor(text: string) {
    this.scanner = new Scanner(text);
  }

  private check(...kinds: TokenKind[]): boolean {
    return this.scanner.checkToken(...kinds);
  }

  private unexpected(context: string, expected: string): YamlError {
    const token = this.scanner.peekToken();
    const where = `line ${token.mark.line + 1}, column ${token.mark.column + 1}`;
    return new YamlError(
      `${context}: expected ${expected}, but found '<${token.kind.toLowerCase()}>' (${where})`,
    );
  }

  composeSingle(): Node | null {
    this.scanner.getToken(); // STREAM-START
    let node: Node | null = null;
    if (!this.check('DIRECTIVE', 'DOCUMENT-START', 'STREAM-END')) {
      this.tagHandles = { ...DEFAULT_TAGS };
      node = this.parseNode(true, false);
      this.endDocument();
      return this.expectStreamEnd(node);
    }
    while (this.check('DOCUMENT-END')) this.scanner.getToken();
    if (this.check('STREAM-END')) return null;
    this.startExplicitDocument();
    if (this.check('DIRECTIVE', 'DOCUMENT-START', 'DOCUMENT-END', 'STREAM-END')) {
      node = this.emptyScalar(this.scanner.peekToken().mark, true, null);
    } else {
      node = this.parseNode(true, false);
    }
    this.endDocument();
    return this.expectStreamEnd(node);
  }

  private startExplicitDocument(): void {
    this.tagHandles = {};
    let versionSeen = false;
    while (this.check('DIRECTIVE')) {
      const token = this.scanner.getToken();
      if (token.kind !== 'DIRECTIVE') break;
      if (token.name === 'YAML' && token.version) {
        if (versionSeen) throw new YamlError('found duplicate YAML directive');
        if (token.version[0] !== 1)
          throw new YamlError('found incompatible YAML document (version 1.* is required)');
        versionSeen = true;
      } else if (token.name === 'TAG' && token.tag) {
        const [handle, prefix] = token.tag;
        if (Object.hasOwn(this.tagHandles, handle))
          throw new YamlError(`duplicate tag handle ${JSON.stringify(handle)}`);
        this.tagHandles[handle] = prefix;
      }
    }
    for (const [handle, prefix] of Object.entries(DEFAULT_TAGS)) {
      if (!Object.hasOwn(this.tagHandles, handle)) this.tagHandles[handle] = prefix;
    }
    if (!this.check('DOCUMENT-START'))
      throw this.unexpected('while parsing a document', "'<document start>'");
    this.scanner.getToken();
  }

  private endDocument(): void {
    if (this.check('DOCUMENT-END')) this.scanner.getToken();
    this.anchors = new Map();
  }

  private expectStreamEnd(node: Node | null): Node | null {
    // PyYAML's parse_document_start: skip '...' tokens, then anything but the stream end is a
    // second document (or a parse error while starting it).
    while (this.check('DOCUMENT-END')) this.scanner.getToken();
    if (!this.check('STREAM-END')) {
      if (this.check('DIRECTIVE', 'DOCUMENT-START')) {
        throw new YamlError('expected a single document in the stream, but found another document');
      }
      throw this.unexpected('while parsing a document', "'<document start>'");
    }
    return node;
  }

  private emptyScalar(mark: Mark, implicit: boolean, tag: string | null): ScalarNode {
    const resolved = tag === null || tag === '!' ? resolveScalarTag('', implicit) : tag;
    return { kind: 'scalar', tag: resolved, parts: [], value: '', style: null, mark };
  }

  private register(anchor: string | null, node: Node): void {
    if (anchor !== null) this.anchors.set(anchor, node);
  }

  private parseNode(block: boolean, indentlessSequence: boolean): Node {
    if (this.check('ALIAS')) {
      const token = this.scanner.getToken();
      const name = token.kind === 'ALIAS' ? token.value : '';
      const target = this.anchors.get(name);
      if (!target) throw new YamlError(`found undefined alias ${JSON.stringify(name)}`);
      return target;
    }
    let anchor: string | null = null;
    let rawTag: { handle: string | null; suffix: string } | null = null;
    let mark: Mark | null = null;
    if (this.check('ANCHOR')) {
      const token = this.scanner.getToken();
      mark = token.mark;
      if (token.kind === 'ANCHOR') anchor = token.value;
      if (this.check('TAG')) {
        const t = this.scanner.getToken();
        if (t.kind === 'TAG') rawTag = t;
      }
    } else if (this.check('TAG')) {
      const t = this.scanner.getToken();
      mark = t.mark;
      if (t.kind === 'TAG') rawTag = t;
      if (this.check('ANCHOR')) {
        const token = this.scanner.getToken();
        if (token.kind === 'ANCHOR') anchor = token.value;
      }
    }
    let tag: string | null = null;
    if (rawTag) {
      if (rawTag.handle !== null) {
        if (!Object.hasOwn(this.tagHandles, rawTag.handle)) {
          throw new YamlError(
            `while parsing a node: found undefined tag handle ${JSON.stringify(rawTag.handle)}`,
          );
        }
        tag = this.tagHandles[rawTag.handle] + rawTag.suffix;
      } else {
        tag = rawTag.suffix;
      }
    }
    if (anchor !== null && this.anchors.has(anchor)) {
      throw new YamlError(`found duplicate anchor ${JSON.stringify(anchor)}`);
    }
    const start = mark ?? this.scanner.peekToken().mark;
    const implicit = tag === null || tag === '!';
    const collectionTag = (fallback: string) =>
      tag === null || tag === '!' ? TAG_PREFIX + fallback : tag;

    if (indentlessSequence && this.check('BLOCK-ENTRY')) {
      const node: SequenceNode = {
        kind: 'sequence',
        tag: collectionTag('seq'),
        items: [],
        mark: start,
      };
      this.register(anchor, node);
      this.parseIndentlessSequence(node);
      return node;
    }
    if (this.check('SCALAR')) {
      const token = this.scanner.getToken();
      if (token.kind !== 'SCALAR') throw new YamlError('internal: scalar expected');
      const value = partsToString(token.parts);
      const plainImplicit = (token.plain && tag === null) || tag === '!';
      const resolved = tag === null || tag === '!' ? resolveScalarTag(value, plainImplicit) : tag;
      const node: ScalarNode = {
        kind: 'scalar',
        tag: resolved,
        parts: token.parts,
        value,
        style: token.style,
        mark: start,
      };
      this.register(anchor, node);
      return node;
    }
    if (this.check('FLOW-SEQUENCE-START')) {
      const node: SequenceNode = {
        kind: 'sequence',
        tag: collectionTag('seq'),
        items: [],
        mark: start,
      };
      this.register(anchor, node);
      this.parseFlowSequence(node);
      return node;
    }
    if (this.check('FLOW-MAPPING-START')) {
      const node: MappingNode = {
        kind: 'mapping',
        tag: collectionTag('map'),
        pairs: [],
        mark: start,
      };
      this.register(anchor, node);
      this.parseFlowMapping(node);
      return node;
    }
    if (block && this.check('BLOCK-SEQUENCE-START')) {
      const node: SequenceNode = {
        kind: 'sequence',
        tag: collectionTag('seq'),
        items: [],
        mark: start,
      };
      this.register(anchor, node);
      this.parseBlockSequence(node);
      return node;
    }
    if (block && this.check('BLOCK-MAPPING-START')) {
      const node: MappingNode = {
        kind: 'mapping',
        tag: collectionTag('map'),
        pairs: [],
        mark: start,
      };
      this.register(anchor, node);
      this.parseBlockMapping(node);
      return node;
    }
    if (anchor !== null || tag !== null) {
      const node = this.emptyScalar(start, implicit, tag);
      this.register(anchor, node);
      return node;
    }
    throw this.unexpected(`while parsing a ${block ? 'block' : 'flow'} node`, 'the node content');
  }

  private parseBlockSequence(node: SequenceNode): void {
    this.scanner.getToken(); // BLOCK-SEQUENCE-START
    for (;;) {
      if (this.check('BLOCK-ENTRY')) {
        const token = this.scanner.getToken();
        if (!this.check('BLOCK-ENTRY', 'BLOCK-END')) node.items.push(this.parseNode(true, false));
        else node.items.push(this.emptyScalar(token.mark, true, null));
        continue;
      }
      if (!this.check('BLOCK-END'))
        throw this.unexpected('while parsing a block collection', '<block end>');
      this.scanner.getToken();
      return;
    }
  }

  private parseIndentlessSequence(node: SequenceNode): void {
    while (this.check('BLOCK-ENTRY')) {
      const token = this.scanner.getToken();
      if (!this.check('BLOCK-ENTRY', 'KEY', 'VALUE', 'BLOCK-END'))
        node.items.push(this.parseNode(true, false));
      else node.items.push(this.emptyScalar(token.mark, true, null));
    }
  }

  private parseBlockMapping(node: MappingNode): void {
    this.scanner.getToken(); // BLOCK-MAPPING-START
    for (;;) {
      if (this.check('KEY')) {
        const token = this.scanner.getToken();
        const key = !this.check('KEY', 'VALUE', 'BLOCK-END')
          ? this.parseNode(true, true)
          : this.emptyScalar(token.mark, true, null);
        let value: Node;
        if (this.check('VALUE')) {
          const vt = this.scanner.getToken();
          value = !this.check('KEY', 'VALUE', 'BLOCK-END')
            ? this.parseNode(true, true)
            : this.emptyScalar(vt.mark, true, null);
        } else {
          value = this.emptyScalar(this.scanner.peekToken().mark, true, null);
        }
        node.pairs.push([key, value]);
        continue;
      }
      if (!this.check('BLOCK-END'))
        throw this.unexpected('while parsing a block mapping', '<block end>');
      this.scanner.getToken();
      return;
    }
  }

  private parseFlowSequence(node: SequenceNode): void {
    this.scanner.getToken(); // FLOW-SEQUENCE-START
    let first = true;
    for (;;) {
      if (!this.check('FLOW-SEQUENCE-END')) {
        if (!first) {
          if (this.check('FLOW-ENTRY')) this.scanner.getToken();
          else throw this.unexpected('while parsing a flow sequence', "',' or ']'");
        }
        first = false;
        if (this.check('KEY')) {
          const start = this.scanner.getToken();
          const pair: MappingNode = {
            kind: 'mapping',
            tag: `${TAG_PREFIX}map`,
            pairs: [],
            mark: start.mark,
          };
          const key = !this.check('VALUE', 'FLOW-ENTRY', 'FLOW-SEQUENCE-END')
            ? this.parseNode(false, false)
            : this.emptyScalar(start.mark, true, null);
          let value: Node;
          if (this.check('VALUE')) {
            const vt = this.scanner.getToken();
            value = !this.check('FLOW-ENTRY', 'FLOW-SEQUENCE-END')
              ? this.parseNode(false, false)
              : this.emptyScalar(vt.mark, true, null);
          } else {
            value = this.emptyScalar(this.scanner.peekToken().mark, true, null);
          }
          pair.pairs.push([key, value]);
          node.items.push(pair);
          continue;
        }
        if (!this.check('FLOW-SEQUENCE-END')) {
          node.items.push(this.parseNode(false, false));
          continue;
        }
      }
      this.scanner.getToken();
      return;
    }
  }

  private parseFlowMapping(node: MappingNode): void {
    this.scanner.getToken(); // FLOW-MAPPING-START
    let first = true;
    for (;;) {
      if (!this.check('FLOW-MAPPING-END')) {
        if (!first) {
          if (this.check('FLOW-ENTRY')) this.scanner.getToken();
          else throw this.unexpected('while parsing a flow mapping', "',' or '}'");
        }
        first = false;
        if (this.check('KEY')) {
          const token = this.scanner.getToken();
          const key = !this.check('VALUE', 'FLOW-ENTRY', 'FLOW-MAPPING-END')
            ? this.parseNode(false, false)
            : this.emptyScalar(token.mark, true, null);
          let value: Node;
          if (this.check('VALUE')) {
            const vt = this.scanner.getToken();
            value = !this.check('FLOW-ENTRY', 'FLOW-MAPPING-END')
              ? this.parseNode(false, false)
              : this.emptyScalar(vt.mark, true, null);
          } else {
            value = this.emptyScalar(this.scanner.peekToken().mark, true, null);
          }
          node.pairs.push([key, value]);
          continue;
        }
        if (!this.check('FLOW-MAPPING-END')) {
          const key = this.parseNode(false, false);
          node.pairs.push([key, this.emptyScalar(this.scanner.peekToken().mark, true, null)]);
          continue;
        }
      }
      this.scanner.getToken();
      return;
    }
  }
}

/** Composes the single document of `text` like PyYAML `safe_load` does; `null` for an empty stream. */
export function composeSingleDocument(text: string): Node | null {
  return new Composer(text).composeSingle();
}
