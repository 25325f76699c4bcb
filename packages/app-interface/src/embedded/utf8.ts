/**
 * Strict UTF-8 decoding of the files of an app-interface checkout. The bundler
 * decodes every data file, JSON schema, resource and the GraphQL schema as
 * UTF-8 and fails on the first invalid byte (Python's UnicodeDecodeError), so
 * the embedded engine does the same, and says where the byte is.
 */

// ignoreBOM keeps a leading BOM in the text, as Python's `bytes.decode('utf-8')` does.
const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The first byte that is not part of a valid UTF-8 sequence, and where it is. */
export class Utf8DecodeError extends Error {
  readonly byte: number;
  /** 0-based byte offset in the file. */
  readonly offset: number;
  /** 1-based line and column (in characters) of the byte. */
  readonly line: number;
  readonly column: number;
  constructor(byte: number, offset: number, line: number, column: number) {
    super(
      `invalid byte 0x${byte.toString(16).padStart(2, '0')} at byte offset ${offset} (line ${line}, column ${column})`,
    );
    this.name = 'Utf8DecodeError';
    this.byte = byte;
    this.offset = offset;
    this.line = line;
    this.column = column;
  }
}

/** Decodes `raw` as UTF-8; throws `Utf8DecodeError` at the first invalid byte. */
export function decodeUtf8(raw: Uint8Array): string {
  try {
    return strict.decode(raw);
  } catch {
    throw locateInvalidByte(raw);
  }
}

/**
 * Node's decoders say only that the input is invalid, not where. The lenient
 * decoding replaces each invalid sequence with U+FFFD; everything before the
 * first replacement that is not a literal U+FFFD (EF BF BD) in the input is
 * valid, so byte offsets up to there are exact.
 */
function locateInvalidByte(raw: Uint8Array): Utf8DecodeError {
  const text = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8');
  let offset = 0;
  let line = 1;
  let column = 1;
  for (const ch of text) {
    const isLiteralReplacement =
      raw[offset] === 0xef && raw[offset + 1] === 0xbf && raw[offset + 2] === 0xbd;
    if (ch === '\uFFFD' && !isLiteralReplacement) break;
    offset += utf8Length(ch.codePointAt(0)!);
    if (ch === '\n') {
      line += 1;
      column = 1;
    } else {
      column += 1;
    }
  }
  return new Utf8DecodeError(raw[offset] ?? 0, offset, line, column);
}

function utf8Length(codePoint: number): number {
  if (codePoint < 0x80) return 1;
  if (codePoint < 0x800) return 2;
  if (codePoint < 0x10000) return 3;
  return 4;
}
