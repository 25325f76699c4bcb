/**
 * Value-based redaction: every secret value the run reads is registered here,
 * and every log line passes through `redact` before it is written. Path-based
 * redaction (pino's `redact`) cannot catch a token that ends up inside a
 * message or an error text; this can.
 */
export class SecretRedactor {
  static readonly MASK = '***';
  /** Shorter values are too likely to be ordinary words or numbers to mask. */
  static readonly MIN_LENGTH = 4;

  readonly #values = new Set<string>();
  #pattern: RegExp | null = null;

  /** Registers a secret value, plus its base64 and JSON-escaped forms. */
  add(value: string): void {
    if (value.length < SecretRedactor.MIN_LENGTH) return;
    const forms = [
      value,
      Buffer.from(value, 'utf8').toString('base64'),
      JSON.stringify(value).slice(1, -1),
    ];
    let changed = false;
    for (const form of forms) {
      if (form.length >= SecretRedactor.MIN_LENGTH && !this.#values.has(form)) {
        this.#values.add(form);
        changed = true;
      }
    }
    if (changed) this.#pattern = null;
  }

  get size(): number {
    return this.#values.size;
  }

  redact(text: string): string {
    if (this.#values.size === 0) return text;
    if (this.#pattern === null) {
      // Longest first, so a secret that contains another is masked whole.
      const alternatives = [...this.#values]
        .sort((a, b) => b.length - a.length)
        .map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
      this.#pattern = new RegExp(alternatives.join('|'), 'g');
    }
    return text.replace(this.#pattern, SecretRedactor.MASK);
  }
}
